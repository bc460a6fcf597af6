"""The CACHE_INVALIDATE notices a replay counts, as a DES server sends them to its host: for
what its expiry sweep frees, a content change, and another object's PUT that evicts or
reclaims a lease; not for what the host's own PUT replaces, its close or the window's end."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nnrpsim.engine.replay import replay
from nnrpsim.engine.replay.bursts import PutBursts
from nnrpsim.engine.replay.result import LeaseSpans, SpanLog
from nnrpsim.engine.stream import ReferenceStream

PATHS = [  # (capacity, policy): the closed grids, the ordered map, the lease table's path
    (None, "lru"),
    (100, "lru"),
    (100, "fifo"),
    (100, "ttl"),
    (100, "size"),
]


def test_a_lease_is_announced_by_its_sweep_or_by_what_tells_before_it():
    """Sweeps every 100 ms in a window to 300: (a) runs out at 130, swept at 200; (b) runs
    out at 130, put again by its host at 170, before the sweep: no notice; (c) ended at 150
    by a content change; (d) evicted at 120 by another object's PUT; (e) runs out at 250,
    swept at the window's end, before the sessions cut there close; (f) runs out at 250 and
    is closed at 290: no notice; (g) swept at 100, before the cut at 150."""
    spans = LeaseSpans(
        np.arange(7),
        np.zeros(7, dtype=np.int64),
        np.array([130, 130, 300, 400, 250, 250, 50]),
        np.array([1_000, 170, 150, 120, 300, 290, 300]),
        np.full(7, 10),
        np.array([False, False, True, False, False, False, False]),
        np.array([False, False, True, True, False, False, False]),
    )
    assert spans.notices(100, 0) == 5
    assert spans.notices(100, 120) == 4  # (g)'s at 100 is before the cut
    assert spans.notices(100, 121) == 3  # and (d)'s at 120 too
    # without flags of its own, a span freed first in its millisecond (a change) tells
    assert replace(spans, told=None).notices(100, 0) == 4


def test_a_burst_announces_what_it_freed_but_what_it_puts_again_and_holds():
    """A burst's PUT of 5 evicts 7, which the burst puts again and holds: 7's host is not
    told. 8's PUT evicts 9, then evicts 9's lease again: told once. Where 7 is its
    connection's and 5 its session's, they go in two bursts: 7 is told of."""
    for owned, told in ((None, [False, True, False]), ([0, 0, 0, 0, 0, 0, 0, 1, 0, 0], None)):
        log = SpanLog()
        bursts = PutBursts(log, None if owned is None else np.array(owned, dtype=bool))
        bursts.put(5, 0)
        evicted_seven = log.book(7, 0, 100, 10, 1)
        bursts.ended(evicted_seven, 7, True)
        bursts.granted(5)
        bursts.put(7, 0)
        bursts.granted(7)
        bursts.put(8, 0)
        bursts.ended(log.book(9, 0, 100, 10, 1), 9, True)
        bursts.ended(log.book(9, 0, 100, 10, 1), 9, True)
        bursts.granted(8)
        bursts.put(1, 1)  # (the next frame: the burst is in)
        spans = log.spans()
        if told is not None:
            assert spans.told.tolist() == told
        else:
            assert spans.told[0]  # 7, in a burst of its own


def test_a_lease_its_host_puts_again_is_not_announced_one_it_inlines_is():
    """A run-out lease ended for its host's PUT in frame 3: that PUT replaces it, untold;
    where the body went inline instead (the next PUT is another object's, or its own in a
    later frame, or none comes), the host is told."""
    for then, told in (((4, 3), False), ((5, 3), True), ((4, 6), True), (None, True)):
        log = SpanLog()
        bursts = PutBursts(log, None)
        bursts.replacing(log.book(4, 0, 50, 100, 1), 4, 3)
        if then is not None:
            bursts.put(*then)
        bursts.end()
        assert log.spans().told.tolist() == [told], then


def _stream(refs: list[tuple[int, list[int]]], end_ms: int, **columns) -> ReferenceStream:
    """A stream of operations ``(time, objects)``, each object 10 bytes."""
    times = [t for t, objects in refs for _ in objects]
    objects = [o for _, objs in refs for o in objs]
    operations = [k for k, (_, objs) in enumerate(refs) for _ in objs]
    return ReferenceStream(
        times,
        objects,
        [10] * len(objects),
        start_ms=0,
        end_ms=end_ms,
        operation=operations,
        **columns,
    )


@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_every_path_announces_a_lease_swept_not_one_its_host_puts_again(capacity, policy):
    """Object 0, put at 0 for 50 ms, runs out at 50 and is put again at 100. Swept every
    1,000 ms, it is not announced (its host's PUT replaced it); every 80, the sweep at 80
    announces it, and the one at 160 the second lease, at the window's end too."""
    for end_ms, sweep_ms, cut, notices in (
        (200, 1_000, None, 0),
        (200, 80, None, 2),
        (160, 80, None, 2),
        (159, 80, None, 1),
        (200, 80, 90, 1),
    ):
        stream = _stream([(0, [0]), (100, [0])], end_ms)
        result = replay(
            stream, [50], "non_reset", capacity, policy, True, from_ms=cut, sweep_ms=sweep_ms
        )
        assert result.notices.tolist() == [notices], (end_ms, sweep_ms, cut)


@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_a_sweep_a_fraction_of_a_millisecond_in_frees_on_the_millisecond_after(capacity, policy):
    """Swept every 2.5 ms, 0's lease (put at 0 for 51 ms) is freed by the sweep at 52.5, on
    millisecond 53 (the protocol's clock, rounded up), and announced; so is the second
    lease's, put at 100, by the sweep at 152.5. Held 53 ms each: 5.3 bytes on average."""
    stream = _stream([(0, [0]), (100, [0])], 200)
    times = np.array([52, 53, 152, 153])
    result = replay(
        stream, [51], "non_reset", capacity, policy, True, sample_times=times, sweep_ms=2.5
    )
    assert result.notices.tolist() == [2]
    assert result.held_samples[0].tolist() == [10, 0, 10, 0]
    assert result.mean_held_bytes[0] == pytest.approx(5.3)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_a_lease_its_host_put_again_stays_untold_when_the_object_changes_later(
    mode, capacity, policy
):
    """As above, swept every 1,000 ms, and object 0 changes at 150 (first in its
    millisecond): that change ends the second lease, and is announced; the first, which its
    host's PUT at 100 replaced, is neither announced nor gone before the sample at 100."""
    stream = _stream(
        [(0, [0]), (100, [0])], 200, invalidation_time_ms=[150], invalidation_object_id=[0]
    )
    times = np.array([99, 100, 101, 149, 150])
    result = replay(stream, [50], mode, capacity, policy, True, sample_times=times, sweep_ms=1_000)
    assert result.notices.tolist() == [1]
    assert result.held_samples[0].tolist() == [10, 10, 10, 10, 0]


@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
def test_a_put_announces_what_it_evicts(policy):
    """Room for two: object 2's PUT at 100 evicts one of the two live leases."""
    stream = _stream([(0, [0]), (1, [1]), (100, [2])], 200)
    result = replay(stream, [1_000], "non_reset", 20, policy, True, sweep_ms=1_000)
    assert (result.evictions.tolist(), result.notices.tolist()) == ([1], [1])


@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
def test_a_burst_announces_the_run_out_leases_it_reclaims_but_those_it_puts(policy):
    """Room for two: 0 and 1 run out at 50 and 51, held (the sweep comes at 1,000). The
    operation at 100 puts 2, then 0: 2's PUT falls short and reclaims both. The burst puts
    0 itself, so only 1 is announced; where 0 is its connection's and 2 its session's, 0
    goes in a burst of its own after 2's, and is announced too."""
    for owned, notices in ((None, 1), ([True, False, False], 2)):
        connection_owned = None if owned is None else np.array(owned)
        stream = _stream(
            [(0, [0]), (1, [1]), (100, [2, 0])], 200, connection_owned=connection_owned
        )
        result = replay(stream, [50], "non_reset", 20, policy, True, sweep_ms=1_000)
        assert (result.evictions.tolist(), result.notices.tolist()) == ([0], [notices])


@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
def test_a_run_out_lease_the_burst_puts_again_is_unannounced_though_the_put_is_refused(policy):
    """As above, with 0 grown to 30 bytes, more than the 20 there are: 2's PUT reclaims 0
    and 1, and 0's PUT is refused. The burst put 0 itself all the same, so only 1 is
    announced (announcing 0 too, as an evicted lease no later PUT holds again, made 2)."""
    stream = ReferenceStream(
        [0, 1, 100, 100], [0, 1, 2, 0], [10, 10, 10, 30], end_ms=200, operation=[0, 1, 2, 2]
    )
    result = replay(stream, [50], "non_reset", 20, policy, True, sweep_ms=1_000)
    assert (result.rejected.tolist(), result.notices.tolist()) == ([1], [1])


@pytest.mark.parametrize("owned", [[True], [1, 0], [[True, False]]])
def test_a_stream_s_owners_are_a_flag_for_every_object(owned):
    with pytest.raises(ValueError, match=r"^connection_owned must give every object id a"):
        _stream([(0, [0, 1])], 10, connection_owned=owned)
    given = _stream([(0, [0, 1])], 10, connection_owned=[True, False]).connection_owned
    assert given.tolist() == [True, False]
