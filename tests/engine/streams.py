"""Seeded synthetic reference streams for engine tests (test helper)."""

from __future__ import annotations

import numpy as np

from nnrpsim.engine.stream import ReferenceStream


def poisson_stream(
    rng: np.random.Generator,
    n_objects: int,
    rate_per_ms: float | np.ndarray,
    duration_ms: int,
    purge_rate_per_ms: float = 0.0,
) -> ReferenceStream:
    """Independent Poisson references (and purges) per object, unit size, merged in time order;
    ``rate_per_ms`` is one rate for all objects or one per object."""
    times, objs = _poisson_events(rng, n_objects, rate_per_ms, duration_ms)
    inv_t, inv_o = _poisson_events(rng, n_objects, purge_rate_per_ms, duration_ms)
    return ReferenceStream(times, objs, np.ones(len(times)), inv_t, inv_o, 0, duration_ms)


def _poisson_events(rng, n_objects, rate, duration):
    if not np.any(rate):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    counts = rng.poisson(rate * duration, n_objects)
    objs = np.repeat(np.arange(n_objects), counts)
    times = np.floor(rng.random(len(objs)) * duration).astype(np.int64)
    order = np.lexsort((objs, times))
    return times[order], objs[order]


def zipf_stream(
    rng: np.random.Generator, n_objects: int, n_requests: int, alpha: float, sizes: np.ndarray
) -> ReferenceStream:
    """IRM with Zipf(alpha) popularity, one request per millisecond."""
    p = 1.0 / np.arange(1, n_objects + 1) ** alpha
    objs = rng.choice(n_objects, size=n_requests, p=p / p.sum())
    return ReferenceStream(np.arange(n_requests), objs, sizes[objs])


def renewal_stream(
    rng: np.random.Generator, n_objects: int, gaps_ms, mean_gap_ms: float, duration_ms: int
) -> ReferenceStream:
    """Independent renewal references per object, unit size, merged in time order: each
    object's gaps drawn by ``gaps_ms(rng, shape)`` (mean ``mean_gap_ms``), its first reference
    a uniform draw within one mean gap of the start."""
    per_object = int(1.2 * duration_ms / mean_gap_ms) + 50  # enough gaps to pass the end
    first = rng.random((n_objects, 1)) * mean_gap_ms
    times = np.floor(first + np.cumsum(gaps_ms(rng, (n_objects, per_object)), axis=1))
    assert (times[:, -1] >= duration_ms).all()
    objs = np.broadcast_to(np.arange(n_objects)[:, None], times.shape)
    keep = times < duration_ms
    times, objs = times[keep].astype(np.int64), objs[keep]
    order = np.lexsort((objs, times))
    return ReferenceStream(
        times[order], objs[order], np.ones(len(times)), start_ms=0, end_ms=duration_ms
    )
