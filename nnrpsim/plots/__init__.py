"""Plots of a finished study, drawn from its saved results only (never by running anything).

Every figure is written as PNG and SVG under ``plots/`` (:mod:`nnrpsim.plot_formats`), axes labelled
with units. What each figure draws is here; where its legend and its points' labels go is
:mod:`.placement`'s, and its axes' ranges and log scales :mod:`.axes`'.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib

if not os.environ.get("MPLBACKEND"):  # (a notebook's kernel sets it: its figures stay inline)
    matplotlib.use("Agg")  # files only: no display needed, safe in worker processes and CI

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..checks import StudyWarning
from ..display_units import bytes_scale, described, key_scale, value_text
from ..metrics import UNITS
from ..plot_formats import plot_formats
from ..results import (
    read_table,
    recorded_warmup_ms,
    swept_columns,
    unfinished_study_note,
)
from ..run_files import atomic_write
from ..scenario import ScenarioError
from ..scenario.schema import SHORT_KEYS
from .axes import (
    geometric_middle,
    geometric_steps,
    log_scale,
    spans_decades,
    swept_ticks,
    within_range,
)
from .placement import MAX_SHARED_LABELS, first_to_last, label_points, place_legend

TTL_KEYS = ("host_policy.ttl_fraction", "host_policy.ttl_hint")
INVALIDATION_KEY = "workload.invalidations.rate_per_s"
KNOWN_LABELS = {
    "host_policy.ttl_fraction": "lease TTL hint (fraction of the expected session length)",
    "host_policy.ttl_hint": "lease TTL hint",
    INVALIDATION_KEY: "invalidation rate (content changes per object per s)",
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
LOAD_KEYS = {"workload.sessions.rate_per_s", "workload.operations.rate_per_s"}
"""Swept loads, against which the DES's operation latency is drawn too."""


def _save(fig, folder: Path, name: str) -> list[Path]:
    paths = [folder / f"{name}.{kind}" for kind in plot_formats()]
    fig.tight_layout()
    try:
        for path in paths:  # (whole or not at all, as every file of a study)
            atomic_write(
                path,
                lambda temporary, kind=path.suffix[1:]: fig.savefig(
                    temporary, dpi=120, format=kind
                ),
            )
    finally:
        plt.close(fig)
    return paths


def _label(key: str, unit: str) -> str:
    text = KNOWN_LABELS.get(key, key)
    return f"{text} ({unit})" if unit else text


def _numeric(values: pd.Series, factor: float = 1.0) -> pd.Series:
    return pd.to_numeric(values, errors="coerce") * factor


def _line_with_band(ax, x, y, ci, label=None) -> str:
    """The points in order of ``x`` (those without a place on it left out), joined, with
    their 95 % band; returns the line's colour."""
    order = np.argsort(x.to_numpy())
    x, y, ci = x.to_numpy()[order], y.to_numpy()[order], np.nan_to_num(ci.to_numpy()[order])
    (line,) = ax.plot(x, y, marker="o", label=label)
    ax.fill_between(x, y - ci, y + ci, alpha=0.2, color=line.get_color())
    return line.get_color()


def _interval_note(
    ax,
    summary: pd.DataFrame,
    drawn_as: str,
    lines: tuple[int, int] = (0, 0),
    labelled_by: str | None = None,
) -> None:
    """Say over the plot what a point and its band or bars are: a mean over how many
    replications, with its 95 % t interval (two replications give a wide one); nothing
    for a summary that does not say (one made by hand). ``lines``: how many lines are drawn
    of how many there are, said when fewer (:func:`_spread`). ``labelled_by``: the swept key
    whose value is written beside each point (a bare "0.25" does not say what it is)."""
    notes = []
    runs = _runs_text(summary)
    if runs == ONE_RUN:
        notes.append(f"each point: {ONE_RUN} (no confidence interval)")
    elif runs is not None:
        notes.append(f"each point: {runs}; {drawn_as}: its 95 % confidence interval")
    if labelled_by is not None:
        notes.append(f"beside each point: its {SHORT_KEYS.get(labelled_by, labelled_by)}")
    drawn, there_are = lines
    if drawn < there_are:
        notes.append(
            f"{drawn} of the {there_are} lines, spread over the other swept values "
            "(summary.csv has them all)"
        )
    _say_over(ax, notes)


