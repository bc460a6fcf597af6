"""Replay: the vectorised TTL sweep and the capacity paths agree with the lease table."""

from __future__ import annotations

from dataclasses import fields, replace
from itertools import islice

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.engine import CacheLimits, columns
from nnrpsim.engine.replay import COUNTS, ReplayResult, replay, replay_after, replay_on_table
from nnrpsim.engine.stream import ReferenceStream
from tests.conftest import traced_peak

GRID = [0, 1, 7, 50, 200, 1000, 100_000]


def _stream(seed: int, invalidations: bool, along: float = 0.0) -> ReferenceStream:
    """``along``: the share of references made along (to the first few objects, as sources)."""
    rng = np.random.default_rng(seed)
    n, n_objects = 2500, 40
    times = np.cumsum(rng.integers(0, 20, n))
    objs = rng.integers(0, n_objects, n)
    made_along = rng.random(n) < along
    objs[made_along] %= 4
    sizes = rng.integers(1, 100, n_objects)[objs]
    inv_t = rng.integers(0, times[-1], 120 if invalidations else 0)
    inv_t[:10] = times[rng.integers(0, n, len(inv_t[:10]))]  # some on a reference's millisecond
    inv_o = rng.integers(0, n_objects, len(inv_t))
    return ReferenceStream(times, objs, sizes, inv_t, inv_o, along=made_along if along else None)


def _counts_of(result: ReplayResult, run: int = 0) -> dict[str, int]:
    """The counts of one run of a replay, as the lease table's replay gives them."""
    return {k: int(getattr(result, k)[run]) for k in COUNTS}


def _table_counts(table: dict) -> dict[str, int]:
    return {k: table[k] for k in COUNTS}


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("invalidations", [False, True])
def test_vectorised_ttl_grid_equals_the_lease_table(mode, invalidations):
    stream = _stream(11, invalidations)
    result = replay(stream, GRID, mode, per_object=True)
    for i, ttl in enumerate(GRID):
        table = replay_on_table(stream, ttl, mode, CacheLimits())
        assert _counts_of(result, i) == _table_counts(table)
        assert result.object_hits[i].tolist() == table["object_hits"].tolist()
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])
    assert (result.hits[1:] >= result.hits[:-1]).all()  # a longer TTL never hits less
    assert replay(stream, GRID, mode).object_hits is None  # only when asked


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
@pytest.mark.parametrize("capacity", [300, 1500])
def test_capacity_replay_equals_the_lease_table(mode, policy, capacity):
    stream = _stream(5, invalidations=True)
    grid = [0, 50, 1000, 100_000]
    result = replay(stream, grid, mode, capacity_bytes=capacity, policy=policy, per_object=True)
    assert result.evicted_misses.sum() > 0
    for i, ttl in enumerate(grid):
        table = replay_on_table(
            stream, ttl, mode, CacheLimits(capacity_bytes=capacity, eviction=policy)
        )
        assert _counts_of(result, i) == _table_counts(table)
        assert result.object_hits[i].tolist() == table["object_hits"].tolist()
        assert result.object_rejected[i].tolist() == table["object_rejected"].tolist()
        # live bytes too (for LRU and FIFO the ordered path integrates them on its own)
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])
        assert result.mean_live_bytes[i] == pytest.approx(table["mean_live_bytes"])
    np.testing.assert_array_equal(result.object_hits.sum(axis=1), result.hits)
    np.testing.assert_array_equal(result.object_rejected.sum(axis=1), result.rejected)
    np.testing.assert_allclose(result.object_live_bytes.sum(axis=1), result.mean_live_bytes)


@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
def test_an_object_the_capacitys_size_evicts_everything_and_fits(policy):
    """Only an object larger than the capacity is refused: B, 100 bytes in 100, evicts A and
    is installed (hit at 2); C, 101 bytes, is refused (inline at 3, and again at 4)."""
    stream = ReferenceStream([0, 1, 2, 3, 4], [0, 1, 1, 2, 2], [50, 100, 100, 101, 101], end_ms=10)
    result = replay(stream, [1_000], "reset", 100, policy, per_object=True)
    assert (result.installs[0], result.evictions[0], result.rejected[0]) == (2, 1, 2)
    assert result.object_hits.tolist() == [[0, 1, 0]]
    table = replay_on_table(
        stream, 1_000, "reset", CacheLimits(capacity_bytes=100, eviction=policy)
    )
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
def test_live_bytes_of_the_vectorised_sweep_equal_the_event_by_event_path(mode):
    stream = _stream(3, invalidations=True)
    sweep = replay(stream, GRID, mode, per_object=True)
    unbounded = replay(stream, GRID, mode, capacity_bytes=10**12, policy="lru", per_object=True)
    np.testing.assert_allclose(sweep.mean_live_bytes, unbounded.mean_live_bytes)
    assert (sweep.hits == unbounded.hits).all()
    # object by object too, and they add up to the totals
    np.testing.assert_allclose(sweep.object_live_bytes, unbounded.object_live_bytes)
    np.testing.assert_allclose(sweep.object_live_bytes.sum(axis=1), sweep.mean_live_bytes)
    np.testing.assert_array_equal(sweep.object_hits, unbounded.object_hits)


@pytest.mark.parametrize("spread", [1, 10**12])
def test_a_replay_holds_one_int_object_for_each_object(spread):
    """The stream's object ids as the replays and a trace's plan hold them: each id's int
    once (ids spread far beyond the references' count too), where one int a reference held
    32 bytes apiece."""
    ids = np.random.default_rng(3).integers(0, 50, 2000) * spread + 300
    stream = ReferenceStream(np.arange(2000), ids, np.ones(2000, dtype=np.int64))
    listed = stream.object_id_list()
    assert listed == ids.tolist()
    assert len({id(obj) for obj in listed}) == len(set(listed)) == len(np.unique(ids))


def test_a_capacity_replay_reads_its_invalidations_a_chunk_at_a_time():
    """A million invalidations (a session's close of as many objects) were five whole lists
    of Python numbers at the LRU replay's peak, 101 MiB traced; a chunk at a time, 18."""
    rng = np.random.default_rng(1)
    times, n = np.arange(0, 2000, 10), 1_000_000
    stream = ReferenceStream(
        times,
        np.arange(len(times)) % 50,
        np.full(len(times), 100),
        np.sort(rng.integers(0, 2000, n)),
        rng.integers(0, 5000, n),
    )
    assert traced_peak(lambda: replay(stream, [500], capacity_bytes=1000, policy="lru")) < 40 << 20


