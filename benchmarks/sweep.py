"""Sweep group: ttl_sweep with one and two worker processes, and the runner's own overhead.

Each configuration runs three times and the fastest run counts (as ``best_of`` does for the other
groups): on a shared machine a neighbour's load can slow one run by a fifth.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nnrpsim
from nnrpsim.plots import plot_study

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "ttl_sweep.yaml"
RUNS = 3


def _fastest_run(folder: Path, jobs: int):
    """The faster of RUNS studies with ``jobs`` workers: its result and wall time."""
    timed = []
    for attempt in range(RUNS):
        start = time.perf_counter()
        result = nnrpsim.run(SCENARIO, out=folder / f"{jobs}-{attempt}", jobs=jobs, progress=False)
        timed.append((time.perf_counter() - start, attempt, result))
    wall, _, result = min(timed)
    return result, wall


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        one, one_s = _fastest_run(Path(folder), 1)
        _, two_s = _fastest_run(Path(folder), 2)
        start = time.perf_counter()
        plot_study(one.path)
        plots_s = time.perf_counter() - start
    compute_s = float(one.runs["wall_s"].sum())
    return {
        "sweep.wall_1_worker_s": one_s,
        "sweep.wall_2_workers_s": two_s,
        "sweep.speedup_2_workers": one_s / two_s,
        "sweep.runner_overhead_fraction": (one_s - plots_s - compute_s) / one_s,
    }
