"""After a run: runs that failed, and invariant violations (a bug, or sessions that fell
behind their load)."""

from __future__ import annotations

import pandas as pd

from ..display_units import points_text


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