def test_a_replay_on_the_table_reads_its_columns_a_chunk_at_a_time(monkeypatch):
    """The replay on the lease table (eviction by TTL or size, none, an entry limit) made
    whole lists of seven columns: 40 bytes a reference of a long stream at its peak (6.3 MiB
    traced for these 30,000 references); a chunk at a time, 0.8."""
    monkeypatch.setattr(columns, "CHUNK", 512)  # (the default's chunks would hide the test's)
    n = 30_000
    times = np.repeat(np.arange(n // 2) * 7 + 10**9, 2)
    objects = np.random.default_rng(2).integers(0, 100, n)
    operations = np.arange(n) // 2 + 10**6
    stream = ReferenceStream(times, objects, objects * 1000 + 300, operation=operations)
    assert (
        traced_peak(lambda: replay(stream, [500], capacity_bytes=20_000, policy="size")) < 2 << 20
    )


def test_the_lru_replay_makes_no_column_of_ttls_where_every_reference_asks_for_one(
    monkeypatch,
):
    """A column of the one TTL, 8 bytes a reference, was held for the whole replay: 27.5
    bytes a reference at its peak, now 19.5."""
    monkeypatch.setattr(columns, "CHUNK", 512)  # (as above)
    n = 30_000
    objects = np.random.default_rng(2).integers(0, 100, n)
    stream = ReferenceStream(np.arange(n) * 3 + 10**9, objects, objects * 1000 + 300)
    assert (
        traced_peak(lambda: replay(stream, [500], capacity_bytes=20_000, policy="lru")) < 23.5 * n
    )


def test_a_replay_that_never_falls_short_holds_only_the_leases_no_sweep_has_freed(monkeypatch):
    """An ordered replay kept each lease run out until its object came back or the stream
    ended, where no shortfall reclaims (the Mooncake trace 16 times over, 700,000 objects:
    232 MiB more at its peak, with a list per object where a dict was). Its sweeps free them,
    the DES's way: 431 bytes an object at the peak of these 30,000 objects, each referenced
    once, then 335."""
    monkeypatch.setattr(columns, "CHUNK", 512)  # (as above)
    n = 30_000
    stream = ReferenceStream(np.arange(n) * 10, np.arange(n), np.full(n, 3000))

    def sequential_replay():  # (unlimited, renewed before the end: the ordered map's)
        return replay(stream, [500], "reset", per_object=True, renew_margin=0.5, sweep_ms=1000)

    assert traced_peak(sequential_replay) < 380 * n


@pytest.mark.parametrize(
    ("capacity", "policy"), [(1500, "lru"), (1500, "fifo"), (1500, "size"), (None, "lru")]
)
def test_columns_read_a_few_references_at_a_time_replay_alike(monkeypatch, capacity, policy):
    """The sequential replays read their columns and invalidations a chunk at a time: chunks
    of a few references, their edges within operations, replay as whole columns do."""
    rng = np.random.default_rng(5)
    base = _stream(5, invalidations=True, along=0.1)
    operation = np.unique(base.time_ms, return_inverse=True)[1]
    objects, n = base.object_id, len(base)
    source = np.full(n, -1)
    same = (operation[1:] == operation[:-1]) & (rng.random(n - 1) < 0.3)
    source[1:][same] = objects[:-1][same]
    stream = replace(
        base,
        operation=operation,
        ttl_scale=rng.choice([0.5, 1.0, 2.0], n),
        frame_source=source,
        invalidation_kept=rng.random(len(base.invalidation_time_ms)) < 0.2,
    )
    kwargs = {
        "capacity_bytes": capacity,
        "policy": policy,
        "per_object": True,
        "renew_margin": 0.5,
        "inline_after_invalidate": True,
        "refused_backoff_ms": 30,
        "max_cache_entries": 0 if capacity else 6,
    }
    whole = replay(stream, [50, 400], "reset", **kwargs)
    monkeypatch.setattr(columns, "CHUNK", 7)
    chunked = replay(stream, [50, 400], "reset", **kwargs)
    for field in fields(whole):
        np.testing.assert_array_equal(
            getattr(chunked, field.name), getattr(whole, field.name), field.name
        )
    assert whole.hits.sum() > 0 and whole.evictions.sum() > 0


def test_bad_arguments():
    stream = _stream(1, False)
    with pytest.raises(ValueError, match="mode"):
        replay(stream, [1], "sometimes")
    with pytest.raises(ValueError, match="ttl_grid"):
        replay(stream, [-1])
    with pytest.raises(ValueError, match="unknown eviction policy"):
        replay(stream, [1], capacity_bytes=10, policy="mru")
    with pytest.raises(ValueError, match="non-decreasing"):
        ReferenceStream([2, 1], [0, 0], [1, 1])
    with pytest.raises(ValueError, match="invalidation times and objects must be >= 0"):
        ReferenceStream([1], [0], [1], [2], [-1])
    with pytest.raises(ValueError, match="equal lengths"):
        ReferenceStream([1, 2], [0], [1, 1])
    with pytest.raises(ValueError, match="time_ms and object_id must be >= 0"):
        ReferenceStream([1], [-1], [1])
    with pytest.raises(ValueError, match="size must be >= 0"):
        ReferenceStream([1], [0], [-1])
    with pytest.raises(ValueError, match="give both"):
        ReferenceStream([1], [0], [1], [2])
    with pytest.raises(ValueError, match="invalidation arrays must have equal lengths"):
        ReferenceStream([1], [0], [1], [2, 3], [0])
    with pytest.raises(ValueError, match="end_ms must be after start_ms"):
        ReferenceStream([1], [0], [1], start_ms=5, end_ms=5)
    with pytest.raises(ValueError, match="one operation must share a time"):
        ReferenceStream([1, 2], [0, 1], [1, 1], operation=[5, 5])
    with pytest.raises(ValueError, match="one value per reference"):
        ReferenceStream([1, 2], [0, 1], [1, 1], operation=[5])
    with pytest.raises(ValueError, match="renew_margin"):
        replay(stream, [1], renew_margin=0)
    with pytest.raises(ValueError, match="renew_margin"):
        replay(stream, [1], capacity_bytes=10, policy="ttl", renew_margin=1.5)
    with pytest.raises(ValueError, match="along must be one boolean per reference"):
        ReferenceStream([1, 2], [0, 1], [1, 1], along=[1, 0])
    with pytest.raises(ValueError, match="ttl_scale must be one finite factor > 0"):
        ReferenceStream([1, 2], [0, 1], [1, 1], ttl_scale=[1.0, 0.0])
    with pytest.raises(ValueError, match="frame_source must be one object id"):
        ReferenceStream([1, 2], [0, 1], [1, 1], frame_source=[-1])
    with pytest.raises(ValueError, match="refused_backoff_ms must be >= 0"):
        replay(stream, [1], capacity_bytes=10, refused_backoff_ms=-1)
    with pytest.raises(ValueError, match="invalidation_position must place each"):
        ReferenceStream([1, 2, 2], [0, 1, 0], [1] * 3, [2], [0], invalidation_position=[0])
    with pytest.raises(ValueError, match="invalidation_position must place each"):
        ReferenceStream([1, 2], [0, 1], [1, 1], [2, 2], [0, 1], invalidation_position=[1])
    with pytest.raises(ValueError, match="invalidation_within must be one boolean per"):
        ReferenceStream([1, 2], [0, 1], [1, 1], [2, 2], [0, 1], invalidation_within=[True])
    with pytest.raises(ValueError, match="invalidation_within must be one boolean per"):
        ReferenceStream([1], [0], [1], [2], [0], invalidation_within=[1])
    with pytest.raises(ValueError, match="invalidation_kept must be one boolean per inval"):
        ReferenceStream([1], [0], [1], [2], [0], invalidation_kept=[True, False])
    with pytest.raises(ValueError, match="invalidation_through must be one object id"):
        ReferenceStream([1], [0], [1], [2], [0], invalidation_through=[-2])
    for times in ([1.5], [[1, 2]], [np.nan], ["1"]):
        with pytest.raises(ValueError, match=r"^sample_times must be a list of whole millis"):
            replay(stream, [1], per_object=True, sample_times=times)
    with pytest.raises(ValueError, match=r"^sample_times must be non-decreasing"):
        replay(stream, [1], per_object=True, sample_times=[5, 4])
    with pytest.raises(ValueError, match="object_kind must give every object id a kind"):
        ReferenceStream([1, 2], [0, 1], [1, 1], object_kind=[1])


@pytest.mark.parametrize("capacity", [None, 300])
def test_sample_times_in_whole_milliseconds_of_floats_sample_as_integers_do(capacity):
    """(Floats, as a notebook's ``np.linspace`` makes them, once failed deep in the replay
    with numpy's casting error.)"""
    stream, times = _stream(3, True), [100, 900, 900, 2_000]
    kwargs = {"capacity_bytes": capacity, "per_object": True, "sweep_ms": 7}
    ints = replay(stream, [50], sample_times=np.array(times), **kwargs)
    floats = replay(stream, [50], sample_times=np.array(times, dtype=float), **kwargs)
    for name in ("live_samples", "held_samples", "live_means", "held_means"):
        np.testing.assert_array_equal(getattr(floats, name), getattr(ints, name), name)
    assert ints.live_samples.any()


def test_which_invalidations_come_within_their_millisecond_follow_them():
    """Sorted with the invalidations, cut with them, and kept with every one."""
    stream = ReferenceStream(
        [1, 5, 9], [0, 1, 0], [1] * 3, [7, 3, 8], [0, 1, 1], invalidation_within=[True, False, True]
    )
    assert stream.invalidation_time_ms.tolist() == [3, 7, 8]
    assert stream.within_mask.tolist() == [False, True, True]
    assert stream.before(8).within_mask.tolist() == [False, True]
    kept = stream.references(np.array([True, False, True]))
    assert kept.within_mask.tolist() == [False, True, True]
    assert ReferenceStream([1], [0], [1], [2], [0]).within_mask.tolist() == [False]


def test_operations_group_consecutive_references_and_survive_a_cut():
    stream = ReferenceStream(
        [1, 1, 1, 4, 4, 9], [0, 1, 2, 0, 3, 1], [1] * 6, operation=[7, 7, 8, 2, 2, 7]
    )
    assert stream.operation_bounds().tolist() == [0, 2, 3, 5, 6]
    assert stream.before(5).operation_bounds().tolist() == [0, 2, 3, 5]
    assert ReferenceStream([1, 1], [0, 1], [1, 1]).operation_bounds().tolist() == [0, 1, 2]
    assert ReferenceStream([], [], []).operation_bounds().tolist() == [0]
    # what a replay's frame steps through: where each operation after the first begins
    assert list(stream.operation_starts()) == [2, 3, 5, 6]
    assert list(islice(ReferenceStream([1, 1], [0, 1], [1, 1]).operation_starts(), 2)) == [1, 2]


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_capacity_replay_without_expiry_or_invalidation_counts_causes_like_the_table(policy):
    base = _stream(8, invalidations=False)  # and a TTL beyond the stream: the untracked path
    sizes = np.where(base.object_id == 3, 700, base.size)  # one object never fits
    stream = ReferenceStream(base.time_ms, base.object_id, sizes)
    ttl = 2**32 - 1
    result = replay(stream, [ttl], "non_reset", capacity_bytes=600, policy=policy, per_object=True)
    table = replay_on_table(
        stream, ttl, "non_reset", CacheLimits(capacity_bytes=600, eviction=policy)
    )
    assert result.evicted_misses[0] > 0 and result.rejected[0] > 1
    assert np.flatnonzero(result.object_rejected[0]).tolist() == [3]  # every use of it
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("capacity", [None, 100])
def test_an_empty_stream_replays_to_zeros(mode, capacity):
    empty = ReferenceStream(
        np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), [5], [0], 0, 10
    )
    result = replay(empty, GRID, mode, capacity_bytes=capacity, per_object=True)
    for name in COUNTS:
        assert (getattr(result, name) == 0).all(), name
    assert (result.mean_live_bytes == 0).all()
    per_object = (result.object_hits, result.object_live_bytes, result.object_rejected)
    assert all(column.shape == (len(GRID), 1) and not column.any() for column in per_object)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (100, "lru"), (100, "ttl")])
