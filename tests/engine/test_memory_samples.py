"""The replay's memory over time: the bytes and leases live at sample times, on every path."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.engine import CacheLimits
from nnrpsim.engine.replay import replay, replay_on_table
from nnrpsim.engine.replay.result import (
    LeaseSpans,
    held_spans,
    live_at,
    mean_live_between,
    sweep_ticks,
    sweeps_first,
)
from nnrpsim.engine.stream import ReferenceStream
from tests.engine.test_replay import _stream


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 9)), max_size=12
    ),
    times=st.lists(st.integers(0, 75), max_size=20, unique=True),
)
def test_what_is_live_at_a_time_is_each_span_that_holds_it(spans, times):
    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    ends = starts + np.array([n for _, n, _ in spans], dtype=np.int64)
    sizes = np.array([b for _, _, b in spans], dtype=np.int64)
    at = np.array(sorted(times), dtype=np.int64)
    expected = [int(sizes[(starts <= t) & (t < ends)].sum()) for t in at]
    assert live_at(starts, ends, sizes, at).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 9)), max_size=12
    ),
    times=st.lists(st.integers(0, 75), min_size=1, max_size=20),
)
def test_the_mean_between_samples_is_each_span_s_overlap(spans, times):
    """Each interval between samples (two in one millisecond: none, NaN) holds the bytes of
    the spans that overlap it, each for its overlap, over its width."""
    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    ends = starts + np.array([n for _, n, _ in spans], dtype=np.int64)
    sizes = np.array([b for _, _, b in spans], dtype=np.int64)
    at = np.array(sorted(times), dtype=np.int64)
    overlaps = [
        np.maximum(np.minimum(ends, b) - np.maximum(starts, a), 0) @ sizes / (b - a)
        if b > a
        else np.nan
        for a, b in pairwise(at)
    ]
    np.testing.assert_array_equal(mean_live_between(starts, ends, sizes, at), [np.nan, *overlaps])


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 9), st.booleans()),
        max_size=12,
    ),
)
def test_a_sample_is_the_instant_before_its_millisecond_s_references(spans):
    """At the instant t a lease begun or ended by a reference of an earlier millisecond has
    begun or ended, one of t's own not yet; one that expires at t has run out."""
    columns = np.array(spans, dtype=np.int64).reshape(-1, 4)
    starts, sizes, expired = columns[:, 0], columns[:, 2], columns[:, 3]
    ends = starts + columns[:, 1]
    times = np.arange(75, dtype=np.int64)
    live = [(starts < t) & np.where(expired == 1, ends > t, ends >= t) for t in times]
    later = ends + 100  # (ran out: freed after; else freed before it would run out)
    spans = LeaseSpans(
        np.zeros_like(starts),
        starts,
        np.where(expired, ends, later),
        np.where(expired, later, ends),
        sizes,
        np.zeros(len(starts), dtype=bool),
    )
    figures = spans.figures(times)
    assert figures["live_samples"].tolist() == [int(sizes[held].sum()) for held in live]
    assert figures["lease_samples"].tolist() == [int(held.sum()) for held in live]


PATHS = [  # (capacity, policy): the closed grids, the ordered map, the lease table's path
    (None, "lru"),
    (1500, "lru"),
    (1500, "fifo"),
    (1500, "ttl"),
    (1500, "size"),
]


