"""A study's runs summed up: each sweep point's metrics, their means over the replications and
the 95 % intervals of those means, and the point's swept values."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .metrics import KIND_METRICS, METRICS, wire_saving
from .student_t import t95


def means_and_intervals(frame: pd.DataFrame, by: list[str], metrics: Iterable[str]) -> pd.DataFrame:
    """Per group of ``by`` (sorted): each metric's mean over the rows that have it, and the
    half-width of its 95 % confidence interval, t(n-1) * s / sqrt(n) over those n rows (NaN
    for fewer than two: a failed replication is left out); columns ``metric`` and
    ``metric_ci95`` in turn, NaN for a metric the frame lacks. One grouped pass per statistic,
    not a pass per group: a sweep of a thousand points took seconds."""
    metrics = list(metrics)
    present = [metric for metric in metrics if metric in frame]
    grouped = frame.groupby(by, sort=True)[present]
    counts = grouped.count()
    t = counts.map(lambda n: t95(n - 1) if n >= 2 else math.nan)
    half = t * grouped.std(ddof=1) / np.sqrt(counts)
    means = grouped.mean()
    columns = {}
    for metric in metrics:
        columns[metric] = means[metric] if metric in present else math.nan
        columns[f"{metric}_ci95"] = half[metric] if metric in present else math.nan
    return pd.DataFrame(columns, index=means.index, dtype=np.float64)


def with_derived_metrics(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with ``wire_saving``, derived from their ``wire_bytes``,
    ``wire_bytes_resent`` and ``wire_bytes_saved``, beside them: for every run, those an
    earlier version wrote too (resumed, or compared; one that counted no resent bytes, before
    2026-12-05, as if none were), and none for a failed run."""
    if runs.empty or "wire_bytes_saved" not in runs:
        return runs
    resent = runs["wire_bytes_resent"].fillna(0.0) if "wire_bytes_resent" in runs else 0.0
    saving = wire_saving(runs["wire_bytes"], runs["wire_bytes_saved"], resent)
    runs = runs.drop(columns="wire_saving", errors="ignore")
    runs.insert(runs.columns.get_loc("wire_bytes_saved") + 1, "wire_saving", saving)
    return runs


def with_mean_held(series: pd.DataFrame) -> pd.DataFrame:
    """A study's time series with ``mean_held_bytes`` (the bytes held on average since the
    sample before) for every run: a run an earlier version wrote (resumed, or a folder
    plotted again) sampled only the bytes held at each instant (before 2026-12-06), which
    stand in for its means."""
    if series.empty or "held_bytes" not in series:
        return series
    held = series["held_bytes"].astype(np.float64)
    if "mean_held_bytes" not in series:
        series = series.copy()
        series.insert(series.columns.get_loc("held_bytes") + 1, "mean_held_bytes", held)
        return series
    return series.assign(mean_held_bytes=series["mean_held_bytes"].fillna(held))


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point: swept parameters (its first run's), the count of replications
    that finished and of those that failed, then each metric's mean and ``_ci95`` over those
    that finished."""
    if runs.empty:
        return pd.DataFrame()
    params = run_params(runs)
    firsts = runs.drop_duplicates("point").set_index("point").sort_index()
    ok = runs[runs["error"].isna()]
    good = ok.groupby("point").size().reindex(firsts.index, fill_value=0)
    counts = pd.DataFrame({"replications": good, "failures": runs.groupby("point").size() - good})
    stats = means_and_intervals(ok, ["point"], METRICS).reindex(firsts.index)
    summary = pd.concat([firsts[params], counts, stats], axis=1).rename_axis("point")
    return summary.reset_index().astype({"point": np.int64})


def run_params(runs: pd.DataFrame) -> list[str]:
    """The swept keys of a runs table: its columns but a run's own and its metrics."""
    reserved = {"point", "replication", "seed", "error", "wall_s", *METRICS}
    return [column for column in runs.columns if column not in reserved]


def swept_columns(summary: pd.DataFrame) -> list[str]:
    """The swept keys of a summary: its columns between ``point`` and ``replications``, as
    :func:`summarize` lays them out (``engine`` among them, a key without a dot)."""
    return list(summary.columns[1 : summary.columns.get_loc("replications")])


def summarize_kinds(kinds: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point and object kind: the point's swept parameters, then each of the
    :data:`KIND_METRICS`' mean over the replications and ``_ci95`` (empty without runs)."""
    if kinds.empty:
        return pd.DataFrame()
    params = swept_columns(summary)
    stats = means_and_intervals(kinds, ["point", "kind"], KIND_METRICS).reset_index()
    return summary[["point", *params]].merge(stats.astype({"point": np.int64}), on="point")