def test_invalidations_of_objects_never_referenced(mode, capacity, policy):
    """A policy may inline every reference to an object whose content still changes."""
    stream = ReferenceStream([1, 4, 9], [0, 0, 0], [10, 10, 10], [2, 3], [7, 0], 0, 12)
    assert stream.n_objects == 8
    result = replay(stream, [100], mode, capacity_bytes=capacity, policy=policy)
    assert (result.hits[0], result.invalidated_misses[0]) == (1, 1)


def test_before_keeps_the_window_of_a_longer_stream():
    stream = ReferenceStream([0, 5, 9, 12], [0, 1, 0, 1], [1, 2, 1, 2], [4, 10], [1, 0])
    window = stream.before(10)
    assert window.time_ms.tolist() == [0, 5, 9] and window.object_id.tolist() == [0, 1, 0]
    assert window.invalidation_time_ms.tolist() == [4] and window.end_ms == 10
    assert stream.before(100) is stream


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
def test_the_peak_of_live_bytes_is_the_budget_that_never_evicts(mode):
    """Every path finds the same peak; with it as the capacity nothing is evicted and every
    hit of unlimited memory stays, while a byte less evicts (on this stream, at every TTL)."""
    stream = _stream(5, invalidations=True)
    grid = [50, 1000, 100_000]
    unlimited = replay(stream, grid, mode, per_object=True)
    for i, ttl in enumerate(grid):
        peak = int(unlimited.peak_live_bytes[i])
        table = replay_on_table(stream, ttl, mode, CacheLimits())
        ordered = replay(stream, [ttl], mode, capacity_bytes=10**12, policy="lru", per_object=True)
        assert peak == table["peak_live_bytes"] == ordered.peak_live_bytes[0] > 0
        enough = replay(stream, [ttl], mode, capacity_bytes=peak, per_object=True)
        assert enough.hits[0] == unlimited.hits[i] and enough.evicted_misses[0] == 0
        assert enough.peak_live_bytes[0] == peak
        assert replay(stream, [ttl], mode, capacity_bytes=peak - 1).evicted_misses[0] > 0


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 9)), max_size=12
    )
)
def test_the_peak_is_the_most_live_at_any_millisecond(spans):
    from nnrpsim.engine.replay.result import peak_live

    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    ends = starts + np.array([n for _, n, _ in spans], dtype=np.int64)
    sizes = np.array([b for _, _, b in spans], dtype=np.int64)
    at_each = [int(sizes[(starts <= t) & (t < ends)].sum()) for t in range(72)]
    assert peak_live(starts, ends, sizes) == max(at_each)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(
    ("capacity", "policy"), [(None, "lru"), (10**6, "lru"), (10**6, "fifo"), (10**6, "ttl")]
)
def test_a_reference_made_along_installs_a_missing_lease_and_does_nothing_else(
    mode, capacity, policy
):
    """The source of a dependent, TTL 100: installed along at 0, hit at 50 (in reset mode
    renewed to 150), in place at 60, installed along again at 200 (expired), in place at
    250 (no renewal: it still ends at 300), then missed at 320 as expired."""
    stream = ReferenceStream(
        [0, 50, 60, 200, 250, 320],
        [0] * 6,
        [10] * 6,
        end_ms=400,
        along=np.array([True, False, True, True, True, False]),
    )
    result = replay(stream, [100], mode, capacity, policy, per_object=True)
    reset = mode == "reset"
    assert result.references == 2
    assert result.counts() == {
        "hits": [1],
        "cold_misses": [0],
        "expired_misses": [1],
        "invalidated_misses": [0],
        "evicted_misses": [0],
        "installs": [1],
        "renewals": [int(reset)],
        "renewal_bytes": [10 * reset],
        "rejected": [0],
        "evictions": [0],
        "hit_bytes": [10],
        "install_bytes": [10],
        "along_puts": [2],
        "along_put_bytes": [20],
        "along_rejected": [0],
        "inlined_after_invalidate": [0],
        "inlined_bytes": [0],
        "backed_off": [0],
        "backed_off_bytes": [0],
    }
    assert result.object_hits.tolist() == [[1]]
    # live [0, 150) or [0, 100), [200, 300), [320, 400)
    live_ms = (150 if reset else 100) + 100 + 80
    assert result.mean_live_bytes.tolist() == [10 * live_ms / 400]
    assert result.peak_live_bytes.tolist() == [10]


