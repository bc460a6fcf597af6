"""A metric against a swept key: the figure ``plots/`` draws for each, with its axes' labels
and units."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ..display_units import bytes_scale, described, key_scale
from ..metrics import UNITS
from ..summaries import swept_columns
from .axes import (
    geometric_middle,
    geometric_steps,
    log_scale,
    spans_decades,
    swept_ticks,
    within_range,
)
from .lines import line_with_band, lines_of, spread
from .notes import interval_note
from .placement import place_legend

KNOWN_LABELS = {
    "host_policy.ttl_fraction": "lease TTL hint (fraction of the expected session length)",
    "host_policy.ttl_hint": "lease TTL hint",
    "workload.invalidations.rate_per_s": "invalidation rate (content changes per object per s)",
    "topology.gpu_memory": "GPU memory budget",
    "host_policy.renew_margin": "renewal margin (fraction of the TTL left when a use renews)",
    "host_policy.refused_put_backoff": "time a refused object is inlined before another CACHE_PUT",
    "workload.sessions.arrivals.time_scale": "arrival log's time scale (factor on its times)",
    "workload.trace.time_scale": "trace's time scale (factor on its times)",
    "workload.objects.size.median": "median object size",
    "workload.sessions.rate_per_s": "session arrivals (per s per host)",
    "workload.operations.rate_per_s": "operations (per s per session)",
}
"""Axis labels of common keys; a key with units (``KEY_UNITS``) gets its unit appended."""


def axis_label(key: str, unit: str) -> str:
    text = KNOWN_LABELS.get(key, key)
    return f"{text} ({unit})" if unit else text


def as_numbers(values: pd.Series, factor: float = 1.0) -> pd.Series:
    return pd.to_numeric(values, errors="coerce") * factor


def metric_figure(
    summary: pd.DataFrame, key: str, metric: str, swept: list[str] | None = None
) -> Figure:
    """``metric`` against the swept ``key``, as ``plots/`` draws it (units on both axes, a
    line with its 95 % band for each combination of the other swept values): for a notebook
    as for the files. ``swept``: the summary's swept keys, if not given."""
    swept = swept_columns(summary) if swept is None else swept
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    values = summary[metric].dropna()
    # latencies and bytes over decades (a saturating server's p99: 1.7 ms to 124 ms) on a log
    # axis; a fraction keeps its linear one, where differences in points read
    log_y = spans_decades(values) and not UNITS.get(metric, "").startswith("fraction")
    factor, unit = metric_scale(values, metric, log_y)
    every_line = lines_of(summary, key, swept, (metric, f"{metric}_ci95"))
    lines = spread(every_line)
    switch = pd.api.types.is_bool_dtype(summary[key])
    # geometric sweeps (sizes, budgets, rates) read best on a log axis; it spans the places
    # drawn (with none, a log axis has no range and matplotlib raises)
    drawn = as_numbers(summary.loc[summary[metric].notna(), key]).dropna()
    log = not switch and (spans_decades(drawn) or geometric_steps(drawn))
    x_factor, x_unit = key_scale(key, geometric_middle(drawn) if log else summary[key])
    level = described([key], [None])  # what a point swept to null is named
    for label, part in lines:
        color = line_with_band(
            ax,
            as_numbers(part[key], x_factor),
            part[metric] / factor,
            part[f"{metric}_ci95"] / factor,
            label or None,
        )
        # a point swept to null (no budget, no TTL hint) has no place on the axis: a level
        for value in (part.loc[part[key].isna(), metric] / factor).dropna():
            ax.axhline(
                value, color=color, linestyle="--", lw=1, label=f"{label}, {level}".lstrip(", ")
            )
    if switch:  # two places, named
        ax.set_xticks([0, 1], ["false", "true"])
        ax.set_xlim(-0.5, 1.5)
    elif log:
        log_scale(ax, "x")
        swept_ticks(ax, "x", drawn.to_numpy(dtype=float) * x_factor)
    ax.set_xlabel(axis_label(key, x_unit))
    ax.set_ylabel(f"{metric.removesuffix('_ms').replace('_', ' ')} ({unit})")
    interval_note(ax, summary, "shaded", (len(lines), len(every_line)))
    metric_axis(ax, log_y, unit)
    ax.grid(alpha=0.3)
    if len(lines) > 1 or summary[key].isna().any():
        place_legend(ax, fontsize=7)
    return fig


def metric_scale(values: pd.Series, metric: str, log: bool) -> tuple[float, str]:
    """The factor to divide a metric's values by and the unit they then read in: bytes in
    the binary unit of their middle decade on a log axis, else of the largest."""
    unit = UNITS.get(metric, "")
    if unit != "bytes":
        return 1.0, unit
    return bytes_scale(geometric_middle(values) if log else values.abs().to_numpy())


def metric_axis(ax, log: bool, unit: str) -> None:
    """A log axis in plain numbers, or a linear one within what the metric can be."""
    if log:
        log_scale(ax, "y")
    else:
        within_range(ax, unit)


def is_numeric(summary: pd.DataFrame, key: str) -> bool:
    return bool(pd.to_numeric(summary[key], errors="coerce").notna().any())
