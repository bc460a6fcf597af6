"""What a replay reports, per TTL of its grid, and how one run's counts are assembled."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..outcomes import EndReason

EXPIRED, INVALIDATED, EVICTED = (
    int(EndReason.EXPIRED),
    int(EndReason.INVALIDATED),
    int(EndReason.EVICTED),
)
"""End reasons as plain ints: the sequential paths index their misses by them, and charge them."""

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
    "evictions",
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
    in ``inlined_after_invalidate``; refused too, it counts as ``rejected``). ``evictions``
    are the live leases the capacity or entry limit evicted to make room (a lease that had run
    out, reclaimed first, is not one), whether or not their objects were referenced again.
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
    evictions: np.ndarray
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
    live_samples: np.ndarray | None = None
    """With ``per_object`` and ``sample_times``: per TTL and sample time, the bytes live then
    (the memory over time, as the DES samples it; of the whole window, as the peak is)."""
    lease_samples: np.ndarray | None = None
    """As :attr:`live_samples`, the leases live at each sample time."""
    live_means: np.ndarray | None = None
    """As :attr:`live_samples`, the bytes live on average since the sample before (the
    first sample: then), so that the memory over time, weighted by the samples' intervals,
    averages as :attr:`mean_live_bytes` does, whatever a sample's instant catches."""
    mean_held_bytes: np.ndarray | None = None
    """With ``per_object`` and a sweep interval (``sweep_ms``): per TTL, the bytes held on
    average, as :attr:`mean_live_bytes` is of the live ones: a server's table holds a lease
    that ran out until a reference, a change, a close or a shortfall frees it, or its expiry
    sweep (:func:`held_spans`). The DES's GPU memory."""
    object_held_bytes: np.ndarray | None = None
    """As :attr:`mean_held_bytes`, per TTL and object id (as :attr:`object_live_bytes`)."""
    peak_held_bytes: np.ndarray | None = None
    """The most bytes held at once, from ``from_ms`` on (as the DES measures its peak)."""
    held_samples: np.ndarray | None = None
    """As :attr:`live_samples`, the bytes held at each sample time."""
    held_lease_samples: np.ndarray | None = None
    """As :attr:`lease_samples`, the leases held at each sample time."""
    held_means: np.ndarray | None = None
    """As :attr:`live_means`, the bytes held on average since the sample before."""
    notices: np.ndarray | None = None
    """With ``per_object`` and a sweep interval: per TTL, the CACHE_INVALIDATE notices the
    server sends its host from ``from_ms`` on (:meth:`LeaseSpans.notices`)."""

    @property
    def hit_rate(self) -> np.ndarray:
        return self.hits / max(self.references, 1)

    def counts(self) -> dict[str, list[int]]:
        return {name: getattr(self, name).tolist() for name in COUNTS}


def stack_runs(
    grid: np.ndarray, n: int, runs: list[dict[str, float]], per_object: bool
) -> ReplayResult:
    """The sequential runs of a grid, one per TTL (from :func:`tally`), as one result."""
    columns = {name: np.array([run[name] for run in runs], dtype=np.int64) for name in COUNTS}
    live = np.array([run["mean_live_bytes"] for run in runs], dtype=np.float64)
    objects = {}
    if per_object:
        objects = {
            name: np.array([run[name] for run in runs]).reshape(len(runs), -1)
            for name in ("object_hits", "object_live_bytes", "object_rejected", "object_inlined")
        }
        objects.update(stacked_spans(runs))
    return ReplayResult(grid, n, **columns, mean_live_bytes=live, **objects)


LIVE_SPAN_FIGURES = ("peak_live_bytes", "live_samples", "lease_samples", "live_means")
HELD_SPAN_FIGURES = ("peak_held_bytes", "held_samples", "held_lease_samples", "held_means")
SPAN_FIGURES = (*LIVE_SPAN_FIGURES, *HELD_SPAN_FIGURES, "mean_held_bytes", "notices")
"""What the leases' spans give a run (:meth:`LeaseSpans.figures`), per TTL in a result: of
their live spans, and with a sweep interval of their held ones and the notices their ends
sent (those a run has)."""


def stacked_spans(runs: list[dict]) -> dict[str, np.ndarray]:
    """The :data:`SPAN_FIGURES` of a grid's runs, one per TTL, stacked as a result keeps them
    (those the runs have: the samples only where they were asked for)."""
    names = (*SPAN_FIGURES, "object_held_bytes")
    return {name: np.array([run[name] for run in runs]) for name in names if name in runs[0]}