@pytest.mark.parametrize("policy", ["lru", "none"])
def test_a_reference_made_along_that_cannot_fit_is_refused_and_not_counted(policy):
    """Refused at 0, the source is not counted; what it is made for (at 0 too) cannot be
    referenced without it: its host has put it in the same burst all the same (a lease, a PUT
    no reference follows), and its body goes inline, as after an invalidation. At 5 the
    source is made along for nothing (no reference follows at 5), and at 6 object 1 hits the
    lease it was put at 0."""
    stream = ReferenceStream(
        [0, 0, 5, 6], [0, 1, 0, 1], [500, 10, 500, 10], end_ms=10, along=[True, False] * 2
    )
    result = replay(stream, [100], "reset", 100, policy, per_object=True)
    assert (result.along_puts[0], result.along_rejected[0], result.rejected[0]) == (3, 2, 0)
    assert result.object_rejected.tolist() == [[0, 0]]
    assert result.object_inlined.tolist() == [[0, 1]]
    assert (result.inlined_after_invalidate[0], result.inlined_bytes[0]) == (1, 10)
    assert (result.references, result.invalidated_misses[0], result.cold_misses[0]) == (2, 1, 0)
    assert (result.installs[0], result.hits[0]) == (0, 1)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_backing_off_replays_alike_on_every_path(mode, policy):
    """Two sources (made along) and an object referenced on its own never fit: the ordered
    path and the lease table refuse them alike, back off alike, and send alike inline what
    is made from a source refused or backed off from."""
    base = _stream(7, invalidations=True, along=0.2)
    sizes = np.where(np.isin(base.object_id, [1, 3, 20]), 800, base.size)
    stream = replace(base, size=sizes)
    grid = [50, 1000, 100_000]
    result = replay(stream, grid, mode, 700, policy, per_object=True, refused_backoff_ms=200)
    assert (result.rejected > 0).all() and (result.along_rejected > 0).all()
    assert (result.backed_off > 0).all()
    assert (result.inlined_after_invalidate > 0).all()  # after a refused source
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=700, eviction=policy)
        table = replay_on_table(stream, ttl, mode, limits, refused_backoff_ms=200)
        assert _counts_of(result, i) == _table_counts(table)
        assert result.object_hits[i].tolist() == table["object_hits"].tolist()
        assert result.object_inlined[i].tolist() == table["object_inlined"].tolist()
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (10**6, "lru"), (10**6, "fifo")])
def test_an_entry_limit_evicts_as_the_table_does(capacity, policy):
    """Two entries: C's install at 2 evicts A (least recent, or first in), so A misses at 3;
    without the limit A hits."""
    stream = ReferenceStream([0, 1, 2, 3], [0, 1, 2, 0], [10] * 4, end_ms=10)
    limited = replay(stream, [100], "reset", capacity, policy, max_cache_entries=2)
    plain = replay(stream, [100], "reset", capacity, policy)
    assert (limited.hits[0], limited.evicted_misses[0], limited.installs[0]) == (0, 1, 4)
    assert (plain.hits[0], plain.installs[0]) == (1, 3)


@pytest.mark.parametrize("capacity", [None, 10**6])
def test_a_renewal_that_extends_never_shortens_a_lease(capacity):
    """A lease granted for 1000 ms at 0, renewed at 100 by a reference asking 200 ms: a touch
    ends it at 300, so the use at 500 misses; extending keeps it to 1000, and it hits."""
    stream = ReferenceStream(
        [0, 100, 500], [0, 0, 0], [10] * 3, end_ms=1_000, ttl_scale=[1.0, 0.2, 1.0]
    )
    touch = replay(stream, [1000], "reset", capacity)
    extend = replay(stream, [1000], "reset", capacity, renewal="extend")
    assert (touch.hits[0], touch.expired_misses[0]) == (1, 1)
    assert (extend.hits[0], extend.expired_misses[0]) == (2, 0)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    backoff=st.integers(1, 400),
    inline_once=st.booleans(),
    mode=st.sampled_from(["reset", "non_reset"]),
    policy=st.sampled_from(["lru", "fifo"]),
)
def test_any_back_off_replays_alike_on_every_path(seed, backoff, inline_once, mode, policy):
    """Random streams with references made along, invalidations and objects that never fit:
    whatever the back-off, the ordered path counts what the lease table counts."""
    base = _stream(seed, invalidations=True, along=0.2)
    too_big = np.random.default_rng(seed).integers(0, 40, 3)
    stream = replace(base, size=np.where(np.isin(base.object_id, too_big), 800, base.size))
    result = replay(
        stream,
        [100],
        mode,
        700,
        policy,
        per_object=True,
        inline_after_invalidate=inline_once,
        refused_backoff_ms=backoff,
    )
    limits = CacheLimits(capacity_bytes=700, eviction=policy)
    table = replay_on_table(stream, 100, mode, limits, 1.0, inline_once, backoff)
    assert _counts_of(result) == _table_counts(table)
    assert result.object_inlined[0].tolist() == table["object_inlined"].tolist()
    assert result.object_hits[0].tolist() == table["object_hits"].tolist()


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (10**6, "fifo"), (10**6, "ttl")])
@pytest.mark.parametrize("named", [True, False])
def test_what_a_frame_makes_from_a_source_it_sends_inline_goes_inline_too(capacity, policy, named):
    """Object 1 is made from 0, and the frames at 0, 10 and 20 reference both. 0's lease
    ends under its host at 5: at 10 its body goes inline (its turn), and so does 1's, though
    1's lease is live. 0 is put again at 12 and its lease ends at 15: the frame at 20 names 1
    first, and its host knows 0 will go inline. Without ``frame_source`` the replay does not
    know 1 relies on 0, and 1 hits (and renews) twice."""
    stream = ReferenceStream(
        [0, 0, 10, 10, 12, 20, 20],
        [0, 1, 0, 1, 0, 1, 0],
        [10] * 7,
        [5, 15],
        [0, 0],
        end_ms=100,
        frame_source=[-1, 0, -1, 0, -1, 0, -1] if named else None,
    )
    result = replay(
        stream, [100], "reset", capacity, policy, per_object=True, inline_after_invalidate=True
    )
    assert result.installs[0] == 3
    assert (result.hits[0], result.inlined_after_invalidate[0]) == ((0, 4) if named else (2, 2))
    assert result.object_inlined.tolist() == ([[2, 2]] if named else [[2, 0]])
    assert result.renewals[0] == (0 if named else 2)  # named, 1's lease is left untouched


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (10**6, "fifo"), (10**6, "ttl")])
def test_a_source_another_frame_of_the_same_millisecond_sent_inline_holds_back_nothing(
    capacity, policy
):
    """Two sessions' frames in one millisecond: 0's lease ended under its host at 5, and the
    first frame at 10 sends 0's body inline (its turn). The second puts 0 again and 1, made
    from it, with it: what the first frame sent inline is not the second's affair."""
    stream = ReferenceStream(
        [0, 10, 10, 10],
        [0, 0, 0, 1],
        [10] * 4,
        [5],
        [0],
        end_ms=100,
        operation=[0, 1, 2, 2],
        frame_source=[-1, -1, -1, 0],
    )
    result = replay(
        stream, [100], "reset", capacity, policy, per_object=True, inline_after_invalidate=True
    )
    assert (result.installs[0], result.inlined_after_invalidate[0]) == (3, 1)
    assert result.object_inlined.tolist() == [[1, 0]]
    limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
    table = replay_on_table(stream, 100, "reset", limits, inline_after_invalidate=True)
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize(
    ("capacity", "policy", "renewal"),
    [
        (None, "lru", "touch"),
        (10**6, "fifo", "touch"),
        (10**6, "ttl", "touch"),
        (None, "lru", "extend"),
    ],
)
def test_a_stale_lease_sent_inline_stays_until_its_own_change_is_announced(
    capacity, policy, renewal
):
    """Object 1 is made from 0; frames at 0, 10, 20 and 30 reference both. At 5, 0 changes
    (announced) and with it 1 (kept: 1's lease stays, stale). At 10, 0 takes its inline turn
    and 1 goes inline with it, so no new version of 1 replaces its lease. At 15, 1 changes
    itself: its lease is still there, so the change is announced, and at 20 1 takes its inline
    turn (0 is put again); at 30 0 hits and 1 is put. Replacing the stale lease at 10 would
    leave nothing to announce at 15, and 1 would be put at 20."""
    stream = ReferenceStream(
        [0, 0, 10, 10, 20, 20, 30, 30],
        [0, 1] * 4,
        [10] * 8,
        [5, 5, 15],
        [0, 1, 1],
        end_ms=100,
        invalidation_kept=np.array([False, True, False]),
        invalidation_through=np.array([-1, 0, -1]),
        frame_source=[-1, 0] * 4,
    )
    result = replay(
        stream,
        [100],
        "reset",
        capacity,
        policy,
        per_object=True,
        inline_after_invalidate=True,
        renewal=renewal,
    )
    assert (result.installs[0], result.hits[0], result.inlined_after_invalidate[0]) == (4, 1, 3)
    assert result.object_inlined.tolist() == [[1, 2]]


