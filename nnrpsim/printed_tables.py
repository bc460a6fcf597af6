"""The tables the command line prints: a study's summary (``nnrpsim run``) and its paired
differences from a baseline point (``nnrpsim compare``). Swept values read as the plots'
legends write them, byte metrics in the unit that suits their column; on a terminal, as wide
as it is."""

from __future__ import annotations

import shutil
import sys
import textwrap

import pandas as pd

from .display_units import bytes_scale, figures, value_text
from .metrics import UNITS
from .scenario.key_catalog import SHORT_KEYS
from .summaries import swept_columns

SUMMARY_COLUMNS = (
    "hit_rate",
    "fallback_rate",
    "mean_gpu_bytes",
    "wire_bytes_saved",
    "wire_saving",
    "p99_latency_ms",
)
"""The metrics printed; the files have them all."""

MAX_SUMMARY_ROWS = 40
"""Beyond this many points a printed table shows the first and last half of them: a big
sweep's ten thousand rows would scroll everything else away."""


def terminal_width() -> int | None:
    """The terminal's width if the output goes to one; None when piped (a row a line)."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def summary_table(summary: pd.DataFrame, width: int | None = None) -> str:
    """One row per point: its swept values, replications and failures, and the printed
    metrics a run measured (the vector engine's latency is left out). With a ``width``, the
    columns beyond it go on in blocks below, each led by the point (a summary of three swept
    keys takes 175 characters, and a terminal's own wrapping breaks every row in two)."""
    if summary.empty:
        return "no runs finished"
    swept = swept_columns(summary)
    columns = ["point", *swept, "replications", "failures", *_measured(summary)]
    return _printed(_readable(summary[columns], swept), width, "summary.csv has them all")


COMPARE_ANY = "nnrpsim compare RESULTS --baseline KEY=VALUE"
"""The compare command :func:`summary_note` names where it is given none of the study's."""
HEADLINE = "hit_rate"
"""The metric whose intervals :func:`summary_note` gives: every study measures it."""


def summary_note(
    summary: pd.DataFrame, width: int | None = None, compare: str = COMPARE_ANY
) -> str:
    """What the summary's bare means are: over how many replications a point, how wide the
    headline metric's 95 % intervals run (two replications give t intervals twelve times the
    standard error), and, the points sharing their random numbers, where their differences
    read sharper: the ``compare`` command (for this study, one to copy). Without it, four
    figures read as exact. Wrapped to ``width``, as the table is."""
    done = summary[summary["replications"] > 0] if not summary.empty else summary
    if done.empty:
        return ""
    least, most = int(done["replications"].min()), int(done["replications"].max())
    if most == 1:
        lines = ["one replication a point: no intervals (study.replications: 2 or more)"]
    else:
        over = f"{least}-{most}" if least < most else f"{most}"
        lines = [f"means over {over} replications a point"]
        half = done.get(f"{HEADLINE}_ci95", pd.Series(dtype=float)).max()
        if pd.notna(half):
            lines[0] += (
                f"; {HEADLINE}'s 95 % interval up to ± {figures(half, 2)} (summary.csv has "
                "each metric's)"
            )
        if len(done) > 1:
            lines.append(
                f"the points share their random numbers: {compare} gives each point's "
                "difference from the point at that value (its other swept values alike), with "
                "sharper intervals"
            )
    return "\n".join(textwrap.fill(line, width) if width else line for line in lines)


def differences_table(differences: pd.DataFrame, width: int | None = None) -> str:
    """One row per point compared (:func:`~nnrpsim.differences.paired_differences`): its
    swept values, its baseline point, the replications paired, and each printed metric's
    mean difference from the baseline's with its 95 % half-width (``+0.0236 ± 0.0006``)."""
    swept = list(differences.columns[1 : differences.columns.get_loc("baseline_point")])
    metrics = _measured(differences)
    columns = ["point", *swept, "baseline_point", "pairs", *metrics]
    shown = _readable(differences[columns + [f"{m}_ci95" for m in metrics]], swept)
    return _printed(shown, width, "nnrpsim.compare returns them all")


def _measured(table: pd.DataFrame) -> list[str]:
    """The printed metrics the table has a value of."""
    return [c for c in SUMMARY_COLUMNS if c in table and table[c].notna().any()]


def _plus_minus(mean: float, half: float) -> str:
    if pd.isna(mean):
        return "n/a"
    signed = shown if (shown := figures(mean, 4)).startswith("-") else f"+{shown}"
    if pd.isna(half):
        return signed
    return f"{signed} ± {figures(half, 2)}"  # (two figures: 110, not 1.1e+02)


def _readable(table: pd.DataFrame, swept: list[str]) -> pd.DataFrame:
    """Swept values as the legends write them (``32 MiB``, ``30 s``), under the shortest key
    ending that names each; byte metrics in the binary unit that suits their column, named in
    the header (``mean_gpu_bytes[MiB]``); a metric with its interval beside it
    (``<metric>_ci95``) as one text, ``+0.0236 ± 0.0006``."""
    shown = table.copy()
    names = {key: SHORT_KEYS.get(key, key) for key in swept}
    for key in swept:
        shown[key] = [value_text(key, value) for value in shown[key]]
    for metric in SUMMARY_COLUMNS:
        if metric not in shown:
            continue
        half = shown.pop(f"{metric}_ci95") if f"{metric}_ci95" in shown else None
        if UNITS.get(metric) == "bytes":
            per_unit, unit = bytes_scale(shown[metric].abs().to_numpy())
            shown[metric] /= per_unit
            half = None if half is None else half / per_unit
            names[metric] = f"{metric}[{unit}]"
        if half is not None:
            shown[metric] = [
                _plus_minus(mean, width) for mean, width in zip(shown[metric], half, strict=True)
            ]
    return shown.rename(columns=names)


def _printed(shown: pd.DataFrame, width: int | None, where_all: str) -> str:
    """The table in blocks as wide as ``width``; beyond :data:`MAX_SUMMARY_ROWS` rows, how
    many more there are and where they all are."""
    table = _in_blocks(shown, width)
    if len(shown) <= MAX_SUMMARY_ROWS:
        return table
    left = len(shown) - MAX_SUMMARY_ROWS
    return f"{table}\n({left:,} of {len(shown):,} points not shown: {where_all})"


def _in_blocks(frame: pd.DataFrame, width: int | None) -> str:
    """``frame`` as text; with a ``width``, in blocks of the columns that fit it, one under
    another, each led by the first column (a block holds one column at least)."""

    def text(columns: list[str]) -> str:
        return frame[columns].to_string(
            index=False, float_format=lambda v: figures(v, 4), max_rows=MAX_SUMMARY_ROWS
        )

    lead, *rest = frame.columns
    if width is None:
        return text(list(frame.columns))
    blocks: list[list[str]] = [[]]
    for column in rest:
        wider = text([lead, *blocks[-1], column])
        if blocks[-1] and max(map(len, wider.splitlines())) > width:
            blocks.append([])
        blocks[-1].append(column)
    return "\n\n".join(text([lead, *block]) for block in blocks)
