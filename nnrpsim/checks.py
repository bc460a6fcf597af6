"""What a finished study must tell its reader beside its figures: runs that failed, rules the
model broke or load it could not keep up with, and a warm-up too short for its memory's climb.
``nnrpsim run`` prints these lines on stderr; :class:`nnrpsim.study.StudyResult` keeps them."""

from __future__ import annotations

import pandas as pd

from .display_units import points_text
from .scenario import Scenario, sweep_points
from .warmup import climb_warning, first_fault_ms


def study_warnings(
    scenario: Scenario, runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame
) -> list[str]:
    """Every warning the runs of ``scenario``'s sweep call for."""
    return [
        *violation_warnings(summary),
        *warmup_warnings(scenario, series),
        *failure_warnings(runs),
    ]


def warmup_warnings(scenario: Scenario, series: pd.DataFrame) -> list[str]:
    """A warning for each set of DES points that share their timing (warm-up, duration, first
    fault) under a steady load, whose memory, averaged over their runs, settles after the
    warm-up (:func:`nnrpsim.warmup.climb_warning`)."""
    if series.empty:
        return []
    points = sweep_points(scenario)
    timings: dict[tuple[float, float, float | None], list[int]] = {}
    for point in points:
        study, faults = point.scenario.study, point.scenario.faults
        if point.scenario.engine == "des" and not point.scenario.workload.follows_a_log:
            until = first_fault_ms(faults.restart_at, faults.memory_pressure_at)
            timings.setdefault((study.warmup, study.duration, until), []).append(point.index)
    warnings = []
    for (warmup, _, until), indices in timings.items():
        part = series[series["point"].isin(indices)]
        whose = "all points" if len(indices) == len(points) else points_text(indices)
        warning = None if part.empty else climb_warning(part, warmup, until, whose)
        if warning:
            warnings.append(warning)
    return warnings


def failure_warnings(runs: pd.DataFrame) -> list[str]:
    """Runs that raised are recorded, not fatal to the study; say so, or the table's
    ``failures`` column would be the only sign."""
    if runs.empty or "error" not in runs:
        return []
    failed = runs[runs["error"].notna()]
    if failed.empty:
        return []
    points = points_text(sorted(failed["point"].unique()))
    return [
        f"warning: {points}: {len(failed)} of {len(runs)} runs failed, the first with "
        f"{failed['error'].iloc[0]!r}; manifest.json lists each, and --resume runs them again"
    ]


def violation_warnings(summary: pd.DataFrame) -> list[str]:
    """Invariant violations mean a bug, except operations that sessions fell behind on: a link,
    a server's workers, or a session's own transfers (at most max_in_flight at a time), could
    not keep up."""
    if summary.empty or "invariant_violations" not in summary:
        return []
    flagged = summary[summary["invariant_violations"] > 0]
    behind = flagged["invariant_violations"] <= flagged["operations_behind"] + 1e-9
    warnings = []
    if behind.any():
        points = points_text(flagged["point"][behind].tolist())
        warnings.append(
            f"warning: {points}: sessions fell behind the offered load (a link, see "
            "peak_link_utilisation; the server's workers, see peak_server_load; or their own "
            "max_in_flight window), and operations not done 60 s after the end count as never "
            "completed (invariant_violations)"
        )
    if (~behind).any():
        points = points_text(flagged["point"][~behind].tolist())
        warnings.append(
            f"warning: {points}: invariant_violations beyond the operations sessions fell "
            "behind on: the model broke a rule (a bug); runs.parquet has each run's count"
        )
    return warnings