@pytest.mark.parametrize("policy", ["lru", "fifo", "none"])
def test_a_source_refused_for_one_frame_is_put_once(policy):
    """A frame references 1 and 2, both made from 0, which never fits: the host puts 0 once
    (refused) and, in the same burst, 1 and 2 (two PUTs no reference follows), and both go
    inline; at 5 the next frame puts 0 again, and 1, whose lease holds, goes inline
    untouched."""
    stream = ReferenceStream(
        [0, 0, 0, 0, 5, 5],
        [0, 1, 0, 2, 0, 1],
        [500, 10, 500, 10, 500, 10],
        end_ms=10,
        along=np.array([True, False, True, False, True, False]),
    )
    result = replay(stream, [100], "reset", 100, policy, per_object=True)
    assert (result.along_puts[0], result.along_rejected[0]) == (4, 2)
    assert (result.inlined_after_invalidate[0], result.renewals[0]) == (3, 0)
    assert result.object_inlined.tolist() == [[0, 2, 1]]


@pytest.mark.parametrize("policy", ["lru", "fifo"])
@pytest.mark.parametrize(("size", "put"), [(100, True), (101, False)])
def test_what_a_refused_source_makes_is_put_all_the_same_where_it_just_fits(policy, size, put):
    """1 is made from 0, which never fits in 100 bytes: 0 is put along and refused, and 1
    goes inline. Its host puts 1 all the same where it fits, at 100 bytes exactly too (a PUT
    no reference follows); at 101, 1's own PUT is refused."""
    stream = ReferenceStream([0, 0], [0, 1], [500, size], end_ms=10, along=np.array([1, 0], bool))
    result = replay(stream, [100], "reset", 100, policy, per_object=True)
    assert (result.along_puts[0], result.rejected[0]) == ((2, 0) if put else (1, 1))
    assert result.object_inlined.tolist() == [[0, int(put)]]
    table = replay_on_table(stream, 100, "reset", CacheLimits(capacity_bytes=100, eviction=policy))
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize("policy", ["lru", "fifo"])
@pytest.mark.parametrize("operation", [[0, 0, 0], None])
def test_a_chain_made_from_a_refused_source_goes_inline_charged_as_invalidated(policy, operation):
    """One frame: 1 is made from 0, 2 from 1. 0 never fits in 100 bytes: refused (a cold
    miss), and 1 goes inline, put all the same; 2 goes inline with it. Both inline misses are
    charged to invalidation, as the lease table's replay charges them. Without operations
    (a millisecond's references one frame), these misses were once left to the count made at
    the end for a replay with nothing to end a lease but evictions: 3 cold and -2 evicted."""
    stream = ReferenceStream(
        [0, 0, 0], [0, 1, 2], [500, 10, 10], end_ms=10, operation=operation, frame_source=[-1, 0, 1]
    )
    result = replay(stream, [100], "reset", 100, policy, per_object=True)
    misses = (result.cold_misses[0], result.invalidated_misses[0], result.evicted_misses[0])
    assert misses == (1, 2, 0)
    assert (result.rejected[0], result.along_puts[0]) == (1, 1)
    assert result.object_inlined.tolist() == [[0, 1, 1]]
    table = replay_on_table(stream, 100, "reset", CacheLimits(capacity_bytes=100, eviction=policy))
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize("policy", ["lru", "fifo", "none"])
def test_no_source_is_put_along_for_an_object_its_host_backs_off_from(policy):
    """Object 1 (500 bytes, never fits in 100) is made from 0. At 0 the source is put along
    and 1 is refused: its host backs off until 250. At 150 the source's lease has run out,
    but 1 goes inline without a PUT, so the source is not put either; at 300 both are put
    again (1 refused again)."""
    stream = ReferenceStream(
        [0, 0, 150, 150, 300, 300],
        [0, 1] * 3,
        [10, 500] * 3,
        end_ms=400,
        along=np.array([True, False] * 3),
    )
    result = replay(stream, [100], "reset", 100, policy, refused_backoff_ms=250)
    assert (result.along_puts[0], result.rejected[0], result.backed_off[0]) == (2, 2, 1)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("policy", ["lru", "fifo", "none", "ttl"])
def test_a_refused_object_goes_inline_without_a_put_while_its_host_backs_off(mode, policy):
    """Object 0 (500 bytes) never fits in 100. Refused at 0, its host backs off for 250 ms:
    no PUT of it at 100 and 200, its body inline. Object 2 is made from it: installed at 10,
    then at 30 and 130 its source, backing off, is not put along, so 2 goes inline too, its
    lease untouched. At 260 the source is put along and refused (back-off until 510): 2
    goes inline as after an invalidation; later uses back off again. Without the back-off
    every use of 0 is a refused PUT, and every use of 2 follows a refused PUT of 0."""
    objs = [0, 2, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0]
    stream = ReferenceStream(
        [0, 10, 30, 30, 100, 130, 130, 200, 260, 260, 300, 330, 330, 400],
        objs,
        [500 if obj == 0 else 10 for obj in objs],
        end_ms=500,
        along=np.array([0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0], dtype=bool),
    )
    backing = replay(stream, [1000], mode, 100, policy, per_object=True, refused_backoff_ms=250)
    plain = replay(stream, [1000], mode, 100, policy, per_object=True)
    assert backing.references == plain.references == 10
    assert (backing.rejected[0], backing.along_puts[0], backing.along_rejected[0]) == (1, 1, 1)
    # 0 at 100, 200, 300 and 400; 2 at 30, 130 and 330
    assert (backing.backed_off[0], backing.backed_off_bytes[0]) == (7, 4 * 500 + 3 * 10)
    assert (backing.inlined_after_invalidate[0], backing.inlined_bytes[0]) == (1, 10)  # at 260
    assert (backing.cold_misses[0], backing.invalidated_misses[0]) == (9, 1)
    assert (backing.installs[0], backing.hits[0], backing.renewals[0]) == (1, 0, 0)
    assert backing.object_inlined.tolist() == [[4, 0, 4]]
    assert backing.object_rejected.tolist() == [[1, 0, 0]]
    assert (plain.rejected[0], plain.along_puts[0], plain.along_rejected[0]) == (5, 4, 4)
    assert (plain.backed_off[0], plain.inlined_after_invalidate[0]) == (0, 4)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "fifo")])