ONE_RUN = "one replication"


def _runs_text(summary: pd.DataFrame) -> str | None:
    """What a point of the summary is: :data:`ONE_RUN`, or the mean of how many ("1-2", where
    a run failed); None for a summary that does not say."""
    if "replications" not in summary:
        return None
    counts = summary["replications"].dropna().astype(int)
    least, most = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    if most <= 1:
        return ONE_RUN
    return f"the mean of {least if least == most else f'{least}-{most}'} replications"


def _say_over(ax, notes: list[str]) -> None:
    """Notes on what the plot shows, over it, small and grey, a line each."""
    if notes:
        ax.set_title("\n".join(notes), fontsize=7, loc="left", color="0.35")


MAX_LINES = 10
"""Lines a plot draws at most: matplotlib's colour cycle, beyond which colours repeat and the
lines and their legend cannot be told apart (nor does a legend of 50 fit the figure)."""


def _spread(lines: list, most: int = MAX_LINES) -> list:
    """At most ``most`` of ``lines``, evenly spread over them, first and last kept (every
    k-th of a grid's combinations would keep one value of its inner key)."""
    if len(lines) <= most:
        return lines
    kept = np.unique(np.linspace(0, len(lines) - 1, most).round().astype(int))
    return [lines[index] for index in kept]


def lines_of(
    summary: pd.DataFrame, key: str, swept: list[str], drawn: tuple[str, ...] = ()
) -> list[tuple[str, pd.DataFrame]]:
    """The points to draw against ``key``, one line for each combination of the other swept
    parameters that vary at a given ``key`` (points that differ in one must never be joined;
    one zipped with ``key`` moves along the line), with its label. Lines equal in ``key`` and
    in the ``drawn`` columns (the metric, its interval) are one line, named for all of them:
    drawn apart, the last would hide the others under their legend entries."""
    at_key = summary.groupby(key, dropna=False)
    others = [k for k in swept if k != key and at_key[k].nunique(dropna=False).max() > 1]
    if not others:
        return [("", summary)]
    # in the key's order, each point's drawn values hashed once (a NaN as a NaN): a line's
    # hashes in turn tell it apart (a sort and a compare a line took 1 ms: 0.3 s a plot of a
    # thousand points)
    ordered = summary.sort_values(key, kind="stable", ignore_index=True)
    hashes = pd.util.hash_pandas_object(ordered[[key, *drawn]], index=False).to_numpy()
    equal: dict[object, list[tuple[tuple, pd.DataFrame]]] = {}
    for values, part in ordered.groupby(others, dropna=False, sort=True):
        signature = hashes[part.index].tobytes() if drawn else values  # (none: each its own)
        equal.setdefault(signature, []).append((values, part))
    return [(_name_lines(others, [v for v, _ in line]), line[0][1]) for line in equal.values()]


LABEL_WIDTH = 60
"""Characters a legend label of equal lines drawn as one runs to before it wraps."""


