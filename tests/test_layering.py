"""The pure layers stay pure: protocol and engine import neither simpy nor pandas; and a
study's worker runs a synthetic workload without pandas or matplotlib."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["nnrpsim.protocol", "nnrpsim.engine", "nnrpsim.engine.replay"])
def test_pure_layer_imports(package):
    code = (
        f"import sys, {package}; "
        "bad = sorted({'simpy', 'pandas', 'matplotlib', 'libcachesim'} & set(sys.modules)); "
        "print(','.join(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""


WORKER = """
import sys
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.tasks import run_task, tasks_for

raw = {"study": {"duration": "30s", "replications": 1}, "engine": sys.argv[1], "sweep": None}
(task,) = tasks_for(sweep_points(parse_scenario(raw)))
assert run_task(task)["record"]["error"] is None
print(",".join(sorted({"pandas", "matplotlib"} & set(sys.modules))))
"""


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_workers_run_of_a_synthetic_workload_loads_neither_pandas_nor_matplotlib(engine):
    """A study's worker imports what a run needs before its first run: with pandas, which the
    warm-up's statistics imported for their type hints alone, 1.7 s on a slow machine, not
    0.7 (as ``tasks.py`` meant: its trace readers import pandas when a trace is read)."""
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, engine], capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == ""