def test_references_made_along_replay_alike_on_every_path(mode, capacity, policy):
    """The ordered path (which also replays along references without a capacity) against the
    lease table, and neither counts an along reference."""
    stream = _stream(7, invalidations=True, along=0.2)
    grid = [0, 50, 1000, 100_000]
    result = replay(stream, grid, mode, capacity, policy, per_object=True)
    counted = ~stream.along
    assert result.references == int(counted.sum())
    assert (result.along_puts > 0).all()
    if capacity:
        assert (result.evicted_misses[2:] > 0).all()
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
        table = replay_on_table(stream, ttl, mode, limits)
        assert _counts_of(result, i) == _table_counts(table)
        assert result.object_hits[i].tolist() == table["object_hits"].tolist()
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])
        misses = sum(
            int(getattr(result, k)[i])
            for k in ("cold_misses", "expired_misses", "invalidated_misses", "evicted_misses")
        )
        assert int(result.hits[i]) + misses == result.references
        assert int(result.hit_bytes[i] + result.install_bytes[i]) == int(stream.size[counted].sum())
    # made along, the sources' leases are in place more often than their own references ask
    plain = ReferenceStream(
        stream.time_ms[counted],
        stream.object_id[counted],
        stream.size[counted],
        stream.invalidation_time_ms,
        stream.invalidation_object_id,
        stream.start_ms,
        stream.end_ms,
    )
    without = replay(plain, grid, mode, capacity, policy, per_object=True)
    sources = slice(0, 4)
    assert (
        result.object_hits[:, sources].sum(axis=1) >= without.object_hits[:, sources].sum(axis=1)
    ).all()
    assert (result.object_hits[1:, sources] > without.object_hits[1:, sources]).any()


@pytest.mark.parametrize(
    ("capacity", "policy"), [(None, "lru"), (10**6, "lru"), (10**6, "fifo"), (10**6, "ttl")]
)
def test_with_a_renewal_margin_only_a_hit_near_the_expiry_renews(capacity, policy):
    """TTL 100, margin 0.2: installed at 0; a hit at 50 is too early to renew, one at 85
    renews to 185; a hit at 150 is again too early, and at 190 the lease has run out."""
    stream = ReferenceStream([0, 50, 85, 150, 190], [0] * 5, [10] * 5, end_ms=300)
    result = replay(stream, [100], "reset", capacity, policy, per_object=True, renew_margin=0.2)
    counts = {k: v[0] for k, v in result.counts().items()}
    assert (counts["hits"], counts["renewals"], counts["renewal_bytes"]) == (3, 1, 10)
    assert (counts["cold_misses"], counts["expired_misses"], counts["installs"]) == (1, 1, 2)
    assert result.mean_live_bytes.tolist() == [10 * (185 + 100) / 300]  # [0, 185), [190, 290)


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "fifo")])
def test_a_renewal_margin_replays_alike_on_every_path(capacity, policy):
    stream = _stream(13, invalidations=True, along=0.1)
    grid = [0, 50, 1000, 100_000]
    result = replay(stream, grid, "reset", capacity, policy, per_object=True, renew_margin=0.3)
    assert 0 < result.renewals[1] < result.hits[1] and (result.renewals <= result.hits).all()
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
        table = replay_on_table(stream, ttl, "reset", limits, renew_margin=0.3)
        assert _counts_of(result, i) == _table_counts(table)
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])


@pytest.mark.parametrize("invalidations", [False, True])
def test_a_wider_renewal_margin_never_hits_less(invalidations):
    """A renewal only ever moves an expiry later, so renewing on more hits keeps every lease
    at least as long: from non_reset (no renewal) through margins to reset (every hit)."""
    stream = _stream(17, invalidations)
    grid = [5, 50, 200, 1000]
    hits = [replay(stream, grid, "non_reset").hits]
    for margin in (0.05, 0.3, 0.7, 1.0):
        hits.append(replay(stream, grid, "reset", renew_margin=margin).hits)
    hits = np.array(hits)
    assert (np.diff(hits, axis=0) >= 0).all()
    assert (hits[-1, 1:] > hits[2, 1:]).all() and (hits[2, 1:] > hits[0, 1:]).all()


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (10**6, "fifo"), (10**6, "ttl")])
def test_each_reference_asks_for_its_own_ttl(mode, capacity, policy):
    """TTL 100 scaled by 0.5 for the first reference: its lease ends at 50, so the reference
    at 60 misses (it would hit at the replay's TTL), and reinstalls for 1.5 x 100 = 150."""
    stream = ReferenceStream([0, 60, 200], [0] * 3, [10] * 3, end_ms=400, ttl_scale=[0.5, 1.5, 1])
    result = replay(stream, [100], mode, capacity, policy, per_object=True)
    assert (result.hits[0], result.expired_misses[0], result.installs[0]) == (1, 1, 2)
    # [0, 50), then [60, 210) (in reset mode renewed at 200 for 100: to 300)
    live_ms = 50 + (240 if mode == "reset" else 150)
    assert result.mean_live_bytes.tolist() == [10 * live_ms / 400]


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "fifo")])
def test_ttls_of_their_own_replay_alike_on_every_path(mode, capacity, policy):
    stream = _stream(19, invalidations=True, along=0.1)
    scale = np.random.default_rng(3).choice([0.25, 1.0, 3.0], len(stream))
    scaled = replace(stream, ttl_scale=scale)
    grid = [50, 1000]
    result = replay(scaled, grid, mode, capacity, policy, per_object=True, renew_margin=0.5)
    plain = replay(stream, grid, mode, capacity, policy, per_object=True, renew_margin=0.5)
    assert (result.hits != plain.hits).all()
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
        table = replay_on_table(scaled, ttl, mode, limits, renew_margin=0.5)
        assert _counts_of(result, i) == _table_counts(table)
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])
    # a factor of 1 for every reference is the replay's own TTL, on the vectorised path too
    ones = replay(replace(stream, along=None, ttl_scale=np.ones(len(stream))), grid, mode)
    assert ones.counts() == replay(replace(stream, along=None), grid, mode).counts()


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(
    ("capacity", "policy"), [(None, "lru"), (10**6, "lru"), (10**6, "fifo"), (10**6, "ttl")]
)
def test_after_an_invalidation_the_next_reference_goes_inline_once(mode, capacity, policy):
    """TTL 100. Object 0: installed at 0, hit at 10, invalidated at 15; at 20 its body goes
    inline (a miss, no install), at 30 it is installed again, at 40 it hits. Object 1 runs
    out at 100 (expiry tells the host nothing): at 150 it is simply installed again."""
    stream = ReferenceStream(
        [0, 0, 10, 20, 30, 40, 150], [0, 1, 0, 0, 0, 0, 1], [10, 7, 10, 10, 10, 10, 7], [15], [0]
    )
    result = replay(stream, [100], mode, capacity, policy, True, inline_after_invalidate=True)
    counts = {k: v[0] for k, v in result.counts().items()}
    assert (counts["hits"], counts["installs"], counts["inlined_after_invalidate"]) == (2, 4, 1)
    assert (counts["invalidated_misses"], counts["expired_misses"]) == (2, 1)
    assert (counts["inlined_bytes"], counts["hit_bytes"]) == (10, 20)
    assert result.object_inlined.tolist() == [[1, 0]]
    assert result.object_hits.tolist() == [[2, 0]]
    plain = replay(stream, [100], mode, capacity, policy, True)
    assert (plain.hits[0], plain.installs[0], plain.inlined_after_invalidate[0]) == (3, 4, 0)


