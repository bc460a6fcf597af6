"""Sweep group: ttl_sweep with one and two worker processes, the runner's own overhead, the
results store's time a run in a sweep of a thousand, a whole study of a thousand short runs
beyond its runs and its plots, and the check of that study's sweep a point.

Each ttl_sweep configuration runs three times, one worker's studies alternating with two's,
and the fastest of each counts (as ``best_of`` does for the other groups): on a shared machine
a neighbour's load can slow one run by a fifth, and a slow spell that met one set after the
other would move the speedup by as much (the model's group alternates for the same reason).
The store and the big study, whose figures are times a run over a thousand, run once; the
check, the fastest of RUNS.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nnrpsim
from nnrpsim.plots import plot_study
from nnrpsim.results import ResultStore
from nnrpsim.scenario import load_scenario, sweep_points
from nnrpsim.tasks import run_task, tasks_for

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "ttl_sweep.yaml"
RUNS = 3
STORED_RUNS = 1000
BIG_SWEEP = {
    "study": {"name": "big", "duration": "5s", "warmup": "0s", "replications": 1},
    "engine": "vector",
    "workload": {"sessions": {"rate_per_s": 0.5, "duration": "3s"}},
    "sweep": {
        "grid": {
            "host_policy.ttl_hint": [f"{100 * k}ms" for k in range(1, 21)],
            "topology.gpu_memory": [f"{2**k}MiB" for k in range(10)],
            "workload.operations.rate_per_s": [0.5, 1, 2, 4, 8],
        }
    },
}
"""1,000 points of one short vector run each (a few ms): what a big sweep pays beyond its runs."""


def _fastest_runs(folder: Path) -> dict[int, tuple[float, nnrpsim.StudyResult]]:
    """For one worker and for two, the fastest of RUNS studies, taken in turn: its wall time
    and result."""
    timed: dict[int, list[tuple[float, int, nnrpsim.StudyResult]]] = {1: [], 2: []}
    for attempt in range(RUNS):
        for jobs, runs in timed.items():
            start = time.perf_counter()
            out = folder / f"{jobs}-{attempt}"
            result = nnrpsim.run(SCENARIO, out=out, jobs=jobs, progress=False)
            runs.append((time.perf_counter() - start, attempt, result))
    fastest = {}
    for jobs, runs in timed.items():
        wall, _, result = min(runs)
        fastest[jobs] = (wall, result)
    return fastest


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        fastest = _fastest_runs(Path(folder))
        (one_s, one), (two_s, _) = fastest[1], fastest[2]
        start = time.perf_counter()
        plot_study(one.path)
        plots_s = time.perf_counter() - start
        write_ms, finalize_ms = _store_ms_per_run(Path(folder) / "store")
        big_ms, big_plots_s = _big_sweep(Path(folder) / "big")
    validate_ms = _validate_ms_per_point()
    compute_s = float(one.runs["wall_s"].sum())
    return {
        "sweep.wall_1_worker_s": one_s,
        "sweep.wall_2_workers_s": two_s,
        "sweep.speedup_2_workers": one_s / two_s,
        "sweep.runner_overhead_fraction": (one_s - plots_s - compute_s) / one_s,
        "sweep.store_write_ms_per_run": write_ms,
        "sweep.store_finalize_ms_per_run": finalize_ms,
        "sweep.big_sweep_ms_per_run": big_ms,
        "sweep.big_sweep_plots_s": big_plots_s,
        "sweep.validate_ms_per_point": validate_ms,
    }


def _store_ms_per_run(folder: Path) -> tuple[float, float]:
    """Writing each of STORED_RUNS runs (one short run of ttl_sweep, renumbered: 200 points of
    its five replications) as it finishes, and the summary, long tables and manifest of them
    all, a run: what a big sweep of short runs pays beyond its runs."""
    scenario = load_scenario(SCENARIO, ["study.duration=20s", "study.warmup=5s"])
    result = run_task(tasks_for(sweep_points(scenario))[0])
    store = ResultStore(folder, scenario, resume=False)
    with store.held():
        start = time.perf_counter()
        for index in range(STORED_RUNS):
            point, replication = divmod(index, scenario.study.replications)
            record = {**result["record"], "point": point, "replication": replication}
            store.write({**result, "record": record})
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        store.finalize({})
        finalize_s = time.perf_counter() - start
    return write_s / STORED_RUNS * 1e3, finalize_s / STORED_RUNS * 1e3


def _big_sweep(folder: Path) -> tuple[float, float]:
    """A study of :data:`BIG_SWEEP` on one worker: its time a run beyond its runs' own and its
    plots' (expanding and checking the sweep, writing and gathering the runs, the summary),
    and its plots' time, drawn again apart."""
    start = time.perf_counter()
    result = nnrpsim.run(BIG_SWEEP, out=folder, jobs=1, progress=False)
    wall_s = time.perf_counter() - start
    start = time.perf_counter()
    plot_study(result.path)
    plots_s = time.perf_counter() - start
    beyond_s = wall_s - float(result.runs["wall_s"].sum()) - plots_s
    return beyond_s / len(result.runs) * 1e3, plots_s


def _validate_ms_per_point() -> float:
    """``nnrpsim.validate`` of :data:`BIG_SWEEP` (expanding its points, sizing their runs,
    every check of its setup), the fastest of RUNS, a point: what a sweep's check costs before
    anything runs, and a big study's setup before its progress bar."""
    fastest = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        checked = nnrpsim.validate(BIG_SWEEP, progress=False)
        fastest = min(fastest, time.perf_counter() - start)
    return fastest / len(checked.points) * 1e3
