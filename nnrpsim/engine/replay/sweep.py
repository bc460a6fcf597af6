"""A TTL grid over a reference stream, by the fastest path that keeps the lease table's rules.

Without a capacity (and without the sequential rules) whole grids are evaluated at once
(:mod:`.ttl_grid`). With a byte capacity the objects interact; the replay then runs the same
rules as the lease table, one reference at a time: LRU and FIFO with an ordered map
(:mod:`.ordered`), other policies on the table itself (:mod:`.on_table`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nnrpsim.gc_pause import cyclic_gc_paused
from nnrpsim.protocol import U32_MAX

from ..limits import CacheLimits
from ..stream import ReferenceStream
from .modes import renewal_margin
from .on_table import replay_on_table
from .ordered import ordered_capacity
from .result import COUNTS, ReplayResult, stack_runs
from .ttl_grid import non_reset_grid, reset_grid


def _check_grid(ttl_grid) -> np.ndarray:
    grid = np.atleast_1d(np.asarray(ttl_grid, dtype=np.int64))
    if grid.ndim != 1 or not len(grid) or grid.min() < 0 or grid.max() > U32_MAX:
        raise ValueError(f"ttl_grid must be a non-empty list of integers in 0..{U32_MAX} ms")
    return grid


def _check_sample_times(sample_times) -> np.ndarray:
    """``sample_times`` on the replay's clock: whole milliseconds, in order."""
    times = np.asarray(sample_times)
    whole = np.issubdtype(times.dtype, np.integer) or (
        np.issubdtype(times.dtype, np.floating)
        and bool(np.isfinite(times).all())
        and bool((times == np.floor(times)).all())
    )
    if times.ndim != 1 or not whole:
        raise ValueError("sample_times must be a list of whole milliseconds")
    if (np.diff(times) < 0).any():
        raise ValueError("sample_times must be non-decreasing")
    return times.astype(np.int64)


def replay(
    stream: ReferenceStream,
    ttl_grid,
    mode: str = "reset",
    capacity_bytes: int | None = None,
    policy: str = "lru",
    per_object: bool = False,
    renew_margin: float = 1.0,
    inline_after_invalidate: bool = False,
    refused_backoff_ms: int = 0,
    max_cache_entries: int = 0,
    renewal: str = "touch",
    *,
    from_ms: int | None = None,
    sample_times: np.ndarray | None = None,
    sweep_ms: float | None = None,
) -> ReplayResult:
    """Replay ``stream`` for every TTL in ``ttl_grid``.

    ``reset`` renews the lease on a hit (renew on use): on every hit, or with ``renew_margin``
    below 1 only on a hit within that share of the TTL before the lease runs out (the hosts'
    proactive renewal); ``non_reset`` only reinstalls after expiry. Every miss installs. With
    ``capacity_bytes`` the eviction ``policy`` decides victims, exactly as :class:`LeaseTable`
    would. ``per_object`` adds each object's hits and live bytes (``len(ttl_grid) x
    stream.n_objects`` each), to break the totals down, by kind say. With
    ``inline_after_invalidate`` the host of a lease the server ended under it (invalidated
    or evicted, not expired) sends the next reference's body inline, and installs at the one
    after (spec section 14). A change marked kept (``invalidation_kept``, or through a source
    with no live lease: ``invalidation_through``) leaves the lease in place, unannounced, and
    its host replaces it at the next reference. A renewal margin below 1, references made
    ``along``, references with TTLs of their own (``ttl_scale``), kept or cascaded changes and
    inlining after invalidations need the sequential rules: without a capacity they are
    replayed as under one no reference can fill. With ``refused_backoff_ms`` a host whose
    CACHE_PUT was refused sends that object inline, without a PUT, for that long after (and
    what is made from it, when the PUT was of a source made ``along``); only a capacity
    refuses PUTs. ``max_cache_entries`` and ``renewal`` are :class:`CacheLimits`'s: an entry
    limit or a renewal that extends replay on the lease table itself. ``from_ms``: count
    only from then on (:func:`replay_after`). With ``per_object``, ``sample_times`` (ms,
    ascending) asks for the bytes and the leases live at each (the memory over time); and
    ``sweep_ms``, a server's expiry sweep interval, for the bytes it holds (its table keeps a
    lease that ran out until a sweep, or something else, frees it): on average
    (``mean_held_bytes``, per object too), at their peak and at ``sample_times``; and the
    CACHE_INVALIDATE notices the leases' ends send their host (``notices``).
    """
    if sample_times is not None:
        sample_times = _check_sample_times(sample_times)
    if sweep_ms is not None and not sweep_ms >= 1:
        raise ValueError(f"sweep_ms must be at least 1, got {sweep_ms}")
    if from_ms is not None and from_ms >= stream.end_ms:
        raise ValueError(f"from_ms must be before the stream's end ({stream.end_ms} ms)")
    if from_ms is not None and from_ms <= stream.start_ms:
        from_ms = None  # (all of it)
    margin = renewal_margin(mode, renew_margin)
    grid = _check_grid(ttl_grid)
    if refused_backoff_ms < 0:
        raise ValueError(f"refused_backoff_ms must be >= 0, got {refused_backoff_ms}")
    inline_once = inline_after_invalidate and len(stream.invalidation_time_ms) > 0
    sequential = (
        stream.along_mask.any()
        or 0 < margin < 1
        or stream.ttl_scale is not None
        or stream.kept_mask.any()
        or (stream.through >= 0).any()
        or inline_once
    )
    limits = CacheLimits(
        capacity_bytes=capacity_bytes,
        eviction=policy,
        max_cache_entries=max_cache_entries,
        renewal=renewal,
    )
    on_table = max_cache_entries > 0 or renewal != "touch"
    if capacity_bytes is None and sequential and not on_table:
        # the live leases are of distinct references: together never more than all of them
        capacity_bytes, policy = int(stream.size.sum()), "lru"
    if capacity_bytes is None and not on_table:
        sweep = reset_grid if margin else non_reset_grid
        if from_ms is None:
            return sweep(stream, grid, per_object, sample_times, sweep_ms)
        return _grid_after(
            sweep(stream, grid, per_object, sample_times, sweep_ms, from_ms),
            sweep(stream.before(from_ms), grid, per_object),
            stream,
            from_ms,
        )
    if policy in ("lru", "fifo") and not on_table:
        with cyclic_gc_paused():  # millions of short-lived tuples, no reference cycles
            runs = [
                ordered_capacity(
                    stream,
                    int(t),
                    margin,
                    capacity_bytes,
                    policy,
                    per_object,
                    inline_after_invalidate,
                    refused_backoff_ms,
                    from_ms,
                    sample_times,
                    sweep_ms,
                )
                for t in grid
            ]
    else:
        runs = [
            replay_on_table(
                stream,
                int(t),
                mode,
                limits,
                renew_margin,
                inline_after_invalidate,
                refused_backoff_ms,
                from_ms,
                sample_times,
                sweep_ms,
            )
            for t in grid
        ]
    counted = stream.counted if from_ms is None else _counted_from(stream, from_ms)
    return stack_runs(grid, counted, runs, per_object)