@dataclass(frozen=True)
class LeaseSpans:
    """Leases, each of an object (``objects``) and a size, granted at ``starts`` and due to
    run out at ``expires``, that the lease table ended at ``freed``: a reference's PUT, a
    shortfall, a content change or a close frees a lease, whether or not it had run out
    (the table holds one run out until then, or until its server's expiry sweep frees it:
    :func:`held_spans`); ``first`` where what freed it came first in that millisecond (a
    content change), before the sample there, not after it (a reference's PUT, a close).
    ``told`` where what freed it sent its host a CACHE_INVALIDATE: a content change, or
    another object's PUT that evicted it or reclaimed it run out (None: where ``first``);
    not the host's own PUT, its close or the window's end (:meth:`notices`)."""

    objects: np.ndarray
    starts: np.ndarray
    expires: np.ndarray
    freed: np.ndarray
    sizes: np.ndarray
    first: np.ndarray
    told: np.ndarray | None = None

    def figures(
        self,
        sample_times: np.ndarray | None,
        sweep_ms: float | None = None,
        window: tuple[int, int, int] | None = None,
    ) -> dict[str, int | float | np.ndarray]:
        """Of the live spans, ``[start, min(expires, freed))``: :data:`LIVE_SPAN_FIGURES`
        (:func:`memory_figures`). With ``sweep_ms``, of the spans held until the expiry
        sweep frees them: :data:`HELD_SPAN_FIGURES` (their peak from ``cut_ms`` on, as the
        DES's), and over ``window`` (``(cut_ms, end_ms, n_objects)``) each object's bytes
        held on average, ``object_held_bytes``, and their sum, ``mean_held_bytes``."""
        starts, sizes = self.starts, self.sizes
        ran_out = (self.expires <= self.freed) | self.first
        live_ends = np.minimum(self.expires, self.freed)
        figures = memory_figures(starts, live_ends, sizes, ran_out, sample_times, LIVE_SPAN_FIGURES)
        del live_ends, ran_out  # (a long trace's spans: not held through the rest)
        if sweep_ms is None:
            return figures
        if window is None:
            raise ValueError("the bytes held need their window: (cut_ms, end_ms, n_objects)")
        cut_ms, end_ms, n_objects = window
        held_ends, gone = held_spans(self, sweep_ms, sample_times)
        figures.update(
            memory_figures(starts, held_ends, sizes, gone, sample_times, HELD_SPAN_FIGURES, cut_ms)
        )
        ms_bytes = np.maximum(starts, cut_ms)  # (in place from here: a long trace's spans)
        np.subtract(held_ends, ms_bytes, out=ms_bytes)
        np.maximum(ms_bytes, 0, out=ms_bytes)
        ms_bytes *= sizes
        held = np.bincount(self.objects, ms_bytes, n_objects)
        figures["object_held_bytes"] = held / (end_ms - cut_ms)
        figures["mean_held_bytes"] = float(figures["object_held_bytes"].sum())
        figures["notices"] = self.notices(sweep_ms, cut_ms)
        return figures

    def notices(self, sweep_ms: float, cut_ms: int) -> int:
        """The CACHE_INVALIDATE notices the leases' ends sent their one host from ``cut_ms``
        on, as a DES server sends them: one for each lease its expiry sweep frees (at the
        first tick at or after its expiry, :func:`sweep_ticks`, that comes before what else
        would free it, the window's end too: the DES's sweep there runs before the sessions
        cut by the end close) and one for each lease something that tells (``told``) frees
        before that sweep. A host's operations, closes and PUTs come after a sweep in the
        same millisecond (at a fraction of it, or over a link), and a content change first."""
        ticks = sweep_ticks(self.expires, sweep_ms)
        swept = ticks <= self.freed
        told = self.first if self.told is None else self.told
        sent_at = np.where(swept, ticks, self.freed)
        return int(np.count_nonzero((swept | told) & (sent_at >= cut_ms)))


def sweep_ticks(expires: np.ndarray, sweep_ms: float) -> np.ndarray:
    """When an expiry sweep every ``sweep_ms`` from 0 (the first at ``sweep_ms``) frees a
    lease that ran out at ``expires``: at the first at or after it (a sweep frees what ran out
    by the millisecond it reads), on that whole millisecond (rounded up: a sweep interval of
    a fraction of a millisecond falls within one). Exact in floating point for an interval
    of whole milliseconds (``expires / sweep_ms`` is then whole exactly where it should be)."""
    ticks = expires / sweep_ms  # (in place from here: a long trace's spans)
    np.ceil(ticks, out=ticks)
    np.maximum(ticks, 1.0, out=ticks)
    ticks *= sweep_ms
    return np.ceil(ticks, out=ticks).astype(np.int64)


