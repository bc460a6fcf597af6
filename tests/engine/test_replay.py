"""Replay: the vectorised TTL sweep and the capacity paths agree with the lease table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.engine import CacheLimits
from nnrpsim.engine.replay import COUNTS, replay, replay_on_table
from nnrpsim.engine.stream import ReferenceStream

GRID = [0, 1, 7, 50, 200, 1000, 100_000]


def _stream(seed: int, invalidations: bool) -> ReferenceStream:
    rng = np.random.default_rng(seed)
    n, n_objects = 2500, 40
    times = np.cumsum(rng.integers(0, 20, n))
    objs = rng.integers(0, n_objects, n)
    sizes = rng.integers(1, 100, n_objects)[objs]
    if not invalidations:
        return ReferenceStream(times, objs, sizes)
    inv_t = rng.integers(0, times[-1], 120)
    inv_t[:10] = times[rng.integers(0, n, 10)]  # some land on a reference's millisecond
    return ReferenceStream(times, objs, sizes, inv_t, rng.integers(0, n_objects, 120))


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("invalidations", [False, True])
def test_vectorised_ttl_grid_equals_the_lease_table(mode, invalidations):
    stream = _stream(11, invalidations)
    result = replay(stream, GRID, mode, per_object=True)
    for i, ttl in enumerate(GRID):
        table = replay_on_table(stream, ttl, mode, CacheLimits())
        assert {k: int(getattr(result, k)[i]) for k in COUNTS} == {k: table[k] for k in COUNTS}
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
        assert {k: int(getattr(result, k)[i]) for k in COUNTS} == {k: table[k] for k in COUNTS}
        assert result.object_hits[i].tolist() == table["object_hits"].tolist()
        assert result.object_rejected[i].tolist() == table["object_rejected"].tolist()
        # live bytes too (for LRU and FIFO the ordered path integrates them on its own)
        np.testing.assert_allclose(result.object_live_bytes[i], table["object_live_bytes"])
        assert result.mean_live_bytes[i] == pytest.approx(table["mean_live_bytes"])
    np.testing.assert_array_equal(result.object_hits.sum(axis=1), result.hits)
    np.testing.assert_array_equal(result.object_rejected.sum(axis=1), result.rejected)
    np.testing.assert_allclose(result.object_live_bytes.sum(axis=1), result.mean_live_bytes)


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


def test_operations_group_consecutive_references_and_survive_a_cut():
    stream = ReferenceStream(
        [1, 1, 1, 4, 4, 9], [0, 1, 2, 0, 3, 1], [1] * 6, operation=[7, 7, 8, 2, 2, 7]
    )
    assert stream.operation_bounds().tolist() == [0, 2, 3, 5, 6]
    assert stream.before(5).operation_bounds().tolist() == [0, 2, 3, 5]
    assert ReferenceStream([1, 1], [0, 1], [1, 1]).operation_bounds().tolist() == [0, 1, 2]
    assert ReferenceStream([], [], []).operation_bounds().tolist() == [0]


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
    assert {k: int(getattr(result, k)[0]) for k in COUNTS} == {k: table[k] for k in COUNTS}


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
    from nnrpsim.engine.replay import _peak_live

    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    ends = starts + np.array([n for _, n, _ in spans], dtype=np.int64)
    sizes = np.array([b for _, _, b in spans], dtype=np.int64)
    at_each = [int(sizes[(starts <= t) & (t < ends)].sum()) for t in range(72)]
    assert _peak_live(starts, ends, sizes) == max(at_each)
