"""Without a capacity: whole TTL grids at once, with sorts and binary searches.

Without a capacity limit every reference's fate depends only on its own object's history, so a
grid of TTLs is evaluated with sorts and binary searches over the stream (reset mode) or with
rounds that advance every (object, TTL) pair to its next miss together (non-reset mode).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stream import ReferenceStream
from .result import LeaseSpans, ReplayResult, stacked_spans


@dataclass(frozen=True)
class _ByObject:
    """The stream sorted by (object, time), with each reference's invalidation context."""

    obj: np.ndarray
    time: np.ndarray
    size: np.ndarray
    first: np.ndarray  # first reference of its object
    last: np.ndarray  # last reference of its object
    index: np.ndarray  # its place in the stream
    next_inv: np.ndarray  # when the first invalidation of the object after this reference is
    next_inv_at: np.ndarray  # and the stream place it comes before (see invalidation_position)
    next_inv_within: np.ndarray  # and whether it comes within its millisecond, not first
    run_end: np.ndarray  # index one past the object's last reference
    keys: np.ndarray  # obj * span + (time - t0), sorted
    span: int
    t0: int
    end: int


def _by_object(stream: ReferenceStream) -> _ByObject:
    order = np.argsort(stream.object_id, kind="stable")
    obj, time, size = stream.object_id[order], stream.time_ms[order], stream.size[order]
    n = len(obj)
    first = np.ones(n, dtype=bool)
    first[1:] = obj[1:] != obj[:-1]
    last = np.ones(n, dtype=bool)
    last[:-1] = first[1:]
    t0 = min(stream.start_ms, int(time.min()) if n else 0)
    span = stream.end_ms - t0 + 2
    if max(stream.n_objects, 1) * max(span, n + 1) >= 2**62:
        raise ValueError("stream too long for replay keys (objects x duration overflows int64)")
    keys = obj * span + (time - t0)
    # the invalidations by (object, place in the stream): the first after a reference is the
    # first of its object placed after it
    places = n + 1
    inv_o, inv_t = stream.invalidation_object_id, stream.invalidation_time_ms
    inv_keys = inv_o * places + stream.invalidation_positions()
    by_key = np.argsort(inv_keys, kind="stable")  # (same place: the earlier first)
    inv_keys, inv_t, inv_within = inv_keys[by_key], inv_t[by_key], stream.within_mask[by_key]
    idx = np.searchsorted(inv_keys, obj * places + order, side="right")
    found = np.flatnonzero(idx < len(inv_keys))
    found = found[inv_keys[idx[found]] // places == obj[found]]
    never = np.iinfo(np.int64).max // 4
    next_inv, next_inv_at = np.full(n, never, dtype=np.int64), np.full(n, never, dtype=np.int64)
    next_inv[found] = inv_t[idx[found]]
    next_inv_at[found] = inv_keys[idx[found]] % places
    next_inv_within = np.zeros(n, dtype=bool)
    next_inv_within[found] = inv_within[idx[found]]
    starts = np.flatnonzero(first)
    run_end = np.repeat(_run_ends(starts, n), np.diff(np.append(starts, n)))
    return _ByObject(
        obj,
        time,
        size,
        first,
        last,
        order,
        next_inv,
        next_inv_at,
        next_inv_within,
        run_end,
        keys,
        span,
        t0,
        stream.end_ms,
    )


def _run_ends(starts: np.ndarray, n: int) -> np.ndarray:
    """Where each run of rows that begins at ``starts`` ends: the next run's start, or ``n``."""
    return np.append(starts[1:], n) if len(starts) else starts


def _count_below(sorted_values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    return np.searchsorted(sorted_values, grid, side="left")


def _sum_min(values: np.ndarray, weights: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``sum(weights * min(values, T))`` for every T of the grid."""
    order = np.argsort(values)
    v, w = values[order].astype(np.float64), weights[order].astype(np.float64)
    below = np.concatenate([[0.0], np.cumsum(v * w)])
    weight_left = np.concatenate([[0.0], np.cumsum(w)])
    k = np.searchsorted(v, grid, side="left")
    return below[k] + grid * (weight_left[-1] - weight_left[k])


def _sequential_only(zeros: np.ndarray) -> dict[str, np.ndarray]:
    """The counts only the sequential rules make (refusals, evictions and back-offs,
    references made along, inline turns): none in the vectorised closed forms, which have no
    capacity and none of those."""
    names = (
        *("rejected", "evictions", "along_puts", "along_put_bytes", "along_rejected"),
        *("backed_off", "backed_off_bytes", "inlined_after_invalidate", "inlined_bytes"),
    )
    return dict.fromkeys(names, zeros)


def reset_grid(
    stream: ReferenceStream,
    grid: np.ndarray,
    per_object: bool,
    sample_times: np.ndarray | None = None,
    sweep_ms: float | None = None,
    from_ms: int | None = None,
) -> ReplayResult:
    """Renew on use: reference k hits iff its gap is below T and no invalidation came between.
    With ``per_object``, the leases' peak and their live bytes at ``sample_times`` too, and
    with ``sweep_ms`` the held ones, their mean and peak from ``from_ms`` on
    (:meth:`~.result.LeaseSpans.figures`)."""
    b = _by_object(stream)
    n = len(b.obj)
    prev_time = np.empty(n, dtype=np.int64)
    prev_time[1:] = b.time[:-1]
    prev_next_inv = np.empty(n, dtype=np.int64)
    prev_next_inv[1:] = b.next_inv[:-1]
    prev_next_inv_at = np.empty(n, dtype=np.int64)
    prev_next_inv_at[1:] = b.next_inv_at[:-1]
    repeat = ~b.first
    gap = (b.time - prev_time)[repeat]
    killed = (prev_next_inv_at <= b.index)[repeat]  # an invalidation came between
    kill_age = (prev_next_inv - prev_time)[repeat][killed]
    clean = np.argsort(gap[~killed])
    hits = _count_below(gap[~killed][clean], grid)
    clean_bytes = np.concatenate([[0], np.cumsum(b.size[repeat][~killed][clean])])
    hit_bytes = clean_bytes[hits]
    invalidated = _count_below(np.sort(kill_age), grid)
    expired = int(repeat.sum()) - hits - invalidated
    # Each reference's lease lives until T, the next reference (which renews it), an
    # invalidation, or the end of the window, whichever comes first.
    next_time = np.empty(n, dtype=np.int64)
    next_time[:-1] = b.time[1:]
    horizon = np.where(b.last, b.end, next_time)
    live_for = np.minimum(horizon, b.next_inv) - b.time
    live = _sum_min(live_for, b.size, grid) / stream.duration_ms
    zeros = np.zeros(len(grid), dtype=np.int64)
    objects = {}
    if per_object:
        clean_objects = b.obj[repeat][~killed]
        clean_gaps = gap[~killed]
        objects = _per_object(
            stream,
            [clean_objects[clean_gaps < ttl] for ttl in grid.tolist()],
            [b.obj] * len(grid),
            [np.minimum(live_for, ttl) * b.size for ttl in grid.tolist()],
        )
        # each reference's lease (renewed by the next) runs out T after it, and the table
        # frees it after live_for: at the next reference, at an invalidation (first in its
        # millisecond, before the next reference: ``changed``), or at the window's end
        changed_before_next = np.zeros(n, dtype=bool)
        changed_before_next[:-1] = b.next_inv_at[:-1] <= b.index[1:]
        changed = ~b.next_inv_within & np.where(b.last, b.next_inv <= b.end, changed_before_next)
        window = _held_window(stream, from_ms)
        spans = [
            LeaseSpans(b.obj, b.time, b.time + t, b.time + live_for, b.size, changed).figures(
                sample_times, sweep_ms, window
            )
            for t in grid.tolist()
        ]
        objects.update(stacked_spans(spans))
    return ReplayResult(
        grid,
        n,
        hits=hits,
        hit_bytes=hit_bytes,
        install_bytes=int(b.size.sum()) - hit_bytes,
        cold_misses=zeros + int(b.first.sum()),
        expired_misses=expired,
        invalidated_misses=invalidated,
        evicted_misses=zeros,
        installs=n - hits,
        renewals=hits,
        renewal_bytes=hit_bytes,
        **_sequential_only(zeros),
        mean_live_bytes=live,
        **objects,
    )


def _per_object(
    stream: ReferenceStream,
    hit_objects: list[np.ndarray],
    live_objects: list[np.ndarray],
    live_ms_bytes: list[np.ndarray],
) -> dict[str, np.ndarray]:
    """Per TTL, each object's hits (from the objects of the references that hit) and mean live
    bytes (from the byte-milliseconds ``live_ms_bytes`` of leases of ``live_objects``)."""
    n = stream.n_objects
    hits = [np.bincount(objects, minlength=n) for objects in hit_objects]
    live = [
        np.bincount(objects, weights=weights.astype(np.float64), minlength=n)
        for objects, weights in zip(live_objects, live_ms_bytes, strict=True)
    ]
    return {
        "object_hits": np.array(hits, dtype=np.int64).reshape(len(hits), n),
        "object_live_bytes": np.array(live).reshape(len(live), n) / stream.duration_ms,
        # no capacity to refuse, no host told of an end
        "object_rejected": np.zeros((len(hits), n), dtype=np.int64),
        "object_inlined": np.zeros((len(hits), n), dtype=np.int64),
    }


def non_reset_grid(
    stream: ReferenceStream,
    grid: np.ndarray,
    per_object: bool,
    sample_times: np.ndarray | None = None,
    sweep_ms: float | None = None,
    from_ms: int | None = None,
) -> ReplayResult:
    """Reinstall after expiry, TTL by TTL, in clusters (with ``per_object``, the leases' peak
    and their live bytes at ``sample_times`` too, and with ``sweep_ms`` the held ones, their
    mean and peak from ``from_ms`` on).

    A reference is certainly a miss when it is its object's first, when it comes at least T after
    the previous one, or when an invalidation came between them: these start the clusters. Inside
    a cluster nothing is invalidated, so a cluster shorter than T has one miss (its start); only
    longer ones are walked, all together, from miss to the first reference T later.
    """
    b = _by_object(stream)
    n, g = len(b.obj), len(grid)
    prev_time = np.empty(n, dtype=np.int64)
    prev_time[1:] = b.time[:-1]
    gap = np.where(b.first, np.iinfo(np.int64).max, b.time - prev_time)
    inv_before = np.zeros(n, dtype=bool)  # an invalidation since the previous reference
    inv_before[1:] = b.next_inv_at[:-1] <= b.index[1:]
    inv_before &= ~b.first
    restart = b.first | inv_before
    live_for = np.minimum(b.next_inv, b.end) - b.time  # a lease from here lasts at most this
    # whether an invalidation first in its millisecond ends a lease from here (if it does not
    # run out before): then gone at a sample there
    changed = (b.next_inv <= b.end) & ~b.next_inv_within
    counts = {name: np.zeros(g, dtype=np.int64) for name in ("misses", "expired", "invalidated")}
    install_bytes = np.zeros(g, dtype=np.int64)
    live = np.zeros(g, dtype=np.float64)
    hit_objects, missed_objects, missed_live, spans = [], [], [], []  # per TTL, with per_object
    for i, ttl in enumerate(grid.tolist()):
        starts = np.flatnonzero(restart | (gap >= ttl))
        ends = _run_ends(starts, n)
        last_miss = starts.copy()
        walked = [starts]
        long = np.flatnonzero(b.time[ends - 1] - b.time[starts] >= ttl)
        cursor, limit = starts[long], ends[long]
        while len(cursor):
            cursor = np.maximum(np.searchsorted(b.keys, b.keys[cursor] + ttl), cursor + 1)
            inside = cursor < limit
            cursor, limit, long = cursor[inside], limit[inside], long[inside]
            last_miss[long] = cursor
            walked.append(cursor)
        missed = np.concatenate(walked)
        # A cluster opened by an invalidation: was the previous cluster's last lease still live?
        by_inv = np.flatnonzero(inv_before[starts])
        lease_ends = b.time[last_miss[by_inv - 1]] + ttl
        invalidated = int((b.next_inv[starts[by_inv] - 1] < lease_ends).sum())
        cold = int(b.first.sum())
        counts["misses"][i] = len(missed)
        counts["invalidated"][i] = invalidated
        counts["expired"][i] = len(missed) - cold - invalidated
        install_bytes[i] = int(b.size[missed].sum())
        live_ms_bytes = np.minimum(live_for[missed], ttl) * b.size[missed]
        live[i] = float(live_ms_bytes.sum())
        if per_object:
            hit = np.ones(n, dtype=bool)
            hit[missed] = False
            hit_objects.append(b.obj[hit])
            missed_objects.append(b.obj[missed])
            missed_live.append(live_ms_bytes)
            spans.append(
                _missed_spans(b, np.sort(missed), ttl, changed).figures(
                    sample_times, sweep_ms, _held_window(stream, from_ms)
                )
            )
    zeros = np.zeros(g, dtype=np.int64)
    misses = counts["misses"]
    return ReplayResult(
        grid,
        n,
        hits=n - misses,
        hit_bytes=int(b.size.sum()) - install_bytes,
        install_bytes=install_bytes,
        cold_misses=zeros + int(b.first.sum()),
        expired_misses=counts["expired"],
        invalidated_misses=counts["invalidated"],
        evicted_misses=zeros,
        installs=misses,
        renewals=zeros,
        renewal_bytes=zeros,
        **_sequential_only(zeros),
        mean_live_bytes=live / stream.duration_ms,
        **(
            {
                **_per_object(stream, hit_objects, missed_objects, missed_live),
                **stacked_spans(spans),
            }
            if per_object
            else {}
        ),
    )


def _held_window(stream: ReferenceStream, from_ms: int | None) -> tuple[int, int, int]:
    """The window of the bytes held: from ``from_ms`` (None: the stream's start) to its end."""
    return (stream.start_ms if from_ms is None else from_ms), stream.end_ms, stream.n_objects


def _missed_spans(b: _ByObject, missed: np.ndarray, ttl: int, changed: np.ndarray) -> LeaseSpans:
    """The leases the ``missed`` references (ascending) install, each freed by the table at
    its object's next miss (the first reference after it ran out), at an invalidation
    (``changed``: first in its millisecond) or at the window's end, whichever comes first."""
    next_miss = np.full(len(missed), b.end, dtype=np.int64)
    next_miss[:-1] = np.where(b.obj[missed[1:]] == b.obj[missed[:-1]], b.time[missed[1:]], b.end)
    freed = np.minimum(next_miss, b.next_inv[missed])
    first = changed[missed] & (b.next_inv[missed] == freed)
    time = b.time[missed]
    return LeaseSpans(b.obj[missed], time, time + ttl, freed, b.size[missed], first)
