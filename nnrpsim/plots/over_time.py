"""A quantity over simulated time, a line per sweep point: the memory held, the busiest
link's and server's load."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..display_units import bytes_scale, counted
from .lines import name_lines, spread
from .notes import say_over
from .placement import place_legend

OVER_TIME = (  # time-series column, how servers combine, what the axis says, the file
    (
        "mean_held_bytes",
        "sum",
        "GPU memory held by cached objects",
        "gpu_memory_over_time",
    ),
    ("link_load", "max", "busiest link's load (fraction of its capacity)", "link_load_over_time"),
    (
        "server_load",
        "max",
        "busiest server's load (frames processed at once)",
        "server_load_over_time",
    ),
)


def mean_over_runs(series: pd.DataFrame, column: str, combine: str) -> pd.DataFrame:
    """``column`` at each sample time of each sweep point: the servers combined by
    ``combine``, then the mean over replications."""
    per_run = series.groupby(["point", "replication", "time_ms"], as_index=False)[column]
    return per_run.agg(combine).groupby(["point", "time_ms"], as_index=False)[column].mean()


MAX_OVER_TIME = 8
"""Sweep points a plot over time draws at most: their lines cross and swing, and more than
eight do not read."""


def equal_series(mean: pd.DataFrame, column: str) -> list[tuple[list[int], pd.DataFrame]]:
    """The sweep points of equal ``column`` series over time together (a ``never`` baseline
    holds no memory at every budget: drawn apart, the last hid the others), in the order of
    their first point, each with its series."""
    # (each point's rows a slice of one array: a thousand points' groups of frames took 0.39 s)
    ordered = mean.sort_values(["point", "time_ms"], kind="stable")
    points = ordered["point"].to_numpy()
    values = ordered[["time_ms", column]].to_numpy(dtype=np.float64)
    starts = np.flatnonzero(np.r_[True, points[1:] != points[:-1]]).tolist()
    equal: dict[bytes, tuple[list[int], pd.DataFrame]] = {}
    for begin, end in zip(starts, [*starts[1:], len(points)], strict=True):
        series = values[begin:end].tobytes()
        if series not in equal:
            equal[series] = ([], ordered.iloc[begin:end])
        equal[series][0].append(int(points[begin]))
    return list(equal.values())


def over_time_figure(
    mean: pd.DataFrame,
    summary: pd.DataFrame,
    swept: list[str],
    column: str,
    what: str,
    warmup_s: float,
) -> Figure:
    """``column`` (its :func:`mean_over_runs`) against simulated time, a line per sweep point
    (points of equal series as one, named for them all; at most :data:`MAX_OVER_TIME` lines,
    spread over them); the warm-up, which no metric counts, shaded. Points that measured
    none of it (the vector engine's, of the loads: it has no network) are said, not drawn."""
    measured = mean.dropna(subset=[column])
    factor, unit = 1.0, ""
    if column.endswith("bytes"):
        factor, unit = bytes_scale(measured[column].to_numpy())
        what = f"{what} ({unit})"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    series = equal_series(measured, column)
    drawn = spread(series, MAX_OVER_TIME)
    shown, total = sum(len(points) for points, _ in drawn), measured["point"].nunique()
    unmeasured = mean["point"].nunique() - total
    notes = []
    if shown < total:
        some = " that measured it" if unmeasured else ""
        notes.append(f"{shown} of the {total} sweep points{some}, spread over them")
    if unmeasured:
        notes.append(f"{counted(unmeasured, 'sweep point')} on the vector engine: no network")
    say_over(ax, notes)
    values = summary.set_index("point")[swept]
    for points, part in drawn:
        combinations = [tuple(values.loc[point]) for point in points]
        label = name_lines(swept, combinations) if swept else None
        ax.plot(part["time_ms"] / 1000.0, part[column] / factor, label=label)
    if warmup_s:
        ax.axvspan(0, warmup_s, color="0.9", zorder=0, label="warm-up (not measured)")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(what)
    ax.grid(alpha=0.3)
    if swept or warmup_s:
        place_legend(ax, fontsize=7)
    return fig
