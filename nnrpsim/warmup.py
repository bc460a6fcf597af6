"""Was a run's warm-up long enough? Where its GPU memory settles, by the MSER-5 rule.

A run starts with an empty cache: the memory held climbs while sessions arrive, for a session
length or more, and a warm-up shorter than that climb leaves part of it in ``mean_gpu_bytes``.
MSER-5 (White, 1997; Franklin and White, 2008) finds the truncation point of an output series:
of the batch means of five samples, drop the first d, where d (within the first half) makes
the squared standard error of the remaining mean, sum((Y - mean)^2) / n^2, least. A series
that keeps changing throughout (a load that grows, as an arrival trace's may) has no such
point: the least statistic then lies at the end of the search, half the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .model.workload_means import written_warmup_ms
from .student_t import t_quantile

if TYPE_CHECKING:  # (a study's workers, which import this, run without pandas: see tasks.py)
    import pandas as pd

BATCH = 5
"""Samples per batch mean: MSER-5."""

MIN_BATCHES = 4
"""Fewer batch means than this say nothing of where a series settles."""

BIAS_TOLERANCE = 0.01
"""A warm-up shorter than the settling time moves the mean memory by at most this fraction
before ``nnrpsim run`` warns: about the figures' own precision."""


FAMILY_LEVEL = 0.95
"""How sure the check of points judged one by one is that no point it names swings by
chance: the confidence of all their intervals at once (:func:`point_climbs`)."""