def _name_lines(keys: list[str], combinations: list[tuple]) -> str:
    """The legend label of a line drawn for one or more equal ones: the value of each key
    for one; for several, each key's values where the lines are every combination of them
    (one value where they share it), else each line's, and how many lines."""
    if len(combinations) == 1:
        return described(keys, combinations[0])
    columns = [[value_text(key, c[i]) for c in combinations] for i, key in enumerate(keys)]
    values = [list(dict.fromkeys(column)) for column in columns]  # each once, in order
    if math.prod(map(len, values)) == len(combinations):
        parts = [
            f"{SHORT_KEYS.get(key, key)} = {first_to_last(texts, ', ')}"
            for key, texts in zip(keys, values, strict=True)
        ]
        named = _wrapped(parts, ", ")
    elif len(combinations) <= MAX_SHARED_LABELS:
        named = _wrapped([described(keys, c) for c in combinations], "; ")
    else:
        ends = (combinations[0], combinations[-1])
        named = _wrapped([f"{described(keys, ends[0])} ...", described(keys, ends[1])], " ")
    return f"{named}: {len(combinations)} equal lines"


def _wrapped(parts: list[str], separator: str) -> str:
    """``parts`` joined, on a new line where the next would run past :data:`LABEL_WIDTH`."""
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + len(separator) + len(part) > LABEL_WIDTH:
            lines[-1] += separator.rstrip()
            lines.append(part)
        else:
            lines[-1] += separator + part
    return "\n".join(lines)


