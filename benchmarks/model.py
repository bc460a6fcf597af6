"""Model group: hot-path frames per wall second for the default scenario, against raw SimPy,
and against the same model loaded from its sources (interpreted, in a process of its own).

Each figure is the fastest of a few runs (as the other groups do with ``best_of``): the least
disturbed by whatever else the machine is doing.
"""

from __future__ import annotations

import time
from dataclasses import replace

import simpy

from benchmarks.timing import interpreted
from nnrpsim.model import BUILD_STATUS, ModelConfig, simulate

RUNS = 5
RAW_EVENTS = 300_000
DEFAULT_SCENARIO = ModelConfig(duration_ms=300_000.0)
MEMORY_PRESSURE = replace(
    DEFAULT_SCENARIO,
    server=replace(
        DEFAULT_SCENARIO.server,
        limits=replace(DEFAULT_SCENARIO.server.limits, capacity_bytes=4 << 20),
    ),
)
"""The default scenario with 4 MiB of GPU memory, a fifth of its working set: most installs
must evict first, the regime a capacity study spends its time in."""


def _raw_simpy_events_per_s() -> float:
    """A bare process doing nothing but timeouts: the ceiling any SimPy model runs under."""
    env = simpy.Environment()

    def ticker():
        while True:
            yield env.timeout(1)

    env.process(ticker())
    start = time.perf_counter()
    env.run(until=RAW_EVENTS)
    return RAW_EVENTS / (time.perf_counter() - start)


def _fastest(config: ModelConfig):
    return min((simulate(config, 2026) for _ in range(RUNS)), key=lambda r: r.wall_s)


def _frames_per_s(config: ModelConfig) -> float:
    fastest = _fastest(config)
    return fastest.counters["hot_path_frames"] / fastest.wall_s


def run() -> dict[str, float]:
    """``wall_s`` times the event loop of a run (not drawing the plan or assembling records);
    ``events`` counts every SimPy event the run processed."""
    fastest = _fastest(DEFAULT_SCENARIO)
    frames_per_s = fastest.counters["hot_path_frames"] / fastest.wall_s
    model_events_per_s = fastest.events / fastest.wall_s
    raw = max(_raw_simpy_events_per_s() for _ in range(RUNS))
    frames = fastest.counters["hot_path_frames"]
    compiled = BUILD_STATUS == "compiled"
    figures = {
        "model.frames_per_s": frames_per_s,
        "model.frames_per_s_memory_pressure": _frames_per_s(MEMORY_PRESSURE),
        # 1: the figures are the compiled model's (mypyc; setup.py), 0: its sources'
        "model.compiled": float(compiled),
        "model.events_per_s": model_events_per_s,
        "model.simpy_events_per_s": raw,
        "model.events_ratio_vs_simpy": model_events_per_s / raw,
        # what the ratio is made of: SimPy events per frame, and the model's own time per frame
        # (the run's, less what its events would cost raw SimPy); half of raw SimPy's rate
        # needs the second no larger than the first times 1e6 / raw
        "model.events_per_frame": fastest.events / frames,
        "model.own_us_per_frame": (fastest.wall_s - fastest.events / raw) / frames * 1e6,
    }
    if compiled:
        figures["model.speedup_compiled_vs_interpreted"] = frames_per_s / interpreted(
            "benchmarks.model", "m._frames_per_s(m.DEFAULT_SCENARIO)"
        )
    return figures
