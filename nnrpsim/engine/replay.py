"""Trace-level replay: whole TTL sweeps over a reference stream at once.

Without a capacity limit every reference's fate depends only on its own object's history, so a
grid of TTLs is evaluated with sorts and binary searches over the stream (reset mode) or with
rounds that advance every (object, TTL) pair to its next miss together (non-reset mode). With a
byte capacity the objects interact; the replay then runs the same rules as the lease table, one
reference at a time (LRU and FIFO with an ordered map, other policies on the table itself).
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, replace
from itertools import repeat

import numpy as np

from nnrpsim.gc_pause import cyclic_gc_paused
from nnrpsim.protocol import U32_MAX, CacheAckStatus

from .catalog import ObjectCatalog
from .limits import CacheLimits
from .outcomes import EndReason, Outcome
from .stream import ReferenceStream
from .table import LeaseTable

MODES = ("reset", "non_reset")
COUNTS = (
    "hits",
    "cold_misses",
    "expired_misses",
    "invalidated_misses",
    "evicted_misses",
    "installs",
    "renewals",
    "renewal_bytes",
    "rejected",
    "hit_bytes",
    "install_bytes",
    "along_puts",
    "along_put_bytes",
    "along_rejected",
    "inlined_after_invalidate",
    "inlined_bytes",
    "backed_off",
    "backed_off_bytes",
)


@dataclass(frozen=True)
class ReplayResult:
    """Per TTL value: hits and misses by cause, installs, renewals, time-average live bytes.

    ``cold_misses`` + ``invalidated_misses`` + ``evicted_misses`` are what a server reports as
    cache_miss; ``expired_misses`` as lease_expired. ``mean_live_bytes`` averages the bytes of
    live leases over the stream's window. ``hit_bytes``, ``install_bytes`` and
    ``renewal_bytes`` sum the sizes of the references that hit, that installed and that
    renewed. References made ``along`` (see :class:`ReferenceStream`) count in none of these
    but the live bytes: ``along_puts`` are the CACHE_PUTs no reference follows
    (``along_put_bytes`` their bodies), ``along_rejected`` those refused: the PUTs of
    references made along, and the PUT a host sends of an object in the same burst as its
    source's, which the server refused (the object's body goes inline all the same, counted
    in ``inlined_after_invalidate``; refused too, it counts as ``rejected``).
    ``inlined_after_invalidate`` are the misses (``inlined_bytes`` their sizes) whose host
    sent the body inline instead of referencing it: once after the server ended the lease
    under it (``inline_after_invalidate``), or because the PUT of its source was refused.
    ``backed_off`` are the misses (``backed_off_bytes`` their sizes) sent inline without a
    CACHE_PUT while their host backed off after a refusal (``refused_backoff_ms``), with the
    references made from a source it backed off from.
    """

    ttl_ms: np.ndarray
    references: int
    hits: np.ndarray
    cold_misses: np.ndarray
    expired_misses: np.ndarray
    invalidated_misses: np.ndarray
    evicted_misses: np.ndarray
    installs: np.ndarray
    renewals: np.ndarray
    renewal_bytes: np.ndarray
    rejected: np.ndarray
    hit_bytes: np.ndarray
    install_bytes: np.ndarray
    along_puts: np.ndarray
    along_put_bytes: np.ndarray
    along_rejected: np.ndarray
    inlined_after_invalidate: np.ndarray
    inlined_bytes: np.ndarray
    backed_off: np.ndarray
    backed_off_bytes: np.ndarray
    mean_live_bytes: np.ndarray
    object_hits: np.ndarray | None = None
    """With ``per_object``: per TTL and object id, the references that hit."""
    object_live_bytes: np.ndarray | None = None
    """With ``per_object``: per TTL and object id, the object's share of ``mean_live_bytes``."""
    object_rejected: np.ndarray | None = None
    """With ``per_object``: per TTL and object id, the references whose install was refused."""
    object_inlined: np.ndarray | None = None
    """With ``per_object``: per TTL and object id, the references sent inline instead of
    installed: ``inlined_after_invalidate`` and ``backed_off``."""
    peak_live_bytes: np.ndarray | None = None
    """With ``per_object``: per TTL, the most bytes live at once. Reclaiming expired leases
    before evicting, a capacity this large never evicts, so it gets the unlimited hit rate (a
    smaller one may too, when nothing it evicts is used again)."""

    @property
    def hit_rate(self) -> np.ndarray:
        return self.hits / max(self.references, 1)

    def counts(self) -> dict[str, list[int]]:
        return {name: getattr(self, name).tolist() for name in COUNTS}


