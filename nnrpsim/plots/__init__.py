"""Plots of a finished study, drawn from its saved results only (never by running anything).

Every figure is written as PNG and SVG under ``plots/`` (:mod:`nnrpsim.plot_formats`), axes labelled
with units. Which figures a study gets, and their files, is here; what each draws is its own
module's (:mod:`.metric`, :mod:`.tradeoff`, :mod:`.by_kind`, :mod:`.over_time`); which points
a line joins and its name :mod:`.lines`', what a plot says over it :mod:`.notes`', where its
legend and its points' labels go :mod:`.placement`'s, and its axes' ranges and log scales
:mod:`.axes`'.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib

if not os.environ.get("MPLBACKEND"):  # (a notebook's kernel sets it: its figures stay inline)
    matplotlib.use("Agg")  # files only: no display needed, safe in worker processes and CI

import matplotlib.pyplot as plt
import pandas as pd

from ..checks import StudyWarning
from ..paths import given_path
from ..plot_formats import KNOWN_FORMATS, plot_formats, redrawing_formats
from ..recorded import recorded_warmup_ms, unfinished_study_note
from ..results import read_table
from ..run_files import atomic_write, write_json
from ..scenario import ScenarioError
from ..summaries import swept_columns, with_mean_held
from .by_kind import bytes_by_kind_figure
from .metric import is_numeric, metric_figure
from .over_time import OVER_TIME, mean_over_runs, over_time_figure
from .tradeoff import tradeoff_figure

TTL_KEYS = ("host_policy.ttl_fraction", "host_policy.ttl_hint")
INVALIDATION_KEY = "workload.invalidations.rate_per_s"
LOAD_KEYS = {"workload.sessions.rate_per_s", "workload.operations.rate_per_s"}
"""Swept loads, against which the DES's operation latency is drawn too."""
DRAWN = ".drawn.json"
"""In ``plots/``: the files the last drawing wrote. The next removes those of them it does not
write again (another format, a figure the study no longer gets), which would show other
numbers than the study's, and never a file it did not write."""


def _save(fig, folder: Path, name: str) -> list[Path]:
    paths = [folder / f"{name}.{kind}" for kind in plot_formats()]
    fig.tight_layout()
    # laid out once: with the placeholder engine tight_layout leaves, every savefig below would
    # lay it out again in a draw that renders nothing (a fifth of the plots' time). No engine,
    # whatever one a matplotlibrc names for a figure without
    with plt.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
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


def _metric_vs(summary, key, metric, swept, folder, name):
    return _save(metric_figure(summary, key, metric, swept), folder, name)


def plot_study(results: str | Path, pool: ProcessPoolExecutor | None = None) -> list[Path]:
    """Draw every figure the study's saved results support; returns the files written.
    ``pool``: worker processes to draw the figures on, each apart (a study's own workers,
    once its runs are done: drawing takes 0.2 s a file and more); else one after another.
    Not threads: pyplot draws one figure at a time in a process. The plots of a study its
    manifest records as interrupted come with a :class:`~nnrpsim.checks.StudyWarning`: they
    show its finished runs only."""
    if pool is not None and not isinstance(pool, ProcessPoolExecutor):
        raise TypeError(f"pool: a ProcessPoolExecutor or None, got {type(pool).__name__}")
    redrawing_formats()
    results = given_path(results, "results")
    written = draw_study(results, pool)
    if note := unfinished_study_note(results):
        warnings.warn(note, StudyWarning, stacklevel=2)
    return written


def draw_study(results: Path, pool: ProcessPoolExecutor | None) -> list[Path]:
    """:func:`plot_study`'s drawing, without its word on how the study ended: a study just run
    says that in its own result, and the command line as one line of its own."""
    # (a bad setting is said before anything is drawn; none draws nothing, and leaves no
    # figure of earlier numbers either)
    tables = _study_tables(results) if plot_formats() else None
    folder = results / "plots"
    try:  # (a full disk, say: on a worker, it is raised here too)
        if tables is None:
            if folder.is_dir():
                _remove_earlier(folder, [])
            return []
        summary, series, kinds = tables
        folder.mkdir(exist_ok=True)
        if summary.empty:
            return []
        warmup_s = recorded_warmup_ms(results) / 1e3
        figures = _figures(summary, series, kinds, folder, warmup_s)
        drawn = pool.map(_draw, figures) if pool is not None else map(_draw, figures)
        written = [path for paths in drawn for path in paths]
        _remove_earlier(folder, written)
        return written
    except OSError as err:
        raise ScenarioError(str(folder), f"cannot draw the plots: {err.strerror or err}") from None