def _metric_vs(summary, key, metric, swept, folder, name):
    return _save(metric_figure(summary, key, metric, swept), folder, name)


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
    factor, unit = _y_unit(values, metric, log_y)
    every_line = lines_of(summary, key, swept, (metric, f"{metric}_ci95"))
    lines = _spread(every_line)
    switch = pd.api.types.is_bool_dtype(summary[key])
    # geometric sweeps (sizes, budgets, rates) read best on a log axis; it spans the places
    # drawn (with none, a log axis has no range and matplotlib raises)
    drawn = _numeric(summary.loc[summary[metric].notna(), key]).dropna()
    log = not switch and (spans_decades(drawn) or geometric_steps(drawn))
    x_factor, x_unit = key_scale(key, geometric_middle(drawn) if log else summary[key])
    level = described([key], [None])  # what a point swept to null is named
    for label, part in lines:
        color = _line_with_band(
            ax,
            _numeric(part[key], x_factor),
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
    ax.set_xlabel(_label(key, x_unit))
    ax.set_ylabel(f"{metric.removesuffix('_ms').replace('_', ' ')} ({unit})")
    _interval_note(ax, summary, "shaded", (len(lines), len(every_line)))
    _y_axis(ax, log_y, unit)
    ax.grid(alpha=0.3)
    if len(lines) > 1 or summary[key].isna().any():
        place_legend(ax, fontsize=7)
    return fig


def _y_unit(values: pd.Series, metric: str, log: bool) -> tuple[float, str]:
    """The factor to divide a metric's values by and the unit they then read in: bytes in
    the binary unit of their middle decade on a log axis, else of the largest."""
    unit = UNITS.get(metric, "")
    if unit != "bytes":
        return 1.0, unit
    return bytes_scale(geometric_middle(values) if log else values.abs().to_numpy())


def _y_axis(ax, log: bool, unit: str) -> None:
    """A log axis in plain numbers, or a linear one within what the metric can be."""
    if log:
        log_scale(ax, "y")
    else:
        within_range(ax, unit)


def _is_numeric(summary: pd.DataFrame, key: str) -> bool:
    return bool(pd.to_numeric(summary[key], errors="coerce").notna().any())


def plot_study(results: str | Path, pool: ProcessPoolExecutor | None = None) -> list[Path]:
    """Draw every figure the study's saved results support; returns the files written.
    ``pool``: worker processes to draw the figures on, each apart (a study's own workers,
    once its runs are done: drawing takes 0.2 s a file and more); else one after another.
    Not threads: pyplot draws one figure at a time in a process. The plots of a study its
    manifest records as interrupted come with a :class:`~nnrpsim.checks.StudyWarning`: they
    show its finished runs only."""
    if pool is not None and not isinstance(pool, ProcessPoolExecutor):
        raise TypeError(f"pool: a ProcessPoolExecutor or None, got {type(pool).__name__}")
    results = Path(results)
    written = draw_study(results, pool)
    if note := unfinished_study_note(results):
        warnings.warn(note, StudyWarning, stacklevel=2)
    return written


def draw_study(results: Path, pool: ProcessPoolExecutor | None) -> list[Path]:
    """:func:`plot_study`'s drawing, without its word on how the study ended: a study just run
    says that in its own result, and the command line as one line of its own."""
    plot_formats()  # (a bad setting, said before anything is drawn)
    summary = read_table(results / "summary.parquet", required=NEEDED_SUMMARY_COLUMNS)
    series_path, kinds_path = results / "timeseries.parquet", results / "kinds.parquet"
    series = (
        read_table(series_path, required=NEEDED_SERIES_COLUMNS)
        if series_path.is_file()
        else pd.DataFrame()
    )
    kinds = (
        read_table(kinds_path, required=NEEDED_KINDS_COLUMNS)
        if kinds_path.is_file()
        else pd.DataFrame()
    )
    folder = results / "plots"
    try:  # (a full disk, say: on a worker, it is raised here too)
        folder.mkdir(exist_ok=True)
        if summary.empty:
            return []
        warmup_s = recorded_warmup_ms(results) / 1e3
        figures = _figures(summary, series, kinds, folder, warmup_s)
        drawn = pool.map(_draw, figures) if pool is not None else map(_draw, figures)
        return [path for paths in drawn for path in paths]
    except OSError as err:
        raise ScenarioError(str(folder), f"cannot draw the plots: {err.strerror or err}") from None


Drawing = tuple[Callable[..., list[Path]], tuple]
"""One figure to draw: the function that draws and saves it, and its arguments."""


def _figures(
    summary: pd.DataFrame, series: pd.DataFrame, kinds: pd.DataFrame, folder: Path, warmup_s: float
) -> list[Drawing]:
    """Every figure of a study's tables, in the order ``plot_study`` returns their files."""
    swept = swept_columns(summary)
    figures: list[Drawing] = []
    numeric = [k for k in swept if _is_numeric(summary, k)]
    # the TTL's plots are named for it, unless both TTL keys are swept (one file each)
    ttl_stem = "ttl" if len(set(numeric) & set(TTL_KEYS)) == 1 else None
    for key in numeric:
        if key in TTL_KEYS:
            stem = ttl_stem or key.replace(".", "_")
            named = [
                ("hit_rate", f"hit_rate_vs_{stem}"),
                ("wire_saving", f"wire_saving_vs_{stem}"),
            ]
        elif key == INVALIDATION_KEY:
            named = [
                ("fallback_rate", "fallback_vs_invalidation"),
                ("hit_rate", "hit_rate_vs_invalidation"),
                ("wire_saving", "wire_saving_vs_invalidation"),
            ]
        else:
            safe = key.replace(".", "_")
            named = [
                ("hit_rate", f"hit_rate_vs_{safe}"),
                ("wire_saving", f"wire_saving_vs_{safe}"),
            ]
            if key in LOAD_KEYS:
                named.append(("p99_latency_ms", f"p99_latency_vs_{safe}"))
        figures += [
            (_metric_vs, (summary, key, metric, swept, folder, name))
            for metric, name in named
            # (none where no run measured it, or an earlier version did not: no figure)
            if metric in summary and summary[metric].notna().any()
        ]
    for metric in ("hit_rate", "wire_saving"):
        figures.append((_capacity_tradeoff, (summary, swept, folder, metric)))
    figures.append((_bytes_by_kind, (kinds, summary, swept, folder)))
    if not series.empty:
        warmup_s = 0.0 if "study.warmup" in swept else warmup_s
        for column, combine, what, name in OVER_TIME:
            if column in series:  # (not in results written by an older version)
                means = _mean_over_runs(series, column, combine)
                figures.append(
                    (_over_time, (means, summary, swept, folder, column, what, name, warmup_s))
                )
    return figures


def _draw(figure: Drawing) -> list[Path]:
    draw, arguments = figure
    return draw(*arguments)


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
    numeric = [key for key in swept if _is_numeric(summary, key)]
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


def _capacity_tradeoff(
    summary: pd.DataFrame, swept: list[str], folder: Path, metric: str
) -> list[Path]:
    figure = tradeoff_figure(summary, metric, swept)
    return _save(figure, folder, f"{metric}_vs_gpu_memory") if figure is not None else []


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
    y_factor, y_unit = _y_unit(summary[metric], metric, y_log)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn = ("mean_gpu_bytes", metric, f"{metric}_ci95")
    along, every_series = tradeoff_series(summary, swept, drawn)
    series = _spread(every_series) if along is not None else every_series
    for label, part in series:
        x, y = part["mean_gpu_bytes"] / factor, part[metric] / y_factor
        ax.errorbar(
            x,
            y,
            yerr=np.nan_to_num(part[f"{metric}_ci95"] / y_factor),
            fmt="o" if along is None else "o-",
            capsize=2,
            label=label or None,
        )
    ax.set_xlabel(f"mean GPU memory held by cached objects ({unit})")
    ax.set_ylabel(f"{metric.replace('_', ' ')} ({y_unit})")
    _interval_note(ax, summary, "bars", (len(series), len(every_series)), along)
    if x_log:
        log_scale(ax, "x")
    else:
        ax.set_xlim(left=0)  # (memory held is never below zero, nor when all points hold none)
    _y_axis(ax, y_log, y_unit)
    ax.grid(alpha=0.3)
    if along is not None:
        label_points(ax, along, series, factor, metric, y_factor)
    if any(label for label, _ in series):
        place_legend(ax, fontsize=6)
    return fig


MAX_KIND_POINTS = 12
"""Beyond this many sweep points the bars by kind would not be readable: kinds.csv has them."""


def _bytes_by_kind(
    kinds: pd.DataFrame, summary: pd.DataFrame, swept: list[str], folder: Path
) -> list[Path]:
    """Where the memory goes and where the savings come from: for each sweep point, the mean
    GPU memory each object kind held and the inline bytes its hits kept off the wire, as bars
    stacked by kind (means over the replications)."""
    if kinds.empty or len(summary) > MAX_KIND_POINTS:
        return []
    means = kinds.groupby(["point", "kind"])[["mean_gpu_bytes", "bytes_from_cache"]].mean()
    points = summary["point"].tolist()
    labels = [  # (by column: a row of numbers only is all floats, "point 0.0")
        described(swept, values) or f"point {point}"
        for point, *values in summary[["point", *swept]].itertuples(index=False)
    ]
    fig, axes = plt.subplots(1, 2, figsize=(11, 1.5 + 0.45 * len(points)), sharey=True)
    panels = (
        ("mean_gpu_bytes", "mean GPU memory held"),
        ("bytes_from_cache", "bytes hits kept off the wire"),
    )
    for ax, (metric, what) in zip(axes, panels, strict=True):
        table = means[metric].unstack("kind", fill_value=0.0).reindex(points, fill_value=0.0)
        factor, unit = bytes_scale(table.sum(axis=1).to_numpy())
        left = np.zeros(len(points))
        for kind in table.columns:
            ax.barh(range(len(points)), table[kind] / factor, left=left, label=kind)
            left += table[kind].to_numpy() / factor
        ax.set_xlabel(f"{what} ({unit})")
        ax.grid(axis="x", alpha=0.3)
    runs = _runs_text(summary)
    _say_over(axes[0], [f"each bar: {runs}, stacked by object kind"] if runs else [])
    axes[0].set_yticks(range(len(points)), labels, fontsize=7)
    axes[0].invert_yaxis()  # point 0 on top, as in summary.csv
    place_legend(axes[1], fontsize=7, title="object kind", title_fontsize=7)
    return _save(fig, folder, "bytes_by_kind")


OVER_TIME = (  # time-series column, how servers combine, what the axis says, the file
    ("held_bytes", "sum", "GPU memory held by cached objects", "gpu_memory_over_time"),
    ("link_load", "max", "busiest link's load (fraction of its capacity)", "link_load_over_time"),
    (
        "server_load",
        "max",
        "busiest server's load (frames processed at once)",
        "server_load_over_time",
    ),
)
_READ_METRICS = ("hit_rate", "mean_gpu_bytes")
"""The metrics the plots read of every summary, which every version wrote. Each other metric
is drawn where the summary has it: one an earlier version wrote may lack those added since
(``wire_saving``, 2026-12-04; ``evictions`` and ``operations_waited``, 2026-12-05), and a
metric added later needs no word here."""
NEEDED_SUMMARY_COLUMNS = (
    "point",
    "replications",
    *_READ_METRICS,
    *(f"{metric}_ci95" for metric in _READ_METRICS),
)
NEEDED_SERIES_COLUMNS = ("point", "replication", "time_ms", *(column for column, *_ in OVER_TIME))
NEEDED_KINDS_COLUMNS = ("point", "kind", "mean_gpu_bytes", "bytes_from_cache")
"""The columns of a study's tables the plots read: a table without them is not one a study
wrote (``nnrpsim plot`` says so in one line)."""


def _mean_over_runs(series: pd.DataFrame, column: str, combine: str) -> pd.DataFrame:
    """``column`` at each sample time of each sweep point: the servers combined by
    ``combine``, then the mean over replications."""
    per_run = series.groupby(["point", "replication", "time_ms"], as_index=False)[column]
    return per_run.agg(combine).groupby(["point", "time_ms"], as_index=False)[column].mean()


MAX_OVER_TIME = 8
"""Sweep points a plot over time draws at most: their lines cross and swing, and more than
eight do not read."""


def _equal_series(mean: pd.DataFrame, column: str) -> list[tuple[list[int], pd.DataFrame]]:
    """The sweep points of equal ``column`` series over time together (a ``never`` baseline
    holds no memory at every budget: drawn apart, the last hid the others), in the order of
    their first point, each with its series."""
    equal: dict[bytes, tuple[list[int], pd.DataFrame]] = {}
    for point, part in mean.groupby("point", sort=True):
        signature = pd.util.hash_pandas_object(part[["time_ms", column]], index=False)
        equal.setdefault(signature.to_numpy().tobytes(), ([], part))[0].append(int(point))
    return list(equal.values())


def _over_time(mean, summary, swept, folder, column, what, name, warmup_s) -> list[Path]:
    """``column`` (its :func:`_mean_over_runs`) against simulated time, a line per sweep point
    (points of equal series as one, named for them all; at most :data:`MAX_OVER_TIME` lines,
    spread over them); the warm-up, which no metric counts, shaded."""
    factor, unit = 1.0, ""
    if column.endswith("bytes"):
        factor, unit = bytes_scale(mean[column].to_numpy())
        what = f"{what} ({unit})"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    series = _equal_series(mean, column)
    drawn = _spread(series, MAX_OVER_TIME)
    shown, total = sum(len(points) for points, _ in drawn), mean["point"].nunique()
    if shown < total:
        _say_over(ax, [f"{shown} of the {total} sweep points, spread over them"])
    values = summary.set_index("point")[swept]
    for points, part in drawn:
        combinations = [tuple(values.loc[point]) for point in points]
        label = _name_lines(swept, combinations) if swept else None
        ax.plot(part["time_ms"] / 1000.0, part[column] / factor, label=label)
    if warmup_s:
        ax.axvspan(0, warmup_s, color="0.9", zorder=0, label="warm-up (not measured)")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(what)
    ax.grid(alpha=0.3)
    if swept or warmup_s:
        place_legend(ax, fontsize=7)
    return _save(fig, folder, name)