def sweeps_first(sample_times: np.ndarray, sweep_ms: float) -> np.ndarray:
    """Per sample time, whether a sweep due at that instant runs before the sample. SimPy
    runs one instant's events in the order they were scheduled: the sweep's at the tick
    before (``t - sweep_ms``), the sampler's at the sample before; when both were scheduled
    at one instant, the order there repeats (at 0 the sweep's: its process starts first)."""
    times = np.asarray(sample_times, dtype=np.float64)
    before = np.concatenate([[np.nan], times[:-1]])
    scheduled = times - sweep_ms
    decided = ~(scheduled == before)  # (the first sample, after NaN: decided)
    first = (scheduled < before) | ~(before == before)
    return first[np.maximum.accumulate(np.where(decided, np.arange(len(times)), 0))]


def held_spans(
    spans: LeaseSpans, sweep_ms: float, sample_times: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """How long a server whose expiry sweep runs every ``sweep_ms`` holds each lease: until
    the table freed it, or, run out before, until the first sweep at or after its expiry
    (:func:`sweep_ticks`), whichever comes first; and whether it is gone at a sample on that
    last millisecond: when what freed it came first there, or the sweep came before the
    sample (:func:`sweeps_first`; always, for a sweep within the millisecond before)."""
    ticks, freed = sweep_ticks(spans.expires, sweep_ms), spans.freed
    swept = ticks <= freed
    if sample_times is not None and len(sample_times) and float(sweep_ms).is_integer():
        at = np.minimum(np.searchsorted(sample_times, ticks), len(sample_times) - 1)
        swept &= sweeps_first(sample_times, sweep_ms)[at]  # (before the sample there)
    gone = (spans.first & (freed <= ticks)) | swept
    return np.minimum(ticks, freed, out=ticks), gone


def memory_figures(
    starts: np.ndarray,
    ends: np.ndarray,
    sizes: np.ndarray,
    gone: np.ndarray,
    sample_times: np.ndarray | None,
    names: tuple[str, str, str, str],
    peak_from_ms: int | None = None,
) -> dict[str, int | np.ndarray]:
    """Of leases on ``[start, end)`` with their sizes, under ``names``: the most bytes at
    once, and with ``sample_times`` (ascending) the bytes and the leases at each, and the
    bytes on average since the sample before. A sample at t is the instant t, as the DES's
    sampler reads its lease table there: what the references of earlier milliseconds began
    and ended (not yet those of t's own), and a lease that ended first thing in t (``gone``:
    it ran out then, or a content change or a sweep before the sample ended it) gone. The
    peak is the window's, or from ``peak_from_ms`` on."""
    peak, at_samples, leases, means = names
    # (a span that ends before peak_from_ms, begun there, ends first: it adds nothing after)
    begun = starts if peak_from_ms is None else np.maximum(starts, peak_from_ms)
    figures: dict[str, int | np.ndarray] = {peak: peak_live(begun, ends, sizes)}
    del begun
    if sample_times is not None:
        # (a lease of a TTL of 0 runs out as it begins: never live)
        before, until = sample_times - 1, np.maximum(ends - gone, starts)
        figures[at_samples] = live_at(starts, until, sizes, before)
        figures[leases] = live_at(starts, until, np.ones_like(sizes), before)
        between = mean_live_between(starts, np.maximum(ends, starts), sizes, sample_times)
        figures[means] = np.where(np.isnan(between), figures[at_samples], between)
    return figures


def peak_live(starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray) -> int:
    """The most bytes live at once over leases live on ``[start, end)``."""
    times = np.concatenate([ends, starts])
    deltas = np.concatenate([-sizes, sizes]).astype(np.int64)
    order = np.lexsort((deltas, times))  # in one millisecond, leases end before others start
    return int(np.cumsum(deltas[order]).max(initial=0))


def live_at(
    starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """The sum of ``sizes`` of the spans ``[start, end)`` that hold each of ``times``
    (ascending): each span adds its size from the first time at or after its start to the
    first at or after its end, one pass over the spans and a running sum over the times."""
    steps = np.zeros(len(times) + 1, dtype=np.int64)
    np.add.at(steps, np.searchsorted(times, starts), sizes)
    np.subtract.at(steps, np.searchsorted(times, ends), sizes)
    return np.cumsum(steps[:-1])


def mean_live_between(
    starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """The sum of ``sizes`` of the spans ``[start, end)`` averaged over each interval
    ``[times[k-1], times[k])`` (``times`` ascending; NaN for the first, and for any interval
    of no width: two samples in one millisecond): each span adds its size times its overlap
    to the interval it begins in and the one it ends in, and its size to those it covers
    whole, added up in one running sum; integers all along, so no large running total loses
    the small differences."""
    count = len(times)
    first = np.searchsorted(times, starts, side="right")  # the interval it begins in
    last = np.searchsorted(times, ends, side="right")  # the interval it ends in
    edge = np.append(times, times[-1] if count else 0)  # (an interval past the last sample)
    across = first != last
    # in the interval it begins in: to its end, or to the interval's; then from the start of
    # the interval it ends in (nothing more for a span within one)
    ms_bytes = np.zeros(count + 1, dtype=np.int64)
    np.add.at(ms_bytes, first, (np.where(across, edge[first], ends) - starts) * sizes)
    np.add.at(ms_bytes, last, np.where(across, ends - edge[np.maximum(last - 1, 0)], 0) * sizes)
    whole = np.where(across, sizes, 0)  # its size over each interval it covers whole
    covering = np.zeros(count + 2, dtype=np.int64)
    np.add.at(covering, first + 1, whole)
    np.subtract.at(covering, last, whole)
    ms_bytes[1:] += np.cumsum(covering)[1 : count + 1] * np.diff(edge)
    widths = np.diff(times, prepend=times[:1]).astype(np.float64)
    means = np.full(count, np.nan)
    np.divide(ms_bytes[:count], widths, out=means, where=widths > 0)
    return means


class ExpirySweeps:
    """A server's expiry sweeps, every ``sweep_ms`` from ``sweep_ms`` on (none for None),
    for a sequential replay to free leases that ran out as the DES's sweep does: a shortfall
    reclaims every lease run out, so it must find only those the DES's table still holds,
    and a replay that never falls short holds only those (not every lease run out until its
    object comes back). ``next`` is when the next is due (never: an int past any
    millisecond, which a replay compares with a reference's time faster than math.inf)."""

    def __init__(self, sweep_ms: float | None) -> None:
        self.sweep_ms = sweep_ms
        self.next: float = 1 << 62 if sweep_ms is None else sweep_ms
        self._count = 1

    def take(self, now: int) -> list[tuple[int, int]]:
        """The sweeps due by ``now`` not yet taken, in turn: each as the millisecond it reads
        (it frees the leases run out by then) and the one it is over (:func:`sweep_ticks`)."""
        due = []
        while self.next <= now:
            due.append((math.floor(self.next), math.ceil(self.next)))
            self._count += 1
            self.next = self._count * cast(float, self.sweep_ms)
        return due


FIRST, TOLD = 1, 2
"""A span's flags in a :class:`SpanLog`: what freed it came first in its millisecond; it
told the lease's host."""


class SpanLog:
    """Each lease's span (:class:`LeaseSpans`), booked as the lease ends, for the run's peak
    of live bytes, its memory over time and its notices. Kept in columns of machine
    integers, 41 bytes a span: as a list of tuples, several times that, they were the
    largest part of a long trace's replay."""

    def __init__(self) -> None:
        # objects, starts, expires, freed, sizes
        self.columns = tuple(array("q") for _ in range(5))
        self.flags = array("b")  # FIRST and TOLD

    def book(
        self, obj: int, start: int, expires: int, now: int, size: int, first: bool = False
    ) -> int:
        """A lease of ``obj`` granted at ``start``, due to expire at ``expires``, that ended
        at ``now``, by what came ``first`` in that millisecond (a content change, which
        tells its host too) or not (:meth:`tell`). Returns the span's index."""
        objects, starts, expiries, freed, sizes = self.columns
        objects.append(obj)
        starts.append(start)
        expiries.append(expires)
        freed.append(now)
        sizes.append(size)
        self.flags.append(FIRST | TOLD if first else 0)
        return len(self.flags) - 1

    def tell(self, span: int) -> None:
        """What freed span ``span`` told its host so (known once its PUT burst is in)."""
        self.flags[span] |= TOLD

    def spans(self) -> LeaseSpans:
        columns = (np.frombuffer(column, dtype=np.int64) for column in self.columns)
        flags = np.frombuffer(self.flags, dtype=np.int8)
        return LeaseSpans(*columns, (flags & FIRST) > 0, (flags & TOLD) > 0)


PER_OBJECT_COUNTS = ("object_hits", "object_rejected", "object_inlined")
"""The per-object arrays that count references, as :data:`COUNTS` count them all."""


def counted_after(whole: dict[str, float], early: dict[str, float]) -> dict[str, float]:
    """A sequential run's counts from a cut on: those of the whole run (:func:`tally`) less
    those before it (``early``, taken as its first reference after the cut came, the frames
    before it done). A replay is causal, each reference faring alike whatever comes after
    it, so the references before the cut fared as in a run that ended there."""
    return {name: whole[name] - early[name] for name in (*COUNTS, *PER_OBJECT_COUNTS)}


def tally(misses: list[int], **counts) -> dict[str, float]:
    """One sequential run's counts, and its per-object ones; ``misses`` are indexed by the
    EndReason that preceded them."""
    return {
        "cold_misses": misses[EndReason.NEVER_INSTALLED] + misses[EndReason.RELEASED],
        "expired_misses": misses[EndReason.EXPIRED],
        "invalidated_misses": misses[EndReason.INVALIDATED],
        "evicted_misses": misses[EndReason.EVICTED],
        **counts,
    }
