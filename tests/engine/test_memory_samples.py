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
from nnrpsim.engine.replay.result import live_at, mean_live_between, span_figures
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
    figures = span_figures(starts, ends, sizes, expired, times)
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
    """Object 0 (10 bytes) is put at 100 ms and runs out at 150; object 1 (20 bytes), put at
    110, is ended at 120: by a content change, first in its millisecond, gone at the sample
    there; or by a close within it, after the sample. Object 2 (40 bytes), put at 190, is
    live at the window's end, 200."""
    stream = ReferenceStream(
        np.array([100, 110, 190]),
        np.array([0, 1, 2]),
        np.array([10, 20, 40]),
        np.array([120]),
        np.array([1]),
        start_ms=0,
        end_ms=200,
        invalidation_within=np.array([within]),
    )
    times = np.array([0, 100, 101, 110, 111, 119, 120, 121, 149, 150, 190, 191, 200])
    result = replay(stream, [50], mode, capacity, policy, per_object=True, sample_times=times)
    bytes_at_120, leases_at_120 = (30, 2) if within else (10, 1)
    live = [0, 0, 10, 10, 30, 30, bytes_at_120, 10, 10, 0, 0, 40, 40]
    assert result.live_samples[0].tolist() == live
    assert result.lease_samples[0].tolist() == [0, 0, 1, 1, 2, 2, leases_at_120, 1, 1, 0, 0, 1, 1]
    # on average since the sample before (the first: then), however object 1's lease ended
    means = [0, 0, 10, 10, 30, 30, 30, 10, 10, 10, 0, 40, 40]
    assert result.live_means[0].tolist() == means


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
    for ttl in (0, 50, 1000):
        table = replay_on_table(
            stream,
            ttl,
            mode,
            CacheLimits(capacity_bytes=capacity, eviction=policy),
            sample_times=times,
        )
        for from_ms in (None, stream.start_ms + stream.duration_ms // 3):
            result = replay(
                stream,
                [ttl],
                mode,
                capacity,
                policy,
                per_object=True,
                from_ms=from_ms,
                sample_times=times,
            )
            np.testing.assert_array_equal(result.live_samples[0], table["live_samples"])
            np.testing.assert_array_equal(result.lease_samples[0], table["lease_samples"])
            np.testing.assert_allclose(result.live_means[0], table["live_means"], rtol=1e-12)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize(("capacity", "policy"), PATHS)
def test_every_path_s_means_between_samples_make_its_mean_live_bytes(mode, capacity, policy):
    """Samples from the window's start to its end, 37 ms apart but the last: the means
    between them, weighted by their intervals, are the window's mean live bytes."""
    stream = _stream(5, invalidations=True)
    times = np.append(np.arange(stream.start_ms, stream.end_ms, 37), stream.end_ms)
    for ttl in (0, 50, 1000):
        result = replay(stream, [ttl], mode, capacity, policy, per_object=True, sample_times=times)
        weighted = result.live_means[0][1:] @ np.diff(times) / stream.duration_ms
        assert result.mean_live_bytes[0] > 0 or ttl == 0
        assert weighted == pytest.approx(result.mean_live_bytes[0], rel=1e-12, abs=1e-9)


def test_samples_only_where_asked_for():
    stream = _stream(3, invalidations=False)
    assert replay(stream, [50], per_object=True).live_samples is None
    times = np.array([stream.start_ms, stream.end_ms - 1])
    result = replay(stream, [50], capacity_bytes=500, per_object=True, sample_times=times)
    assert result.live_samples.shape == (1, 2)
