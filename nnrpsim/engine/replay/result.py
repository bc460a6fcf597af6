"""What a replay reports, per TTL of its grid, and how one run's counts are assembled."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

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


SPAN_FIGURES = ("peak_live_bytes", "live_samples", "lease_samples", "live_means")
"""What the leases' live spans give a run (:func:`span_figures`), per TTL in a result."""


def stacked_spans(runs: list[dict]) -> dict[str, np.ndarray]:
    """The :data:`SPAN_FIGURES` of a grid's runs, one per TTL, stacked as a result keeps them
    (those the runs have: the samples only where they were asked for)."""
    return {name: np.array([run[name] for run in runs]) for name in SPAN_FIGURES if name in runs[0]}


def span_figures(
    starts: np.ndarray,
    ends: np.ndarray,
    sizes: np.ndarray,
    gone: np.ndarray,
    sample_times: np.ndarray | None,
) -> dict[str, int | np.ndarray]:
    """Of leases live on ``[start, end)`` with their sizes: the most bytes live at once, and
    with ``sample_times`` (ascending) the bytes and the leases live at each, and the bytes
    live on average since the sample before. A sample at t is the instant t, as the DES's
    sampler reads its lease table there: what the references of earlier milliseconds began
    and ended (not yet those of t's own), and a lease that ended first thing in t (``gone``:
    it ran out then, or a content change ended it) gone."""
    figures: dict[str, int | np.ndarray] = {"peak_live_bytes": peak_live(starts, ends, sizes)}
    if sample_times is not None:
        # (a lease of a TTL of 0 runs out as it begins: never live)
        before, until = sample_times - 1, np.maximum(ends - gone, starts)
        figures["live_samples"] = live_at(starts, until, sizes, before)
        figures["lease_samples"] = live_at(starts, until, np.ones_like(sizes), before)
        means = mean_live_between(starts, np.maximum(ends, starts), sizes, sample_times)
        figures["live_means"] = np.where(np.isnan(means), figures["live_samples"], means)
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


class SpanLog:
    """Each lease's live span, ``[start, end)`` with its size, booked as the lease ends, for
    the run's peak of live bytes and its memory over time (:func:`span_figures`). Kept in
    columns of machine integers, 25 bytes a span: as a list of tuples, about 170, they were
    the largest part of a long trace's replay."""

    def __init__(self) -> None:
        self.starts, self.ends, self.sizes = array("q"), array("q"), array("q")
        self.gone = array("b")

    def book(self, start: int, expires: int, now: int, size: int, first: bool = False) -> None:
        """A lease granted at ``start``, due to expire at ``expires``, that ended at ``now``:
        live until the first of the two; gone first thing in that millisecond if it ran out
        then or what ended it came ``first`` in it (a content change), else after a sample
        there (a reference's PUT, a close)."""
        self.starts.append(start)
        self.ends.append(expires if expires < now else now)
        self.gone.append(expires <= now or first)
        self.sizes.append(size)

    def figures(self, sample_times: np.ndarray | None) -> dict[str, int | np.ndarray]:
        starts, ends, sizes = (
            np.frombuffer(c, dtype=np.int64) for c in (self.starts, self.ends, self.sizes)
        )
        gone = np.frombuffer(self.gone, dtype=np.int8)
        return span_figures(starts, ends, sizes, gone, sample_times)


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
