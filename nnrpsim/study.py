"""The public Python API of studies: run a scenario's sweep and get pandas frames back."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .checks import StudyWarning, study_warnings
from .display_units import counted
from .gc_pause import cyclic_gc_paused
from .interrupts import interrupts_deferred
from .paths import given_path
from .plot_formats import plot_formats
from .plots import draw_study
from .recorded import COMPLETE, INTERRUPTED, study_of
from .results import ResultStore, run_table
from .run_progress import setup_shown, shown, study_bar
from .run_sizes import check_run_sizes, point_sizes
from .runner import (
    check_execution,
    dask_client,
    execute,
    local_workers,
    workers_for,
)
from .scenario import ScenarioLike, load_scenario, sweep_points
from .summaries import summarize, with_derived_metrics
from .tasks import tasks_for
from .workload_facts import check_traces, input_digests

WORKER_DIED = "interrupted: a worker process died (rerun with --resume)"


def worker_died(written: int, runs: int) -> str:
    """What a study says when one of its worker processes died: the pool is broken, so the
    study stops there. The pool cannot say why a worker died; these are the two causes seen."""
    return (
        f"a worker process died, so the study stopped with {written} of {runs} runs written "
        "(rerun with --resume): the system kills one that runs out of memory, and a script's "
        'workers die as they start where it calls nnrpsim.run outside `if __name__ == "__main__":`'
    )


PLOT_WORKER_DIED = (
    "a worker process died while drawing the plots, so this process drew them again: the "
    "runs and tables were written by then; the system kills a worker that runs out of memory"
)


def _plots_of(path: Path, pool: ProcessPoolExecutor | None) -> tuple[list[Path], bool]:
    """The study's plots, drawn by its workers; and whether one of them died while drawing,
    and this process drew them all instead (each file is written whole or not at all, so
    drawing one again is harmless), rather than end a study whose runs are written in a
    traceback."""
    try:
        return draw_study(path, pool), False
    except BrokenProcessPool:
        return draw_study(path, None), True


@dataclass(eq=False)  # (two results compare as objects: a field-wise == of frames raises)
class StudyResult:
    """A finished (or interrupted) study: where it is and what it found."""

    path: Path
    summary: pd.DataFrame
    runs: pd.DataFrame
    timeseries: pd.DataFrame
    status: str
    plots: list[Path] = field(default_factory=list)
    kinds: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per sweep point and object kind: ``kinds.csv``."""
    warnings: list[str] = field(default_factory=list)
    """What ``nnrpsim run`` prints on stderr: failed runs, invariant violations, a warm-up too
    short for the memory's climb (:mod:`nnrpsim.checks`); ``warnings.txt`` in the folder."""
    kept_runs: int = 0
    """The runs a resume found in the folder, finished, and did not run again."""
    moved_runs: int = 0
    """Of those, the runs it moved to their points' new numbers (its sweep lists other values)."""

    @property
    def figures(self) -> int:
        """The figures drawn, each written in every format (``plots`` lists every file)."""
        return len({path.stem for path in self.plots})

    def __repr__(self) -> str:
        """One line (what a notebook shows for a result), not every row of every frame."""
        failed = int(self.runs["error"].notna().sum()) if "error" in self.runs else 0
        return (
            f"<StudyResult {self.path} ({self.status}): "
            f"{counted(len(self.summary), 'sweep point')}, {counted(len(self.runs), 'run')} "
            f"({failed} failed), {counted(self.figures, 'plot')}, "
            f"{counted(len(self.warnings), 'warning')}>"
        )


