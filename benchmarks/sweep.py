"""Sweep group: ttl_sweep with one and two worker processes, and the runner's own overhead."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nnrpsim
from nnrpsim.plots import plot_study

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "ttl_sweep.yaml"


def _timed_run(out: Path, jobs: int):
    start = time.perf_counter()
    result = nnrpsim.run(SCENARIO, out=out, jobs=jobs, progress=False)
    return result, time.perf_counter() - start


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        one, one_s = _timed_run(Path(folder) / "one", 1)
        _, two_s = _timed_run(Path(folder) / "two", 2)
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
