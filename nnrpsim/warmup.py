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

import numpy as np
import pandas as pd

BATCH = 5
"""Samples per batch mean: MSER-5."""

MIN_BATCHES = 4
"""Fewer batch means than this say nothing of where a series settles."""

BIAS_TOLERANCE = 0.01
"""A warm-up shorter than the settling time moves the mean memory by at most this fraction
before ``nnrpsim run`` warns: about the figures' own precision."""


def mser_truncation(values: np.ndarray) -> int | None:
    """How many leading samples of ``values`` to drop (a multiple of :data:`BATCH`), at most
    half of them; None for a series too short to tell. A cut at the half says the series had
    not settled by then (a run too short for its load's swings, or a load that changes)."""
    count = len(values) // BATCH
    if count < MIN_BATCHES:
        return None
    means = np.asarray(values[: count * BATCH], dtype=np.float64).reshape(count, BATCH).mean(1)
    # suffix sums: entry d covers batches d..count-1
    total = np.cumsum(means[::-1])[::-1]
    squares = np.cumsum((means * means)[::-1])[::-1]
    kept = np.arange(count, 0, -1, dtype=np.float64)
    spread = np.maximum(squares - total * total / kept, 0.0)  # (rounding can dip below 0)
    statistic = spread / (kept * kept)
    return int(np.argmin(statistic[: count // 2 + 1])) * BATCH


def held_per_sample(memory: dict[str, np.ndarray] | pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """A run's sample times and the bytes held at each, summed over its servers."""
    times, per_sample = np.unique(np.asarray(memory["time_ms"]), return_inverse=True)
    held = np.bincount(per_sample, weights=np.asarray(memory["held_bytes"]), minlength=len(times))
    return times, held


def memory_settled_ms(times: np.ndarray, held: np.ndarray, until_ms: float | None) -> float:
    """When the bytes ``held`` at sample ``times`` settle (MSER-5), in simulated ms; only the
    samples before ``until_ms`` (a fault, which changes the memory on purpose) count. NaN
    when too few samples come before it."""
    if until_ms is not None:
        times, held = times[times < until_ms], held[times < until_ms]
    dropped = mser_truncation(held)
    return float("nan") if dropped is None else float(times[dropped])


def warmup_bias(series: pd.DataFrame, warmup_ms: float, settled_ms: float) -> float:
    """How far one run's mean memory held after ``warmup_ms`` lies from its mean after
    ``settled_ms``, as a fraction of the latter (0 when the warm-up lasts past the settling;
    NaN when that cannot be told, or nothing is held once settled)."""
    if math.isnan(settled_ms):
        return float("nan")
    if settled_ms <= warmup_ms:
        return 0.0
    times, held = held_per_sample(series)
    settled = held[times >= settled_ms].mean()
    if not settled > 0:
        return float("nan")
    return float(held[times >= warmup_ms].mean() / settled - 1.0)


def warmup_warnings(runs: pd.DataFrame, series: pd.DataFrame, warmup_ms: float) -> list[str]:
    """A warning per warm-up (``warmup_ms``, or each swept ``study.warmup``) whose median run
    counts enough of the memory's climb to move ``mean_gpu_bytes`` by more than
    :data:`BIAS_TOLERANCE`; none for runs without samples (the vector engine)."""
    if series.empty or "memory_settled_s" not in runs:
        return []
    done = runs[runs["error"].isna() & runs["memory_settled_s"].notna()]
    warmups = done["study.warmup"] if "study.warmup" in done else pd.Series(warmup_ms, done.index)
    by_run = dict(tuple(series.groupby(["point", "replication"])))
    warnings = []
    for warmup, group in done.groupby(warmups, sort=True):
        biases = [
            warmup_bias(by_run[(run.point, run.replication)], warmup, run.memory_settled_s * 1e3)
            for run in group.itertuples()
            if (run.point, run.replication) in by_run
        ]
        bias = float(np.nanmedian(biases)) if any(map(math.isfinite, biases)) else math.nan
        if not abs(bias) > BIAS_TOLERANCE:
            continue
        settled = float(group["memory_settled_s"].median())
        warnings.append(
            f"warning: the GPU memory held settles at {settled:.0f} s (MSER-5, median of "
            f"{len(group)} runs), after the {warmup / 1e3:g} s warm-up: mean_gpu_bytes is "
            f"{abs(bias) * 100:.1f} % {'below' if bias < 0 else 'above'} its settled level in the "
            "median run; lengthen study.warmup (memory_settled_s in runs.parquet has each run's)"
        )
    return warnings