def mser_truncation(values: np.ndarray) -> int | None:
    """How many leading samples of ``values`` to drop (a multiple of :data:`BATCH`), at most
    half of them; None for a series too short to tell. A cut at the half says the series had
    not settled by then (a run too short for its load's swings, or a load that changes)."""
    count = len(values) // BATCH
    if count < MIN_BATCHES:
        return None
    means = np.asarray(values[: count * BATCH], dtype=np.float64).reshape(count, BATCH).mean(1)
    # Centred on the last batch (the statistic does not change): bytes held run to 1e9 and
    # more, and sum(Y^2) - sum(Y)^2 / n of raw values would leave rounding noise where a level
    # tail's spread is 0, and pick a cut at random along it.
    means -= means[-1]
    # suffix sums: entry d covers batches d..count-1
    total = np.cumsum(means[::-1])[::-1]
    squares = np.cumsum((means * means)[::-1])[::-1]
    kept = np.arange(count, 0, -1, dtype=np.float64)
    spread = np.maximum(squares - total * total / kept, 0.0)  # (rounding can dip below 0)
    statistic = spread / (kept * kept)
    return int(np.argmin(statistic[: last_cut(len(values)) // BATCH + 1])) * BATCH


def last_cut(samples: int) -> int:
    """The latest cut MSER-5 considers among ``samples``: half the batches. A cut there says
    the series had not settled by then."""
    return (samples // BATCH) // 2 * BATCH


def held_per_sample(memory: dict[str, np.ndarray] | pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """A run's sample times and the bytes held on average since the sample before each (the
    first: then), summed over its servers: the memory over time, which no sample's instant
    against the expiry sweep's ticks moves."""
    times, per_sample = np.unique(np.asarray(memory["time_ms"]), return_inverse=True)
    weights = np.asarray(memory["mean_held_bytes"])
    return times, np.bincount(per_sample, weights=weights, minlength=len(times))


def memory_settled_ms(times: np.ndarray, held: np.ndarray, until_ms: float | None) -> float:
    """When the bytes ``held`` at sample ``times`` settle (MSER-5), in simulated ms; only the
    samples before ``until_ms`` (a fault, which changes the memory on purpose) count. NaN
    when too few samples come before it."""
    if until_ms is not None:
        times, held = times[times < until_ms], held[times < until_ms]
    dropped = mser_truncation(held)
    return float("nan") if dropped is None else _settled_from(times, dropped)


def _settled_from(times: np.ndarray, cut: int) -> float:
    """Where the memory that a cut of the first ``cut`` samples at ``times`` keeps begins: each
    sample is the mean since the one before, so the first kept covers the interval after the
    sample before it (the first sample, the bytes held at its instant, begins at it)."""
    return float(times[cut - 1] if cut > 0 else times[0])


def climb_warning(
    series: pd.DataFrame, warmup_ms: float, until_ms: float | None, whose: str
) -> str | None:
    """A warning when the memory held, averaged over the runs in ``series`` (samples at the
    same times: Welch's averaging, which keeps the climb every run shares and evens out each
    run's own swings), settles after ``warmup_ms`` by enough to move ``mean_gpu_bytes`` by
    more than :data:`BIAS_TOLERANCE`; ``whose`` names the runs. Each point's memory counts as
    a fraction of its own late level (its mean over the second half of the run), so a point
    that holds little weighs as much as one that holds much. The warning gives the bias's
    95 % interval over the replications and, where the memory settles within the search, the
    least warm-up that keeps the bias within the tolerance. None if the memory does not
    settle late enough to matter, or that cannot be told."""
    climb = _climb(_per_run(series), warmup_ms, until_ms)
    return None if climb is None else f"warning: {whose}: {climb.text(warmup_ms)}"


def point_climbs(
    series: pd.DataFrame, warmup_ms: float, until_ms: float | None
) -> list[tuple[str, int]]:
    """Each point of ``series`` whose own memory, averaged over its replications, settles
    after ``warmup_ms`` by enough to move its ``mean_gpu_bytes`` by more than
    :data:`BIAS_TOLERANCE`, and by more than its replications' own swings: the text of its
    warning (:func:`climb_warning`'s but for whose runs), and the point. Where the points
    climb differently (a kind cached only in long sessions, a long TTL), the mean over them
    that :func:`climb_warning` judges can hide one point's climb among the others' levels.
    Only a climb told apart from the swings is named: its interval over the replications,
    95 % for all the points judged at once (Bonferroni's: each point's at 1 - 0.05 / points),
    holds no 0, since of many points judged one by one some would swing past 1 % by chance."""
    per_run = _per_run(series)
    times, by_point = _own_levels(per_run.groupby(level=["point", "time_ms"]).mean())
    level = 1 - (1 - FAMILY_LEVEL) / max(len(by_point.columns), 1)
    found = []
    for point in by_point.columns:  # (most settle in time: judged whole only where not)
        if _settling(times, by_point[point].to_numpy(), warmup_ms, until_ms) is None:
            continue
        climb = _climb(per_run.xs(point, level="point", drop_level=False), warmup_ms, until_ms)
        if climb is not None and abs(climb.bias) > climb.half(level):  # (NaN for one: never)
            found.append((climb.text(warmup_ms), int(point)))
    return found


def _per_run(series: pd.DataFrame) -> pd.Series:
    """The bytes held of ``series``, summed over servers: by point, replication and time."""
    return series.groupby(["point", "replication", "time_ms"])["mean_held_bytes"].sum()


@dataclass(frozen=True)
class _Climb:
    """Where some runs' memory settles after their warm-up, and what that leaves in
    ``mean_gpu_bytes``."""

    settled_ms: float
    still: bool  # (still changing at the end of the search, half the run)
    bias: float  # (a fraction of the settled level; below it where negative)
    error: float  # (the bias's standard error over the replications; NaN for one)
    replications: int
    least_ms: float  # (the least warm-up that keeps the bias within the tolerance; NaN: still)

    def half(self, level: float = 0.95) -> float:
        """The half-width of the bias's interval over the replications at ``level`` (NaN for
        one replication)."""
        if self.replications < 2:
            return math.nan
        return t_quantile(1 - (1 - level) / 2, self.replications - 1) * self.error

    def text(self, warmup_ms: float) -> str:
        """The warning, but for whose runs it is of."""
        half = self.half()
        over = (
            f" (± {half * 100:.1f} %, 95 % over its {self.replications} replications)"
            if self.replications > 1
            else ""
        )
        at = f"{self.settled_ms / 1e3:.0f} s"
        when = f"is still changing at {at}, half the run" if self.still else f"settles at {at}"
        if self.still:
            advice = "lengthen study.duration and study.warmup"
        else:
            advice = f"a warm-up of {self.least_ms / 1e3:g} s or more keeps it within 1 %"
        if abs(self.bias) <= half:  # (the interval holds 0; NaN for one replication: none)
            advice += ", or add replications to tell the climb from their own swings"
        return (
            f"the GPU memory held, averaged over the runs, {when} (MSER-5), after the "
            f"{warmup_ms / 1e3:g} s warm-up: mean_gpu_bytes is {abs(self.bias) * 100:.1f} %"
            f"{over} {'below' if self.bias < 0 else 'above'} its settled level; {advice} "
            "(gpu_memory_over_time.png shows the climb)"
        )


def _climb(per_run: pd.Series, warmup_ms: float, until_ms: float | None) -> _Climb | None:
    """:func:`climb_warning`'s judgement of the runs of ``per_run`` (:func:`_per_run`); None
    where it finds nothing to warn of."""
    times, held = _of_own_levels(per_run.groupby(level=["point", "time_ms"]).mean())
    settling = None if held is None else _settling(times, held, warmup_ms, until_ms)
    if settling is None:
        return None
    settled_ms, still, bias = settling
    each = [  # (each replication's own: the runs of one share their sessions)
        _off(*_of_own_levels(per_run.xs(replication, level="replication")), warmup_ms, settled_ms)
        for replication in per_run.index.unique("replication")
    ]
    least = (
        math.nan
        if still
        else written_warmup_ms(_least_within(times, held, warmup_ms, settled_ms), times[-1])
    )
    return _Climb(settled_ms, still, bias, _standard_error(each), len(each), least)


def _settling(
    times: np.ndarray, held: np.ndarray, warmup_ms: float, until_ms: float | None
) -> tuple[float, bool, float] | None:
    """Where ``held`` settles (MSER-5, before ``until_ms``), whether that is the end of the
    search (still changing), and the bias a warm-up of ``warmup_ms`` leaves: None where it
    settles within the warm-up, within the tolerance, or cannot be told."""
    judged = len(times) if until_ms is None else int((times < until_ms).sum())  # (a prefix)
    cut = mser_truncation(held[:judged])
    if cut is None or not (settled_ms := _settled_from(times, cut)) > warmup_ms:
        return None
    bias = _off(times, held, warmup_ms, settled_ms)
    if abs(bias) <= BIAS_TOLERANCE:
        return None
    return settled_ms, cut == last_cut(judged), bias


def _of_own_levels(held: pd.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """The sample times of ``held`` (bytes by point and time) and, at each, the points' mean
    of their memory as a fraction of its own late level; None where no point holds any."""
    times, fractions = _own_levels(held)
    if fractions.empty:
        return times, None
    return times, fractions.mean(axis=1).to_numpy(dtype=np.float64)


def _own_levels(held: pd.Series) -> tuple[np.ndarray, pd.DataFrame]:
    """The sample times of ``held`` (bytes by point and time) and each point's memory at
    them as a fraction of its own late level (its mean over the second half of the run), a
    column a point; points that hold nothing then are left out."""
    per_point = held.unstack("point")
    times = per_point.index.to_numpy(dtype=np.float64)
    late = per_point[times >= times[len(times) // 2]].mean()
    return times, per_point.loc[:, late > 0] / late[late > 0]


def _off(times: np.ndarray, held: np.ndarray | None, warmup_ms: float, settled_ms: float) -> float:
    """How far the mean of ``held`` from the warm-up on (the samples after it: each the mean
    since the one before) lies from its mean after the settling point (:func:`_settled_from`),
    as a fraction of the latter: what the warm-up leaves in ``mean_gpu_bytes`` (0 where
    nothing is held)."""
    if held is None or not (level := held[times > settled_ms].mean()) > 0:
        return 0.0
    return float(held[times > warmup_ms].mean() / level - 1.0)


def _least_within(
    times: np.ndarray, held: np.ndarray, warmup_ms: float, settled_ms: float
) -> float:
    """The least warm-up from ``warmup_ms`` to the settling point (a sample's time: any up to
    the next measures the same samples) after which no longer one leaves the mean more than
    :data:`BIAS_TOLERANCE` from its settled level: less than the settling point where the
    climb's last part weighs little, which waits for it whole."""
    candidates = times[(times >= warmup_ms) & (times <= settled_ms)]
    beyond = [abs(_off(times, held, w, settled_ms)) > BIAS_TOLERANCE for w in candidates]
    last_beyond = max((i for i, out in enumerate(beyond) if out), default=-1)
    return float(candidates[min(last_beyond + 1, len(candidates) - 1)])


def _standard_error(biases: list[float]) -> float:
    """The standard error of the mean of the bias over the replications, each judged on its
    own (every point of a replication draws the same sessions, so averaging over points evens
    out none of a replication's own slow swings: only more replications tell them from a
    climb); NaN for one replication."""
    if len(biases) < 2:
        return math.nan
    return float(np.std(biases, ddof=1)) / math.sqrt(len(biases))


def describe_warmups(warmups_ms: list[float]) -> str:
    """What ``warmup: auto`` chose, by point (``warmups_ms[i]`` is point i's), with the points
    each is theirs: ``nnrpsim validate`` says it before a study, ``nnrpsim run`` after it."""
    # (here: text needs pandas, which a study's workers, that import this, run without)
    from .display_units import points_text, scenario_text
    from .lines_alike import DESCRIBED_BEYOND, lines_by_text

    chosen = lines_by_text(
        ((scenario_text("study.warmup", warmup), index) for index, warmup in enumerate(warmups_ms)),
        DESCRIBED_BEYOND,
    )
    if len(chosen) == 1 and len(chosen[0][0]) == len(warmups_ms):
        listed = chosen[0][1]
    else:
        listed = "; ".join(f"{points_text(indices)}: {text}" for indices, text in chosen)
    return (
        f"warm-up{'s' if len(set(warmups_ms)) > 1 else ''} (auto: the sessions at once within "
        f"1 % of their steady number, averaged over the measured time): {listed}"
    )