def run(
    scenario: ScenarioLike,
    *,
    out: str | Path | None = None,
    overrides: Sequence[str] | str | None = (),
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    resume: bool = False,
    progress: bool = True,
) -> StudyResult:
    """Run every sweep point ``replications`` times and write ``results/<study>/`` (or ``out``).

    Runs are written as they finish; an interruption keeps them, and ``resume=True`` runs only
    what is missing. A run that raises is recorded with its error while the others complete.
    ``scenario`` may be a results folder: its manifest's scenario, written there (unless
    ``out`` says otherwise), so ``resume=True`` with ``study.replications`` raised in
    ``overrides`` grows that study whatever its file has become.
    """
    # (the GC paused: it scanned each point's scenario and task again and again)
    with cyclic_gc_paused(), setup_shown(progress) as step:
        scenario, folder = study_of(scenario, "to run")
        scenario = load_scenario(scenario, overrides)
        check_execution(jobs, executor, scheduler)
        plot_formats()  # (its plots' formats, checked before the study writes anything)
        points = sweep_points(scenario)
        check_traces(points)
        path = (
            given_path(out, "--out")
            if out is not None
            else folder or Path("results") / scenario.study.name
        )
        inputs = input_digests(points)
        store = ResultStore(path, scenario, resume, inputs)
        every = tasks_for(points, inputs)
        kept, moved_runs = store.kept(every)
        tasks = [task for task in every if (task.point, task.replication) not in kept]
        if scheduler is None:  # (a cluster's workers have their own memory)
            left = {task.point for task in tasks}  # (on --resume, the points with runs left)
            step(len(left), "sizing their runs")
            sizes = point_sizes([point for point in points if point.index in left])
            check_run_sizes(sizes, workers_for(jobs, len(tasks)))
    # Whatever stops the loop early (Ctrl-C, a dead worker), the runs already written stay,
    # and the manifest says the study is unfinished: --resume completes it.
    started, status = time.perf_counter(), INTERRUPTED
    bar, shares = study_bar(scenario.study.name, len(tasks), progress)
    # (the bar in the block: closed, its line ended, if no scheduler answers)
    with bar, local_workers(jobs, executor, len(tasks), shares) as pool:  # (the plots' too)
        # (the folder made and held once a scheduler was reached: nothing refuses the study now)
        with dask_client(executor, jobs, scheduler, len(tasks)) as client, store.held():
            try:
                with shown(bar, shares):
                    for result in execute(tasks, jobs, executor, scheduler, pool, shares, client):
                        store.write(result)
                status = COMPLETE
            except BrokenProcessPool:
                status = WORKER_DIED
                pool = None  # (it runs nothing more: the plots are drawn here)
            finally:
                # (a second Ctrl-C waits for the finished runs' summary)
                with interrupts_deferred():
                    bar.close()
                    meta = {
                        "status": status,
                        "executor": executor,
                        "jobs": jobs,
                        "wall_s": time.perf_counter() - started,
                        # (each point's, as warmup: auto resolves it: the plots shade one
                        # where the points share it)
                        "point_warmups_ms": [point.scenario.study.warmup for point in points],
                    }
                    summary, runs, series, kinds = store.finalize(meta)
        plots, redrawn = _plots_of(path, pool) if not summary.empty else ([], False)
    told = study_warnings(points, runs, summary, series)
    if status == WORKER_DIED:
        told.append(f"warning: {worker_died(len(runs), len(every))}")
    if redrawn:
        told.append(f"warning: {PLOT_WORKER_DIED}")
    store.write_warnings(told)
    return StudyResult(
        path, summary, runs, series, status, plots, kinds, told, len(kept), moved_runs
    )


def sweep(
    scenario: ScenarioLike,
    overrides: Sequence[str] | str | None = (),
    jobs: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Run the sweep in memory (nothing written) and return the summary frame: for notebooks,
    with :func:`run`'s progress bar. What ``nnrpsim run`` would warn of
    (:mod:`nnrpsim.checks`) comes as a :class:`~nnrpsim.checks.StudyWarning` each."""
    with cyclic_gc_paused(), setup_shown(progress) as step:  # (as run's)
        scenario = load_scenario(scenario, overrides)
        check_execution(jobs, "local", None)
        points = sweep_points(scenario)
        check_traces(points)
        tasks = tasks_for(points, input_digests(points))
        step(len(points), "sizing their runs")
        check_run_sizes(point_sizes(points), workers_for(jobs, len(tasks)))
    bar, shares = study_bar(scenario.study.name, len(tasks), progress)
    with bar, shown(bar, shares):
        results = list(execute(tasks, jobs, shares=shares))
    runs = with_derived_metrics(pd.DataFrame([result["record"] for result in results]))
    summary = summarize(runs.sort_values(["point", "replication"]))
    tables = [run_table(result, "timeseries") for result in results]
    series = pd.concat([pd.DataFrame(table) for table in tables if table] or [pd.DataFrame()])
    for line in study_warnings(points, runs, summary, series):
        warnings.warn(line.removeprefix("warning: "), StudyWarning, stacklevel=2)
    return summary
