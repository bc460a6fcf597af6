"""What each byte of the GPU budget buys: a metric against the memory it took, whatever
was swept."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..display_units import bytes_scale, described
from ..summaries import swept_columns
from .axes import geometric_middle, log_scale, spans_decades
from .lines import lines_of, marker_of, spread
from .metric import is_numeric, metric_axis, metric_scale
from .notes import interval_note
from .placement import label_points, place_legend

MAX_TRADEOFF_LABELS = 12
"""Beyond this many sweep points, unjoined, a trade-off plot names none (summary.csv has them)."""


def tradeoff_series(
    summary: pd.DataFrame, swept: list[str], drawn: tuple[str, ...] = ()
) -> tuple[str | None, list[tuple[str, pd.DataFrame]]]:
    """What a trade-off plot draws: the swept key its lines follow (the GPU budget if swept,
    else the first numeric one; None: no lines), and its series, each with its legend label.
    Along a key, a line per combination of the other swept values (``lines_of``: those equal
    in the ``drawn`` columns are one), its points in that key's order; without one, each
    sweep point on its own (named, up to ``MAX_TRADEOFF_LABELS`` of them)."""
    numeric = [key for key in swept if is_numeric(summary, key)]
    along = "topology.gpu_memory" if "topology.gpu_memory" in numeric else next(iter(numeric), None)
    if along is not None:
        lines = lines_of(summary, along, swept, drawn)
        return along, [(label, part.sort_values(along)) for label, part in lines]
    if len(summary) > MAX_TRADEOFF_LABELS or not swept:
        return None, [("", summary)]
    return None, [
        (described(swept, [row[k] for k in swept]), summary.loc[[index]])
        for index, row in summary.iterrows()
    ]


def tradeoff_figure(
    summary: pd.DataFrame, metric: str, swept: list[str] | None = None
) -> Figure | None:
    """``metric`` against the GPU memory it took, as ``plots/`` draws it: what each byte of
    the budget buys, whatever was swept (budgets, TTLs, kinds, policies); see
    :func:`tradeoff_series`. None where no run measured one of the two (or the version that
    wrote the summary did not). ``swept``: the summary's swept keys, if not given."""
    if metric not in summary:
        return None
    if summary["mean_gpu_bytes"].isna().all() or summary[metric].isna().all():
        return None
    swept = swept_columns(summary) if swept is None else swept
    memory = summary["mean_gpu_bytes"]
    x_log = spans_decades(memory)
    factor, unit = bytes_scale(geometric_middle(memory) if x_log else memory.to_numpy())
    y_log = spans_decades(summary[metric])
    y_factor, y_unit = metric_scale(summary[metric], metric, y_log)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn = ("mean_gpu_bytes", metric, f"{metric}_ci95")
    along, every_series = tradeoff_series(summary, swept, drawn)
    series = spread(every_series) if along is not None else every_series
    for label, part in series:
        x, y = part["mean_gpu_bytes"] / factor, part[metric] / y_factor
        ax.errorbar(
            x,
            y,
            yerr=np.nan_to_num(part[f"{metric}_ci95"] / y_factor),
            fmt="o" if along is None else f"{marker_of(len(part))}-",
            capsize=2,
            label=label or None,
        )
    ax.set_xlabel(f"mean GPU memory held by cached objects ({unit})")
    ax.set_ylabel(f"{metric.replace('_', ' ')} ({y_unit})")
    if x_log:
        log_scale(ax, "x")
    else:
        ax.set_xlim(left=0)  # (memory held is never below zero, nor when all points hold none)
    metric_axis(ax, y_log, y_unit)
    ax.grid(alpha=0.3)
    left_out = 0 if along is None else label_points(ax, along, series, factor, metric, y_factor)
    interval_note(ax, summary, "bars", (len(series), len(every_series)), along, left_out > 0)
    if any(label for label, _ in series):
        place_legend(ax, fontsize=6)
    return fig