@pytest.mark.parametrize("within", [False, True])
@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_every_path_samples_leases_at_their_instants(mode, capacity, policy, within):
    """Object 0 (10 bytes) is put at 100 ms and runs out at 150, held until the expiry
    sweep of 160 (every 40 ms; it comes before the sample there, scheduled at 120, before
    the sampler at 159); object 1 (20 bytes), put at 110, is ended at 120: by a content
    change, first in its millisecond, gone at the sample there; or by a close within it,
    after the sample. Object 2 (40 bytes), put at 155, is live at the window's end, 200."""
    stream = ReferenceStream(
        np.array([100, 110, 155]),
        np.array([0, 1, 2]),
        np.array([10, 20, 40]),
        np.array([120]),
        np.array([1]),
        start_ms=0,
        end_ms=200,
        invalidation_within=np.array([within]),
    )
    times = np.array([0, 100, 101, 110, 111, 119, 120, 121, 149, 150, 159, 160, 161, 190, 200])
    result = replay(
        stream, [50], mode, capacity, policy, per_object=True, sample_times=times, sweep_ms=40
    )
    at_120, leases_at_120 = (30, 2) if within else (10, 1)
    expected = {
        "live_samples": [0, 0, 10, 10, 30, 30, at_120, 10, 10, 0, 40, 40, 40, 40, 40],
        "lease_samples": [0, 0, 1, 1, 2, 2, leases_at_120, 1, 1, 0, 1, 1, 1, 1, 1],
        # on average since the sample before (the first: then), however object 1's ended
        "live_means": [0, 0, 10, 10, 30, 30, 30, 10, 10, 10, 160 / 9, 40, 40, 40, 40],
        "held_samples": [0, 0, 10, 10, 30, 30, at_120, 10, 10, 10, 50, 40, 40, 40, 40],
        "held_lease_samples": [0, 0, 1, 1, 2, 2, leases_at_120, 1, 1, 1, 2, 1, 1, 1, 1],
        "held_means": [0, 0, 10, 10, 30, 30, 30, 10, 10, 10, 250 / 9, 50, 40, 40, 40],
    }
    for name, values in expected.items():
        assert getattr(result, name)[0].tolist() == values, name
    # per object, over the window: 60 ms of 10 bytes, 10 of 20, 45 of 40, in 200 ms
    assert result.object_held_bytes[0].tolist() == [3.0, 1.0, 9.0]
    assert (result.mean_held_bytes[0], result.mean_live_bytes[0]) == (13.0, 12.5)
    assert (result.peak_held_bytes[0], result.peak_live_bytes[0]) == (50, 40)