def _check_grid(ttl_grid) -> np.ndarray:
    grid = np.atleast_1d(np.asarray(ttl_grid, dtype=np.int64))
    if grid.ndim != 1 or not len(grid) or grid.min() < 0 or grid.max() > U32_MAX:
        raise ValueError(f"ttl_grid must be a non-empty list of integers in 0..{U32_MAX} ms")
    return grid


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
    limit or a renewal that extends replay on the lease table itself.
    """
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
        sweep = _reset_grid if margin else _non_reset_grid
        return sweep(stream, grid, per_object)
    if policy in ("lru", "fifo") and not on_table:
        with cyclic_gc_paused():  # millions of short-lived tuples, no reference cycles
            runs = [
                _ordered_capacity(
                    stream,
                    int(t),
                    margin,
                    capacity_bytes,
                    policy,
                    per_object,
                    inline_after_invalidate,
                    refused_backoff_ms,
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
            )
            for t in grid
        ]
    return _stack(grid, stream.counted, runs, per_object)


def replay_after(stream: ReferenceStream, from_ms: int, ttl_grid, *args, **kwargs) -> ReplayResult:
    """:func:`replay`, counting only the references from ``from_ms`` on (a warm-up cut), and
    live bytes over ``[from_ms, end)``; ``peak_live_bytes`` stays the whole window's.

    It replays the window before ``from_ms`` alone and takes that away. A replay is causal, a
    reference faring alike whatever comes after it, so those references fared alike in both
    runs, and the leases the earlier window left live at its end were live alike until then.
    """
    full = replay(stream, ttl_grid, *args, **kwargs)
    if from_ms <= stream.start_ms:
        return full
    if from_ms >= stream.end_ms:
        raise ValueError(f"from_ms must be before the stream's end ({stream.end_ms} ms)")
    early = replay(stream.before(from_ms), ttl_grid, *args, **kwargs)
    whole, before = stream.duration_ms, from_ms - stream.start_ms
    counts = {name: getattr(full, name) - getattr(early, name) for name in COUNTS}
    live = (full.mean_live_bytes * whole - early.mean_live_bytes * before) / (whole - before)
    objects = {}
    if full.object_hits is not None:
        span = whole - before

        def after(name: str, whole_weight: float = 1.0, early_weight: float = 1.0):
            earlier = np.zeros(getattr(full, name).shape)  # it may name fewer objects
            earlier[:, : getattr(early, name).shape[1]] = getattr(early, name)
            return getattr(full, name) * whole_weight - earlier * early_weight

        for name in ("object_hits", "object_rejected", "object_inlined"):
            objects[name] = after(name).astype(np.int64)
        objects["object_live_bytes"] = after("object_live_bytes", whole / span, before / span)
    return replace(
        full,
        references=full.references - early.references,
        **counts,
        mean_live_bytes=live,
        **objects,
    )


def renewal_margin(mode: str, renew_margin: float) -> float:
    """The share of a lease's TTL, before it runs out, in which a hit renews it: ``renew_margin``
    in ``reset`` mode (1: every hit renews), 0 in ``non_reset`` (none does)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not 0 < renew_margin <= 1:
        raise ValueError(f"renew_margin must be in (0, 1], got {renew_margin}")
    return renew_margin if mode == "reset" else 0.0


def _stack(
    grid: np.ndarray, n: int, runs: list[dict[str, float]], per_object: bool
) -> ReplayResult:
    columns = {name: np.array([run[name] for run in runs], dtype=np.int64) for name in COUNTS}
    live = np.array([run["mean_live_bytes"] for run in runs], dtype=np.float64)
    objects = {}
    if per_object:
        objects = {
            name: np.array([run[name] for run in runs]).reshape(len(runs), -1)
            for name in ("object_hits", "object_live_bytes", "object_rejected", "object_inlined")
        }
        objects["peak_live_bytes"] = np.array([run["peak_live_bytes"] for run in runs])
    return ReplayResult(grid, n, **columns, mean_live_bytes=live, **objects)