def _study_tables(results: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The study's summary, time series (with each sample's mean held) and kinds: the last
    two empty where the folder holds no such table."""
    summary = read_table(results / "summary.parquet", required=NEEDED_SUMMARY_COLUMNS)
    series_path, kinds_path = results / "timeseries.parquet", results / "kinds.parquet"
    series = (
        with_mean_held(read_table(series_path, required=NEEDED_SERIES_COLUMNS))
        if series_path.is_file()
        else pd.DataFrame()
    )
    kinds = (
        read_table(kinds_path, required=NEEDED_KINDS_COLUMNS)
        if kinds_path.is_file()
        else pd.DataFrame()
    )
    return summary, series, kinds


def _remove_earlier(folder: Path, written: list[Path]) -> None:
    """Remove the figures an earlier drawing wrote in ``folder`` that this one did not (a
    resume with ``NNRPSIM_PLOT_FORMATS=pdf`` left PNGs of fewer replications beside the PDFs),
    then record this drawing's (:data:`DRAWN`)."""
    now = sorted(path.name for path in written)
    try:
        earlier = json.loads((folder / DRAWN).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, TypeError, KeyError):  # (none yet: an earlier version's)
        earlier = []
    for name in earlier if isinstance(earlier, list) else ():
        is_figure = isinstance(name, str) and Path(name).name == name
        if is_figure and name not in now and Path(name).suffix[1:] in KNOWN_FORMATS:
            (folder / name).unlink(missing_ok=True)
    write_json(folder / DRAWN, {"files": now})


Drawing = tuple[Callable[..., list[Path]], tuple]
"""One figure to draw: the function that draws and saves it, and its arguments."""


def _figures(
    summary: pd.DataFrame, series: pd.DataFrame, kinds: pd.DataFrame, folder: Path, warmup_s: float
) -> list[Drawing]:
    """Every figure of a study's tables, in the order ``plot_study`` returns their files."""
    swept = swept_columns(summary)
    figures: list[Drawing] = []
    numeric = [k for k in swept if is_numeric(summary, k)]
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
            # (not in results written by an older version; none measured on the vector engine)
            if column in series and series[column].notna().any():
                means = mean_over_runs(series, column, combine)
                figures.append(
                    (_over_time, (means, summary, swept, folder, column, what, name, warmup_s))
                )
    return figures


def _draw(figure: Drawing) -> list[Path]:
    draw, arguments = figure
    return draw(*arguments)


def _capacity_tradeoff(
    summary: pd.DataFrame, swept: list[str], folder: Path, metric: str
) -> list[Path]:
    figure = tradeoff_figure(summary, metric, swept)
    return _save(figure, folder, f"{metric}_vs_gpu_memory") if figure is not None else []


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
NEEDED_SERIES_COLUMNS = (
    "point",
    "replication",
    "time_ms",
    "held_bytes",
    "link_load",
    "server_load",
)
NEEDED_KINDS_COLUMNS = ("point", "kind", "mean_gpu_bytes", "bytes_from_cache")
"""The columns of a study's tables the plots read: a table without them is not one a study
wrote (``nnrpsim plot`` says so in one line). The memory over time is drawn from
``mean_held_bytes``, which an earlier version did not write: ``held_bytes`` stands in
(:func:`~nnrpsim.summaries.with_mean_held`)."""


def _bytes_by_kind(
    kinds: pd.DataFrame, summary: pd.DataFrame, swept: list[str], folder: Path
) -> list[Path]:
    figure = bytes_by_kind_figure(kinds, summary, swept)
    return _save(figure, folder, "bytes_by_kind") if figure is not None else []


def _over_time(mean, summary, swept, folder, column, what, name, warmup_s) -> list[Path]:
    return _save(over_time_figure(mean, summary, swept, column, what, warmup_s), folder, name)