def _counted_from(stream: ReferenceStream, from_ms: int) -> int:
    """The references that count from ``from_ms`` on: all but those made along."""
    return int((~stream.along_mask[stream.time_ms >= from_ms]).sum())


def replay_after(stream: ReferenceStream, from_ms: int, ttl_grid, *args, **kwargs) -> ReplayResult:
    """:func:`replay`, counting only the references from ``from_ms`` on (a warm-up cut), and
    live bytes over ``[from_ms, end)``; ``peak_live_bytes`` and the samples over time stay
    the whole window's.

    The sequential paths count the references before the cut as they pass it, and take that
    away at the end (:func:`~.result.counted_after`); the vectorised grids replay the window
    before ``from_ms`` alone and take that away. A replay is causal, a reference faring alike
    whatever comes after it, so those references fared alike in both, and the leases the
    earlier window left live at its end were live alike until then.
    """
    return replay(stream, ttl_grid, *args, from_ms=from_ms, **kwargs)


def _grid_after(
    full: ReplayResult, early: ReplayResult, stream: ReferenceStream, from_ms: int
) -> ReplayResult:
    """A vectorised grid's result from ``from_ms`` on: ``full``'s, less ``early``'s (the same
    grid over the window before ``from_ms``); ``full``'s bytes held are counted from
    ``from_ms`` on already."""
    whole, before = stream.duration_ms, from_ms - stream.start_ms
    counts = {name: getattr(full, name) - getattr(early, name) for name in COUNTS}
    # (a difference of two rounded totals: where nothing is live after the cut it may come
    # out a few units in the last place below zero, which no window holds)
    live = np.maximum(
        (full.mean_live_bytes * whole - early.mean_live_bytes * before) / (whole - before), 0.0
    )
    objects = {}
    if full.object_hits is not None:
        span = whole - before

        def after(name: str, whole_weight: float = 1.0, early_weight: float = 1.0):
            earlier = np.zeros(getattr(full, name).shape)  # it may name fewer objects
            earlier[:, : getattr(early, name).shape[1]] = getattr(early, name)
            return getattr(full, name) * whole_weight - earlier * early_weight

        for name in ("object_hits", "object_rejected", "object_inlined"):
            objects[name] = after(name).astype(np.int64)
        objects["object_live_bytes"] = np.maximum(
            after("object_live_bytes", whole / span, before / span), 0.0
        )
    return replace(
        full,
        references=full.references - early.references,
        **counts,
        mean_live_bytes=live,
        **objects,
    )