# ---------------------------------------------------------------------- uncapacitated, vectorised
@dataclass(frozen=True)
class _ByObject:
    """The stream sorted by (object, time), with each reference's invalidation context."""

    obj: np.ndarray
    time: np.ndarray
    size: np.ndarray
    first: np.ndarray  # first reference of its object
    last: np.ndarray  # last reference of its object
    next_inv: np.ndarray  # first invalidation of the object strictly after this reference
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
    if max(stream.n_objects, 1) * span >= 2**62:
        raise ValueError("stream too long for replay keys (objects x duration overflows int64)")
    keys = obj * span + (time - t0)
    inv_o, inv_t = stream.invalidation_object_id, stream.invalidation_time_ms
    inv_keys = np.sort(inv_o * span + (inv_t - t0))
    idx = np.searchsorted(inv_keys, keys, side="right")
    found = idx < len(inv_keys)
    next_inv = np.full(n, np.iinfo(np.int64).max // 4, dtype=np.int64)
    hit_keys = inv_keys[idx[found]]
    same = hit_keys // span == obj[found]
    next_inv[np.flatnonzero(found)[same]] = hit_keys[same] % span + t0
    starts = np.flatnonzero(first)
    run_end = np.repeat(_run_ends(starts, n), np.diff(np.append(starts, n)))
    return _ByObject(obj, time, size, first, last, next_inv, run_end, keys, span, t0, stream.end_ms)


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


def _peak_live(starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray) -> int:
    """The most bytes live at once over leases live on ``[start, end)``."""
    times = np.concatenate([ends, starts])
    deltas = np.concatenate([-sizes, sizes]).astype(np.int64)
    order = np.lexsort((deltas, times))  # in one millisecond, leases end before others start
    return int(np.cumsum(deltas[order]).max(initial=0))


def _peak_of_spans(spans: list[tuple[int, int, int]]) -> int:
    """:func:`_peak_live` of (start, end, size) spans booked one by one."""
    if not spans:
        return 0
    starts, ends, sizes = np.array(spans, dtype=np.int64).T
    return _peak_live(starts, ends, sizes)


def _sequential_only(zeros: np.ndarray) -> dict[str, np.ndarray]:
    """The counts only the sequential rules make (refusals and back-offs, references made
    along, inline turns): none in the vectorised closed forms, which have no capacity and none
    of those."""
    names = ("rejected", "along_puts", "along_put_bytes", "along_rejected", "backed_off")
    return dict.fromkeys(
        (*names, "backed_off_bytes", "inlined_after_invalidate", "inlined_bytes"), zeros
    )


def _reset_grid(stream: ReferenceStream, grid: np.ndarray, per_object: bool) -> ReplayResult:
    """Renew on use: reference k hits iff its gap is below T and no invalidation came between."""
    b = _by_object(stream)
    n = len(b.obj)
    prev_time = np.empty(n, dtype=np.int64)
    prev_time[1:] = b.time[:-1]
    prev_next_inv = np.empty(n, dtype=np.int64)
    prev_next_inv[1:] = b.next_inv[:-1]
    repeat = ~b.first
    gap = (b.time - prev_time)[repeat]
    killed = (prev_next_inv <= b.time)[repeat]
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
        # each reference's lease (renewed by the next) is live for min(live_for, T)
        objects["peak_live_bytes"] = np.array(
            [_peak_live(b.time, b.time + np.minimum(live_for, t), b.size) for t in grid.tolist()]
        )
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


def _non_reset_grid(stream: ReferenceStream, grid: np.ndarray, per_object: bool) -> ReplayResult:
    """Reinstall after expiry, TTL by TTL, in clusters.

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
    inv_before[1:] = b.next_inv[:-1] <= b.time[1:]
    inv_before &= ~b.first
    restart = b.first | inv_before
    live_for = np.minimum(b.next_inv, b.end) - b.time  # a lease from here lasts at most this
    counts = {name: np.zeros(g, dtype=np.int64) for name in ("misses", "expired", "invalidated")}
    install_bytes = np.zeros(g, dtype=np.int64)
    live = np.zeros(g, dtype=np.float64)
    hit_objects, missed_objects, missed_live, peaks = [], [], [], []  # per TTL, with per_object
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
            lease_ends = b.time[missed] + np.minimum(live_for[missed], ttl)
            peaks.append(_peak_live(b.time[missed], lease_ends, b.size[missed]))
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
                "peak_live_bytes": np.array(peaks, dtype=np.int64),
            }
            if per_object
            else {}
        ),
    )


# ---------------------------------------------------------------------- with a byte capacity
def _tally(misses: list[int], **counts) -> dict[str, float]:
    """One sequential run's counts, per-object arrays and live bytes; ``misses`` are indexed by
    the EndReason that preceded them."""
    return {
        "cold_misses": misses[EndReason.NEVER_INSTALLED] + misses[EndReason.RELEASED],
        "expired_misses": misses[EndReason.EXPIRED],
        "invalidated_misses": misses[EndReason.INVALIDATED],
        "evicted_misses": misses[EndReason.EVICTED],
        **counts,
    }


def _ordered_capacity(
    stream: ReferenceStream,
    ttl: int,
    margin: float,
    capacity: int,
    policy: str,
    per_object: bool,
    inline_once: bool,
    backoff: int,
) -> dict[str, float]:
    """LRU or FIFO with a byte capacity, one reference at a time, by the table's rules:
    a shortfall first reclaims expired leases, then evicts the least recent (or oldest); only
    an object larger than the capacity is refused.

    A lease is live from its install until its expiry (pushed on by renewals) or its end,
    whichever comes first: that span is booked, per object, when the lease ends."""
    # obj -> (expires, installed, size, from when a hit renews it)
    entries: OrderedDict[int, tuple[int, int, int, float]] = OrderedDict()
    ended: dict[int, int] = {}  # obj -> EndReason of its last lease
    misses = [0] * len(EndReason)
    expiries: list[tuple[int, int]] = []  # (expires, obj), lazily deleted
    hits = renewals = installs = rejected = used = live_ms_bytes = install_bytes = 0
    renewal_bytes = rejected_bytes = along_puts = along_put_bytes = along_rejected = 0
    inlined = inlined_bytes = backed_off = backed_off_bytes = 0
    told: set[int] = set()  # with inline_once: leases the server ended under their host
    # with a back-off: object -> no PUT of it before then
    until: dict[int, int] = {}
    # object -> its next reference goes inline, its source refused or backing off: the
    # EndReason charged, and whether backing off (a source with no follower, -1, blocks none)
    blocked: dict[int, tuple[int, bool]] = {}
    # object -> when a PUT of it was last refused: what the frame makes from it goes inline
    # too (put all the same where it needs a lease), with no second PUT of it
    refused_at: dict[int, int] = {}
    # of those blocked, the ones whose source's PUT the frame's burst had refused: the DES host
    # put them in that burst all the same (a lease, or a refusal), their bodies inline anyway
    put_anyway: set[int] = set()
    # object -> (when its reference last went inline, the EndReason charged, whether backing
    # off): what the same frame made from it goes inline too (``frame_source``)
    inlined_at: dict[int, tuple[int, int, bool]] = {}
    # with per_object: per object, installs, rejections and inline turns (its other references
    # hit) and live byte-milliseconds
    n_objects = stream.n_objects if per_object else 0
    installs_of, rejected_of, live_of = [0] * n_objects, [0] * n_objects, [0] * n_objects
    inlined_of = [0] * n_objects
    inv_t = stream.invalidation_time_ms.tolist()
    inv_o = stream.invalidation_object_id.tolist()
    kept, through = stream.kept_mask.tolist(), stream.through.tolist()
    k, n_inv = 0, len(inv_t)
    stale: set[int] = set()  # leases a kept change left in place: their hosts put new versions
    live_end: dict[int, int] = {}  # object -> when a change last ended a live lease of it
    lru, ttls = policy == "lru", stream.ttls(ttl)
    # else no lease ends by expiry in the window
    can_expire = stream.start_ms + int(ttls.min(initial=ttl)) < stream.end_ms
    asks = repeat(ttl) if stream.ttl_scale is None else ttls.tolist()  # (repeat: the hot path)
    made_for = stream.along_for().tolist()
    # Without expiry or invalidation a miss is cold (first reference) or follows an eviction:
    # counted once at the end instead of per reference (unless a lease was installed along, or
    # an eviction may send the next reference inline).
    along = stream.along_mask
    track = can_expire or n_inv > 0 or bool(along.any()) or inline_once or backoff > 0
    never, evicted = int(EndReason.NEVER_INSTALLED), int(EndReason.EVICTED)
    get, touch, evict_oldest = entries.get, entries.move_to_end, entries.popitem
    ended_get, push = ended.get, heapq.heappush

    spans: list[tuple[int, int, int]] = []  # with per_object: each lease's live span

    def drop(obj: int, now: int, reason: EndReason) -> None:
        nonlocal used, live_ms_bytes
        expires, start, size, _ = entries.pop(obj)
        used -= size
        end = min(expires, now)
        live_ms_bytes += (end - start) * size
        if per_object:
            live_of[obj] += (end - start) * size
            spans.append((start, end, size))
        ended[obj] = reason
        stale.discard(obj)

    def send_inline(obj: int, size: int, now: int, reason: int, backing_off: bool) -> None:
        """The reference's body goes inline instead of a PUT: an inline turn, or a back-off."""
        nonlocal inlined, inlined_bytes, backed_off, backed_off_bytes
        if backing_off:
            backed_off += 1
            backed_off_bytes += size
        else:
            inlined += 1
            inlined_bytes += size
        if per_object:
            inlined_of[obj] += 1
        inlined_at[obj] = (now, reason, backing_off)

    for t, obj, size, only_along, asked, follower, made_from in zip(
        stream.time_ms.tolist(),
        stream.object_id.tolist(),
        stream.size.tolist(),
        along.tolist(),
        asks,
        made_for,
        repeat(-1) if stream.frame_source is None else stream.frame_source.tolist(),
        strict=False,  # (asks and frame sources may repeat without end)
    ):
        while k < n_inv and inv_t[k] <= t:
            at, target, via = inv_t[k], inv_o[k], through[k]
            victim = get(target)
            if victim is not None:
                live = at < victim[0]
                if via >= 0:  # a cascade, through the source's lease (live now or until now)
                    source = get(via)
                    cascades = (source is not None and at < source[0]) or live_end.get(via) == at
                if kept[k] or (via >= 0 and not cascades):
                    if live:
                        stale.add(target)
                else:
                    drop(target, at, EndReason.INVALIDATED if live else EndReason.EXPIRED)
                    if live:
                        live_end[target] = at
                        if inline_once:
                            told.add(target)
            k += 1
        entry = get(obj)
        live = entry is not None and t < entry[0] and not (stale and obj in stale)
        if made_from >= 0 and not (told and obj in told):  # (its own inline turn comes first)
            went = inlined_at.get(made_from)
            if went is not None and went[0] == t:
                blocked[obj] = went[1:]
                if refused_at and refused_at.get(made_from) == t:
                    put_anyway.add(obj)
            else:  # its source comes later in the frame: will it go inline?
                held = get(made_from)
                if held is None or t >= held[0] or (stale and made_from in stale):
                    if told and made_from in told:
                        blocked[obj] = (EndReason.INVALIDATED, False)
                    elif until and t < until.get(made_from, t):
                        lapsed = (
                            ended_get(made_from, never)
                            if held is None
                            else EndReason.EXPIRED
                            if t >= held[0]
                            else EndReason.INVALIDATED
                        )
                        blocked[obj] = (lapsed, True)
        if only_along:
            if live:
                continue  # its lease is in place: not touched, not renewed
            if (told and follower in told) or (until and t < until.get(follower, t)):
                continue  # what it is made for goes inline (its turn, its back-off): no source
            if refused_at and refused_at.get(obj) == t:  # refused for this frame already
                blocked[follower] = (EndReason.INVALIDATED, False)
                put_anyway.add(follower)
                continue
            if until and t < until.get(obj, t):  # no PUT yet: what it is made for goes inline
                if entry is None:
                    blocked[follower] = (ended_get(obj, never), True)
                else:
                    lapsed = EndReason.EXPIRED if t >= entry[0] else EndReason.INVALIDATED
                    blocked[follower] = (lapsed, True)
                continue
            along_puts += 1
            along_put_bytes += size
        elif blocked and obj in blocked and (live or obj not in put_anyway):
            reason, backing_off = blocked.pop(obj)  # no source for it: inline, lease untouched
            put_anyway.discard(obj)
            misses[reason] += 1
            send_inline(obj, size, t, reason, backing_off)
            continue
        elif live:
            hits += 1
            if lru:
                touch(obj)
            if t >= entry[3]:  # near enough its expiry: renewed (the hosts' proactive renewal)
                expires = t + asked
                entries[obj] = (expires, entry[1], entry[2], expires - margin * asked)
                renewals += 1
                renewal_bytes += size
                if can_expire:
                    push(expiries, (expires, obj))
            continue
        orphan = bool(put_anyway) and obj in put_anyway  # (put, yet inline: no source)
        if orphan:
            put_anyway.discard(obj)
            del blocked[obj]
            orphan = size <= capacity and not (obj in told or t < until.get(obj, t))
        if entry is not None:  # run out, or stale: a new version replaces it
            drop(obj, t, EndReason.EXPIRED if t >= entry[0] else EndReason.INVALIDATED)
        if track and not only_along:
            misses[EndReason.INVALIDATED if orphan else ended_get(obj, never)] += 1
        if told and obj in told:
            told.discard(obj)  # a fresh lease, or else the inline turn
            if not only_along:
                send_inline(obj, size, t, ended_get(obj, never), False)
                continue
        if until and t < until.get(obj, t):  # backing off after a refusal: inline, no PUT
            send_inline(obj, size, t, ended_get(obj, never), True)
            continue
        if used + size > capacity:
            while expiries and expiries[0][0] <= t:
                expires, victim = heapq.heappop(expiries)
                if victim in entries and entries[victim][0] == expires:
                    drop(victim, t, EndReason.EXPIRED)
            if size > capacity:
                if backoff:
                    until[obj] = t + backoff
                refused_at[obj] = t
                if only_along:
                    along_rejected += 1
                    blocked[follower] = (EndReason.INVALIDATED, False)
                    put_anyway.add(follower)
                    continue
                rejected += 1
                rejected_bytes += size
                inlined_at[obj] = (t, EndReason.INVALIDATED, False)
                if per_object:
                    rejected_of[obj] += 1
                continue
            while used + size > capacity:
                victim, (expires, start, victim_size, _) = evict_oldest(last=False)
                used -= victim_size
                end = min(expires, t)
                live_ms_bytes += (end - start) * victim_size
                if per_object:  # (inline, as in drop: this loop is the replay's hot path)
                    live_of[victim] += (end - start) * victim_size
                    spans.append((start, end, victim_size))
                if track:
                    ended[victim] = evicted
                if inline_once:
                    told.add(victim)
                if stale:
                    stale.discard(victim)
        expires = t + asked
        entries[obj] = (expires, t, size, expires - margin * asked if margin else math.inf)
        if can_expire:
            push(expiries, (expires, obj))
        used += size
        if only_along:
            continue
        if orphan:  # a PUT no reference follows: the body goes inline
            along_puts += 1
            along_put_bytes += size
            send_inline(obj, size, t, EndReason.INVALIDATED, False)
            continue
        installs += 1
        if per_object:
            installs_of[obj] += 1
        install_bytes += size
    for obj in list(entries):
        drop(obj, stream.end_ms, EndReason.EXPIRED)
    live = live_ms_bytes / stream.duration_ms
    counted_bytes = int(stream.size[~along].sum())
    # misses install, fail or go inline
    hit_bytes = counted_bytes - install_bytes - rejected_bytes - inlined_bytes - backed_off_bytes
    if not track:  # an object that never fits misses cold every time; others once, then evicted
        too_big = stream.size > capacity
        misses[never] = len(np.unique(stream.object_id[~too_big])) + int(too_big.sum())
        misses[evicted] = installs + rejected - misses[never]
    references_of = (
        np.bincount(stream.object_id[~along], minlength=n_objects)
        if per_object
        else np.zeros(0, int)
    )
    object_rejected = np.array(rejected_of, dtype=np.int64)
    object_inlined = np.array(inlined_of, dtype=np.int64)
    installs_or_not = np.array(installs_of, dtype=np.int64) + object_rejected + object_inlined
    return _tally(
        misses,
        hits=hits,
        installs=installs,
        renewals=renewals,
        renewal_bytes=renewal_bytes,
        rejected=rejected,
        hit_bytes=hit_bytes,
        install_bytes=install_bytes,
        along_puts=along_puts,
        along_put_bytes=along_put_bytes,
        along_rejected=along_rejected,
        inlined_after_invalidate=inlined,
        inlined_bytes=inlined_bytes,
        backed_off=backed_off,
        backed_off_bytes=backed_off_bytes,
        mean_live_bytes=live,
        object_hits=references_of - installs_or_not,
        object_live_bytes=np.array(live_of, dtype=np.float64) / stream.duration_ms,
        object_rejected=object_rejected,
        object_inlined=object_inlined,
        peak_live_bytes=_peak_of_spans(spans),
    )


def replay_on_table(
    stream: ReferenceStream,
    ttl: int,
    mode: str,
    limits: CacheLimits,
    renew_margin: float = 1.0,
    inline_after_invalidate: bool = False,
    refused_backoff_ms: int = 0,
) -> dict[str, float]:
    """Drive a :class:`LeaseTable` with the stream: the exact reference for every replay path.

    Live bytes are integrated as the ordered path does: a lease is live from its install until
    its expiry (moved by renewals) or its end, whichever comes first."""
    n_objects = stream.n_objects
    kinds = np.full(n_objects, 7, dtype=np.uint8)
    ids = np.arange(n_objects, dtype=np.uint64)
    table = LeaseTable(ObjectCatalog.from_arrays(np.zeros(n_objects), ids, ids, kinds), limits)
    margin = renewal_margin(mode, renew_margin)
    misses = [0] * len(EndReason)
    # COUNTS but the misses by cause (from ``misses``)
    counts = dict.fromkeys((c for c in COUNTS if not c.endswith("_misses")), 0)
    told: set[int] = set()  # with inline_after_invalidate: leases ended under their host
    # with a back-off: object -> no PUT of it before then
    until: dict[int, int] = {}
    # object -> its next reference goes inline, its source refused or backing off: the
    # EndReason charged, and whether backing off (a source with no follower, -1, blocks none)
    blocked: dict[int, tuple[int, bool]] = {}
    # object -> when a PUT of it was last refused: what the frame makes from it goes inline
    # too (put all the same where it needs a lease), with no second PUT of it
    refused_at: dict[int, int] = {}
    # of those blocked, the ones whose source's PUT the frame's burst had refused: the DES host
    # put them in that burst all the same (a lease, or a refusal), their bodies inline anyway
    put_anyway: set[int] = set()
    # object -> (when its reference last went inline, the EndReason charged, whether backing
    # off): what the same frame made from it goes inline too (``frame_source``)
    inlined_at: dict[int, tuple[int, int, bool]] = {}
    object_hits = np.zeros(n_objects, dtype=np.int64)
    object_rejected = np.zeros(n_objects, dtype=np.int64)
    object_inlined = np.zeros(n_objects, dtype=np.int64)
    object_live_ms_bytes = [0] * n_objects
    # obj -> (installed, expires, size, the TTL last granted)
    leases: dict[int, tuple[int, int, int, int]] = {}
    spans: list[tuple[int, int, int]] = []  # each lease's live span: (start, end, size)

    def ended(objects: list[int], now: int) -> None:
        for gone in objects:
            stale.discard(gone)
            start, expires, gone_size, _ = leases.pop(gone)
            end = min(expires, now)
            object_live_ms_bytes[gone] += (end - start) * gone_size
            spans.append((start, end, gone_size))

    def send_inline(obj: int, size: int, now: int, reason: int, backing_off: bool) -> None:
        """The reference's body goes inline instead of a PUT: an inline turn, or a back-off."""
        count = "backed_off" if backing_off else "inlined_after_invalidate"
        counts[count] += 1
        counts["backed_off_bytes" if backing_off else "inlined_bytes"] += size
        object_inlined[obj] += 1
        inlined_at[obj] = (now, reason, backing_off)

    def replace_stale(obj: int, now: int) -> None:
        """A lease a kept change left in place ends as its host puts the new version (a body
        sent inline instead leaves it untouched)."""
        if obj in stale and table.holds(obj, now):
            table.invalidate_objects(np.array([obj]), now)
            ended([obj], now)

    def put(obj: int, now: int, asked: int, size: int) -> bool:
        """A CACHE_PUT for a new lease: book what it ended and the lease; whether accepted."""
        ack = table.install_one(obj, now, asked, size)
        ended(ack.expired + ack.evicted, now)
        if inline_after_invalidate:
            told.update(ack.evicted)
        if ack.status == CacheAckStatus.REJECTED:
            if refused_backoff_ms:
                until[obj] = now + refused_backoff_ms
            return False
        leases[obj] = (now, now + ack.accepted_ttl_ms, size, ack.accepted_ttl_ms)
        return True

    inv_t, inv_o = stream.invalidation_time_ms, stream.invalidation_object_id
    kept, through = stream.kept_mask, stream.through
    stale: set[int] = set()  # leases a kept change left in place: their hosts put new versions
    live_end: dict[int, int] = {}  # object -> when a change last ended a live lease of it
    k = 0
    for t, obj, size, only_along, asked, follower, made_from in zip(
        stream.time_ms.tolist(),
        stream.object_id.tolist(),
        stream.size.tolist(),
        stream.along_mask.tolist(),
        stream.ttls(ttl).tolist(),
        stream.along_for().tolist(),
        stream.frame_sources.tolist(),
        strict=True,
    ):
        while k < len(inv_t) and inv_t[k] <= t:
            target, at, via = int(inv_o[k]), int(inv_t[k]), int(through[k])
            # a cascade runs through the source's lease (live now, or until now)
            cascades = via < 0 or table.holds(via, at) or live_end.get(via) == at
            if kept[k] or not cascades:
                if table.holds(target, at):
                    stale.add(target)
            elif table.scalars.slot_of[target] >= 0:  # freed now, live or already expired
                if table.holds(target, at):
                    live_end[target] = at
                    if inline_after_invalidate:
                        told.add(target)
                table.invalidate_objects(inv_o[k : k + 1], int(inv_t[k]))
                ended([target], int(inv_t[k]))
            k += 1
        if made_from >= 0 and obj not in told:  # (its own inline turn comes first)
            went = inlined_at.get(made_from)
            if went is not None and went[0] == t:
                blocked[obj] = went[1:]
                if refused_at.get(made_from) == t:
                    put_anyway.add(obj)
            elif made_from in stale or not table.holds(made_from, t):  # its source comes later
                if made_from in told:
                    blocked[obj] = (EndReason.INVALIDATED, False)
                elif t < until.get(made_from, t):
                    held = table.scalars.slot_of[made_from] >= 0
                    lapsed = (
                        EndReason.INVALIDATED
                        if made_from in stale
                        else EndReason.EXPIRED
                        if held
                        else table.end_reason.item(made_from)
                    )
                    blocked[obj] = (lapsed, True)
        # one reference at a time: the scalar calls, which keep the batch calls' rules
        if only_along:
            if table.holds(obj, t) and obj not in stale:
                continue
            if follower in told or t < until.get(follower, t):
                continue  # what it is made for goes inline (its turn, its back-off): no source
            if refused_at.get(obj) == t:  # refused for this frame already
                blocked[follower] = (EndReason.INVALIDATED, False)
                put_anyway.add(follower)
                continue
            if t < until.get(obj, t):  # no PUT yet: what it is made for goes inline
                held = table.scalars.slot_of[obj] >= 0  # (run out, not yet reclaimed)
                lapsed = EndReason.EXPIRED if held else table.end_reason.item(obj)
                blocked[follower] = (lapsed, True)
                continue
            counts["along_puts"] += 1
            counts["along_put_bytes"] += size
            replace_stale(obj, t)
            told.discard(obj)
            if not put(obj, t, asked, size):
                counts["along_rejected"] += 1
                blocked[follower] = (EndReason.INVALIDATED, False)
                put_anyway.add(follower)
                refused_at[obj] = t
            continue
        if obj in blocked and (obj not in put_anyway or (table.holds(obj, t) and obj not in stale)):
            reason, backing_off = blocked.pop(obj)  # no source for it: inline, lease untouched
            put_anyway.discard(obj)
            misses[reason] += 1
            send_inline(obj, size, t, reason, backing_off)
            continue
        orphan = obj in put_anyway  # (put, yet inline: no source)
        if orphan:
            put_anyway.discard(obj)
            del blocked[obj]
        replace_stale(obj, t)
        reason = table.end_reason.item(obj)
        if table.resolve(obj, t) == Outcome.HIT:
            counts["hits"] += 1
            counts["hit_bytes"] += size
            object_hits[obj] += 1
            installed, expires, _, granted = leases[obj]
            if margin and t >= expires - margin * granted:
                renewal = table.install_one(obj, t, asked, size)
                granted = renewal.accepted_ttl_ms
                leases[obj] = (installed, t + granted, size, granted)
                counts["renewals"] += 1
                counts["renewal_bytes"] += size
            continue
        lapsed = EndReason.EXPIRED if table.scalars.slot_of[obj] >= 0 else reason
        if obj in told:  # the inline turn
            misses[lapsed] += 1
            told.discard(obj)
            send_inline(obj, size, t, lapsed, False)
            continue
        if t < until.get(obj, t):  # backing off after a refusal: inline, no PUT
            misses[lapsed] += 1
            send_inline(obj, size, t, lapsed, True)
            continue
        accepted = put(obj, t, asked, size)
        if accepted and orphan:  # a PUT no reference follows: the body goes inline
            misses[EndReason.INVALIDATED] += 1
            counts["along_puts"] += 1
            counts["along_put_bytes"] += size
            send_inline(obj, size, t, EndReason.INVALIDATED, False)
            continue
        misses[lapsed] += 1
        if accepted:
            counts["installs"] += 1
            counts["install_bytes"] += size
        else:
            counts["rejected"] += 1
            object_rejected[obj] += 1
            refused_at[obj] = t
            inlined_at[obj] = (t, EndReason.INVALIDATED, False)
    ended(list(leases), stream.end_ms)
    object_live = np.array(object_live_ms_bytes, dtype=np.float64) / stream.duration_ms
    return _tally(
        misses,
        **counts,
        mean_live_bytes=float(object_live.sum()),
        object_hits=object_hits,
        object_live_bytes=object_live,
        object_rejected=object_rejected,
        object_inlined=object_inlined,
        peak_live_bytes=_peak_of_spans(spans),
    )
