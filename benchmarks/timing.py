"""Small timing helpers shared by the benchmark groups."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from nnrpsim.compiled import INTERPRETED_VARIABLE


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` wall-clock runs of ``fn``, in seconds (least disturbed by
    noise)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def interpreted(module: str, expression: str) -> float:
    """``expression`` (a figure of benchmark ``module``) in a process of its own that loads
    the compiled modules from their sources: the other side of a compiled build's speed-up."""
    run = subprocess.run(
        [sys.executable, "-c", f"import {module} as m; print({expression})"],
        env={**os.environ, INTERPRETED_VARIABLE: "1"},
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(run.stdout)