@pytest.mark.parametrize("policy", ["lru", "ttl"])
def test_after_an_eviction_the_next_reference_goes_inline_once(policy):
    """Room for one of two 60-byte objects: each install evicts the other, whose next
    reference then goes inline; the one after installs (and evicts) again."""
    stream = ReferenceStream([0, 5, 10, 20, 25, 30], [0, 1, 0, 0, 1, 1], [60] * 6, end_ms=40)
    result = replay(stream, [1000], "reset", 100, policy, True, inline_after_invalidate=True)
    counts = {k: v[0] for k, v in result.counts().items()}
    assert (counts["installs"], counts["inlined_after_invalidate"]) == (4, 2)
    assert (counts["cold_misses"], counts["evicted_misses"], counts["hits"]) == (2, 4, 0)
    assert result.object_inlined.tolist() == [[1, 1]]


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "fifo")])
def test_inlining_after_invalidations_replays_alike_on_every_path(mode, capacity, policy):
    stream = _stream(23, invalidations=True, along=0.1)
    grid = [50, 1000, 100_000]
    result = replay(stream, grid, mode, capacity, policy, True, inline_after_invalidate=True)
    assert (result.inlined_after_invalidate[1:] > 0).all()
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
        table = replay_on_table(stream, ttl, mode, limits, inline_after_invalidate=True)
        assert _counts_of(result, i) == _table_counts(table)
        assert result.object_inlined[i].tolist() == table["object_inlined"].tolist()
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "ttl")])
def test_replay_after_counts_the_references_from_its_cut_on(capacity, policy):
    """Cut at a reference's millisecond: the references counted are those from the cut on,
    and the per-object figures add up to the totals."""
    stream = _stream(29, invalidations=True, along=0.1)
    cut = int(stream.time_ms[len(stream) // 2])
    args = ([50, 1000], "reset", capacity, policy, True)
    after = replay_after(stream, cut, *args, renew_margin=0.5, inline_after_invalidate=True)
    whole = replay(stream, *args, renew_margin=0.5, inline_after_invalidate=True)
    early = replay(stream.before(cut), *args, renew_margin=0.5, inline_after_invalidate=True)
    late = (stream.time_ms >= cut) & ~stream.along
    assert after.references == int(late.sum()) == whole.references - early.references
    assert (after.hits == whole.hits - early.hits).all() and (after.hits > 0).all()
    assert (after.object_hits.sum(axis=1) == after.hits).all()
    np.testing.assert_allclose(after.object_live_bytes.sum(axis=1), after.mean_live_bytes)
    window = stream.end_ms - stream.start_ms
    np.testing.assert_allclose(
        after.mean_live_bytes * (stream.end_ms - cut)
        + early.mean_live_bytes * (cut - stream.start_ms),
        whole.mean_live_bytes * window,
    )
    assert replay_after(stream, stream.start_ms, *args).counts() == replay(stream, *args).counts()
    with pytest.raises(ValueError, match="before the stream's end"):
        replay_after(stream, stream.end_ms, *args)


def test_nothing_live_after_the_cut_is_no_bytes_not_fewer():
    """A lease that ended before the cut leaves no live bytes after it: exactly none, though
    the two windows' totals, rounded apart, differ by a few units in the last place."""
    stream = ReferenceStream([0], [0], [123], end_ms=30_000)
    after = replay_after(stream, 5_000, [2_000], per_object=True)
    assert after.mean_live_bytes.tolist() == [0.0]
    assert after.object_live_bytes.tolist() == [[0.0]]


def test_replay_after_counts_objects_first_named_after_its_cut():
    stream = ReferenceStream([0, 5, 20, 25], [0, 0, 1, 1], [10, 10, 30, 30], end_ms=40)
    after = replay_after(stream, 10, [100], per_object=True)
    assert after.object_hits.tolist() == [[0, 1]] and after.references == 2
    assert after.mean_live_bytes.tolist() == [(10 * 30 + 30 * 20) / 30]  # [10, 40), [20, 40)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (700, "lru"), (700, "fifo")])
@pytest.mark.parametrize("inline_once", [True, False])
def test_kept_and_cascaded_changes_replay_alike_on_every_path(mode, capacity, policy, inline_once):
    """Objects 20-39 are made from objects 0-3: a change of a source comes with changes of
    what was made from it, through the source's lease; half of those are kept instead (no
    cascade). A kept change leaves a stale lease, which the next reference replaces."""
    base = _stream(31, invalidations=True)
    sources = base.invalidation_object_id < 4
    made = np.flatnonzero(sources)
    times = np.concatenate([base.invalidation_time_ms, base.invalidation_time_ms[made]])
    objects = np.concatenate(
        [base.invalidation_object_id, 20 + 5 * base.invalidation_object_id[made]]
    )
    through = np.concatenate(
        [np.full(len(base.invalidation_time_ms), -1), base.invalidation_object_id[made]]
    )
    kept = np.concatenate(
        [np.zeros(len(base.invalidation_time_ms), bool), np.arange(len(made)) % 2 == 0]
    )
    stream = replace(
        base,
        invalidation_time_ms=times,
        invalidation_object_id=objects,
        invalidation_kept=kept,
        invalidation_through=through,
    )
    grid = [50, 1000, 100_000]
    args = (grid, mode, capacity, policy, True)
    result = replay(stream, *args, renew_margin=0.5, inline_after_invalidate=inline_once)
    announced = replay(
        replace(stream, invalidation_kept=None, invalidation_through=None),
        *args,
        renew_margin=0.5,
        inline_after_invalidate=True,
    )
    assert (result.inlined_after_invalidate < announced.inlined_after_invalidate).any()
    for i, ttl in enumerate(grid):
        limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
        table = replay_on_table(stream, ttl, mode, limits, 0.5, inline_once)
        assert _counts_of(result, i) == _table_counts(table)
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])


@pytest.mark.parametrize(("policy", "one_by_one_hits"), [("lru", [1, 0, 0]), ("ttl", [1, 1, 0])])
def test_a_frames_puts_may_evict_what_the_frame_was_to_reference(policy, one_by_one_hits):
    """A and B hold 200 of 250 bytes when one frame references A and puts C. A DES host
    decides the frame's references before it sends its PUTs, and the server touches A only
    when the frame reaches it: so C's PUT evicts A (the least recent; under ``ttl`` the
    soonest to run out), and the host, told, sends A's body inline. B, untouched, hits at 3.
    Taken reference by reference, A would hit, and then C evict B (``lru``) or A after its
    hit (``ttl``). Both paths agree."""
    stream = ReferenceStream(
        [0, 1, 2, 2, 3], [0, 1, 0, 2, 1], [100] * 5, end_ms=10, operation=[0, 1, 2, 2, 3]
    )
    result = replay(stream, [100], "non_reset", 250, policy, per_object=True)
    assert result.object_hits.tolist() == [[0, 1, 0]]
    assert (result.inlined_after_invalidate[0], result.evicted_misses[0]) == (1, 1)
    table = replay_on_table(
        stream, 100, "non_reset", CacheLimits(capacity_bytes=250, eviction=policy)
    )
    assert _counts_of(result) == _table_counts(table)
    one_by_one = replay(replace(stream, operation=None), [100], "non_reset", 250, policy, True)
    assert one_by_one.object_hits.tolist() == [one_by_one_hits]