@pytest.mark.parametrize("some_within", [False, True])
@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_every_path_samples_what_the_lease_table_holds(mode, capacity, policy, some_within):
    """The same leases live at the same times whichever path replays them, as the lease
    table itself replays them; a cut for the warm-up leaves the samples the whole window's.
    Every invalidation first in its millisecond, or half of them within it."""
    stream = _stream(11, invalidations=True)
    if some_within:
        drawn = np.random.default_rng(2).random(len(stream.invalidation_time_ms)) < 0.5
        stream = replace(stream, invalidation_within=drawn)
    every_ms = np.arange(stream.start_ms, stream.end_ms + 1)
    times = np.sort(np.random.default_rng(1).choice(every_ms, 300, replace=False))
    limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
    for ttl in (0, 50, 1000):
        for from_ms in (None, stream.start_ms + stream.duration_ms // 3):
            table = replay_on_table(
                stream, ttl, mode, limits, from_ms=from_ms, sample_times=times, sweep_ms=7
            )
            result = replay(
                stream,
                [ttl],
                mode,
                capacity,
                policy,
                per_object=True,
                from_ms=from_ms,
                sample_times=times,
                sweep_ms=7,
            )
            for name in ("live_samples", "lease_samples", "held_samples", "held_lease_samples"):
                np.testing.assert_array_equal(getattr(result, name)[0], table[name], name)
            for name in ("live_means", "held_means", "object_held_bytes"):
                np.testing.assert_allclose(getattr(result, name)[0], table[name], rtol=1e-12)
            held = (result.mean_held_bytes[0], result.peak_held_bytes[0])
            assert held == pytest.approx((table["mean_held_bytes"], table["peak_held_bytes"]))
            assert result.mean_held_bytes[0] > result.mean_live_bytes[0] or ttl == 1000


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_every_path_s_means_between_samples_make_its_mean_live_bytes(mode, capacity, policy):
    """Samples from the window's start to its end, 37 ms apart but the last: the means
    between them, weighted by their intervals, are the window's mean live bytes."""
    stream = _stream(5, invalidations=True)
    times = np.append(np.arange(stream.start_ms, stream.end_ms, 37), stream.end_ms)
    for ttl in (0, 50, 1000):
        result = replay(
            stream, [ttl], mode, capacity, policy, True, sample_times=times, sweep_ms=20
        )
        for means, mean in (
            (result.live_means, result.mean_live_bytes),
            (result.held_means, result.mean_held_bytes),
        ):
            weighted = means[0][1:] @ np.diff(times) / stream.duration_ms
            assert mean[0] > 0 or ttl == 0
            assert weighted == pytest.approx(mean[0], rel=1e-12, abs=1e-9)


def test_a_sweep_frees_at_the_first_tick_at_or_after_the_expiry_on_its_whole_millisecond():
    expires = np.array([0, 1, 999, 1000, 1001, 4000])
    assert sweep_ticks(expires, 1000).tolist() == [1000, 1000, 1000, 1000, 2000, 4000]
    # (every 2.5 ms: at 2.5, 5, 7.5, each on the whole millisecond it falls within)
    assert sweep_ticks(np.array([1, 3, 5, 6]), 2.5).tolist() == [3, 5, 5, 8]


@pytest.mark.parametrize(
    ("times", "sweep_ms", "first"),
    [
        # the sweep's timeout set at the tick before, the sampler's at the sample before:
        ([0, 3000, 6000], 2000, [True, False, False]),  # at 6000: sampler set at 3000, sweep 4000
        ([0, 5000, 10000], 1000, [True, False, False]),  # sampler set at 0, sweep at 4000
        ([0, 700, 1400, 2100], 1000, [True, True, True, True]),  # 1000 then 1400... 0 < 700
        ([0, 1000, 2000, 3000], 1000, [True, True, True, True]),  # set alike: as at 0
        ([0, 5000, 6000, 7000], 1000, [True, False, False, False]),  # set alike: as at 5000
    ],
)
def test_a_sweep_comes_before_the_sample_of_its_instant_when_scheduled_first(
    times, sweep_ms, first
):
    """SimPy runs an instant's events in the order they were scheduled, the sweep's at its
    tick before and the sampler's at its sample before; scheduled at one instant, in the
    order they ran there (at 0: the sweep first, its process started first)."""
    assert sweeps_first(np.array(times), sweep_ms).tolist() == first


def test_a_lease_run_out_is_held_until_the_sweep_or_what_frees_it_first():
    """Leases of 10 bytes from 0, sweeps every 100 ms, samples every 50: (a) runs out at
    130, freed by nothing: held to the sweep of 200; (b) runs out at 130, freed by a
    reference at 170: held to 170, there at the sample; (c) ended at 150 by a content
    change, first in its millisecond, before it ran out: gone at the sample of 150;
    (d) runs out at 200, the sweep's instant: gone at its sample (the sweep, set at 100,
    comes before the sampler, set at 150)."""
    spans = LeaseSpans(
        np.arange(4),
        np.zeros(4, dtype=np.int64),
        np.array([130, 130, 300, 200]),
        np.array([1_000, 170, 150, 1_000]),
        np.full(4, 10),
        np.array([False, False, True, False]),
    )
    times = np.arange(0, 301, 50)
    ends, gone = held_spans(spans, 100, times)
    assert ends.tolist() == [200, 170, 150, 200]
    assert gone.tolist() == [True, False, True, True]
    figures = spans.figures(times, 100, (0, 300, 4))
    assert figures["held_samples"].tolist() == [0, 40, 40, 30, 0, 0, 0]
    assert figures["live_samples"].tolist() == [0, 40, 40, 10, 0, 0, 0]
    with pytest.raises(ValueError, match="window"):
        spans.figures(times, 100)


def test_a_sweep_runs_every_millisecond_or_less_often():
    stream = _stream(3, invalidations=False)
    with pytest.raises(ValueError, match=r"sweep_ms must be at least 1, got 0\.5"):
        replay(stream, [50], per_object=True, sweep_ms=0.5)


def test_samples_only_where_asked_for():
    stream = _stream(3, invalidations=False)
    assert replay(stream, [50], per_object=True).live_samples is None
    times = np.array([stream.start_ms, stream.end_ms - 1])
    result = replay(stream, [50], capacity_bytes=500, per_object=True, sample_times=times)
    assert result.live_samples.shape == (1, 2)