@pytest.mark.parametrize("policy", ["lru", "size"])
def test_a_frame_is_decided_before_its_puts_end_anything(policy):
    """One frame puts S (100 bytes), X (200) and O (10, made from S) into 250 bytes. The host
    decides all three before the burst, so it puts O too; X's PUT then evicts S, and the host,
    told, sends S's body and O's (whose source is gone) inline: two PUTs no reference
    follows. Deciding O after X's PUT, with S's eviction already told, would have sent O
    inline without a PUT."""
    stream = ReferenceStream(
        [0, 0, 0],
        [0, 1, 2],
        [100, 200, 10],
        end_ms=10,
        operation=[0, 0, 0],
        frame_source=[-1, -1, 0],
    )
    args = ([100], "non_reset", 250, policy, True)
    result = replay(stream, *args, inline_after_invalidate=True)
    assert (result.installs[0], result.along_puts[0], result.inlined_after_invalidate[0]) == (
        1,
        2,
        2,
    )
    assert result.object_inlined.tolist() == [[1, 0, 1]]
    limits = CacheLimits(capacity_bytes=250, eviction=policy)
    table = replay_on_table(stream, 100, "non_reset", limits, inline_after_invalidate=True)
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize(("mode", "last_hits"), [("non_reset", 0), ("reset", 1)])
def test_a_frames_leases_are_touched_as_the_server_resolves_them(mode, last_hits):
    """A (0) is put at 0; the frame at 1 puts B (1) and references A, filling the 200 bytes.
    The server resolves the frame's hits, then what it installed, then renews: without
    renewals A is the least recent after the frame, though its reference came after B's PUT,
    and C's PUT at 2 evicts it (A misses at 3); renewed last (``reset``: every use), A is the
    most recent and C evicts B (A hits at 3). The DES's server does the same
    (tests/model/test_against_replay.py)."""
    stream = ReferenceStream(
        [0, 1, 1, 2, 3], [0, 1, 0, 2, 0], [100] * 5, end_ms=10, operation=[0, 1, 1, 2, 3]
    )
    result = replay(stream, [1_000], mode, 200, "lru", per_object=True)
    assert result.object_hits.tolist() == [[1 + last_hits, 0, 0]]
    table = replay_on_table(stream, 1_000, mode, CacheLimits(capacity_bytes=200, eviction="lru"))
    assert _counts_of(result) == _table_counts(table)


def _positioned() -> ReferenceStream:
    """Objects 0 and 1 (100 bytes each) put at 0; at 10, 0 is referenced, then its lease ends
    (its session closes), then 2 is put: the invalidation is placed among the references of
    its millisecond, after the first."""
    return ReferenceStream(
        [0, 0, 10, 10, 20],
        [0, 1, 0, 2, 1],
        [100] * 5,
        [10],
        [0],
        end_ms=100,
        invalidation_position=[3],
    )


@pytest.mark.parametrize("policy", ["lru", "fifo", "size"])
def test_an_invalidation_comes_where_it_is_placed_within_its_millisecond(policy):
    """0's reference at 10 comes before its lease ends, and hits; 2's PUT after it fits in
    what 0's end freed, so 1 is still there at 20. Before every reference of the millisecond
    (the default), 0's reference would miss and its new lease take the room."""
    stream = _positioned()
    limits = CacheLimits(capacity_bytes=200, eviction=policy)
    result = replay(stream, [1_000], "reset", 200, policy, per_object=True)
    table = replay_on_table(stream, 1_000, "reset", limits)
    assert (result.hits[0], result.installs[0]) == (2, 3)
    assert _counts_of(result) == _table_counts(table)
    assert result.object_hits.tolist() == [[1, 1, 0]]
    early = replay(replace(stream, invalidation_position=None), [1_000], "reset", 200, policy)
    assert (early.hits[0], early.installs[0]) == (0, 5)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
def test_the_closed_sweeps_place_an_invalidation_as_the_sequential_rules_do(mode):
    grid = [5, 15, 1_000]
    closed = replay(_positioned(), grid, mode, per_object=True)
    for k, ttl in enumerate(grid):
        table = replay_on_table(_positioned(), ttl, mode, CacheLimits(capacity_bytes=None))
        assert _counts_of(closed, k) == _table_counts(table)
        assert closed.mean_live_bytes[k] == pytest.approx(table["mean_live_bytes"])
    assert closed.hits.tolist() == [0, 1, 2]


def test_a_streams_references_keep_each_invalidations_place_among_them():
    stream = _positioned()
    assert stream.references(
        np.array([True, False, True, True, True])
    ).invalidation_position.tolist() == [2]
    assert stream.before(15).invalidation_position.tolist() == [3]
    assert replace(stream, invalidation_position=None).invalidation_positions().tolist() == [2]


@pytest.mark.parametrize(("capacity", "policy"), [(None, "lru"), (10**6, "lru"), (10**6, "ttl")])
def test_an_invalidation_after_the_last_reference_ends_its_lease_too(capacity, policy):
    stream = ReferenceStream([0], [0], [100], [50], [0], end_ms=100)
    result = replay(stream, [1_000], "reset", capacity, policy, per_object=True)
    assert result.mean_live_bytes[0] == 50.0
    assert result.object_live_bytes.tolist() == [[50.0]]


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_a_lease_put_again_later_in_the_burst_that_evicted_it_is_not_told_of(policy):
    """0's lease is stale after a kept change at 5. The frame at 10 puts 2, which evicts it,
    then 0's new version, which evicts 1: the DES host reads the eviction's notice before
    the new lease's CACHE_ACK and ignores it. So when the new lease has run out, at 500, 0
    is put again, not sent inline as if the server had ended it under its host."""
    stream = ReferenceStream(
        [0, 0, 10, 10, 500],
        [0, 1, 2, 0, 0],
        [100] * 5,
        [5],
        [0],
        end_ms=1_000,
        operation=[0, 1, 2, 2, 3],
        invalidation_kept=np.array([True]),
    )
    result = replay(
        stream, [100], "reset", 200, policy, per_object=True, inline_after_invalidate=True
    )
    assert (result.installs[0], result.inlined_after_invalidate[0]) == (5, 0)
    limits = CacheLimits(capacity_bytes=200, eviction=policy)
    table = replay_on_table(stream, 100, "reset", limits, inline_after_invalidate=True)
    assert _counts_of(result) == _table_counts(table)


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_a_hit_whose_source_put_along_is_gone_when_its_frame_resolves_goes_inline(policy):
    """1 is put at 0 (20 bytes of room). The frame at 1 puts its source 0 along, for a TTL
    that rounds to 0 ms, references 1 (live) and puts 2, whose PUT reclaims 0, run out: 1's
    source is gone when the server resolves the frame, so its body goes inline, charged to
    invalidation, as on the lease table."""
    stream = ReferenceStream(
        [0, 1, 1, 1],
        [1, 0, 1, 2],
        [10] * 4,
        end_ms=10,
        operation=[0, 1, 1, 1],
        along=np.array([0, 1, 0, 0], bool),
        ttl_scale=[1, 0.001, 1, 1],
    )
    result = replay(stream, [100], "non_reset", 20, policy, per_object=True)
    assert (result.hits[0], result.invalidated_misses[0]) == (0, 1)
    assert result.object_inlined.tolist() == [[0, 1, 0]]
    limits = CacheLimits(capacity_bytes=20, eviction=policy, max_cache_entries=100)
    table = replay_on_table(stream, 100, "non_reset", limits)
    assert _counts_of(result) == _table_counts(table)


def test_a_refused_put_of_a_source_made_along_leaves_its_inline_turn_to_come():
    """0's lease ends under its host at 5 (its next reference goes inline, spec section 14).
    At 20 the host puts 0 along for 3, made from it, into a full server that never evicts:
    refused, so no fresh lease, and 0's own reference at 30 is still its inline turn, not a
    second refused PUT."""
    stream = ReferenceStream(
        [0, 1, 10, 20, 20, 30],
        [0, 1, 2, 0, 3, 0],
        [100, 100, 100, 100, 10, 100],
        [5],
        [0],
        end_ms=100,
        operation=[0, 1, 2, 3, 3, 4],
        along=np.array([False, False, False, True, False, False]),
    )
    result = replay(
        stream, [1_000], "reset", 200, "none", per_object=True, inline_after_invalidate=True
    )
    assert (result.installs[0], result.along_rejected[0], result.rejected[0]) == (3, 1, 1)
    assert result.inlined_after_invalidate[0] == 1
    assert result.object_inlined.tolist() == [[1, 0, 0, 0]]
