"""Model group: hot-path frames per wall second for the default scenario, against raw SimPy,
and against the same model loaded from its sources (interpreted, in a process of its own).

Each figure is the fastest of a few runs (as the other groups do with ``best_of``): the least
disturbed by whatever else the machine is doing. The model's runs and raw SimPy's alternate, each
after a full collection, so that both meet the same drift of the machine's speed and the same
heap (see :func:`_against_raw`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import simpy

from benchmarks.timing import interpreted
from nnrpsim.gc_pause import cyclic_gc_paused
from nnrpsim.model import BUILD_STATUS, ModelConfig, ModelResult, Simulation, simulate

T = TypeVar("T")
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


def _raw_simpy_events_per_s(processes: int = 1) -> float:
    """Bare processes doing nothing but timeouts: the ceiling any SimPy model runs under. One
    process is the issue's baseline; with many (periods spread over [1, 2), so that their
    timeouts interleave) SimPy's event queue is as deep as a model's with as many waiting, and
    each push and pop there pays for the depth. The loop runs as the model's does, with the
    cyclic GC paused: with it on, each collection would scan whatever the process holds."""
    env = simpy.Environment()

    def ticker(period: float):
        while True:
            yield env.timeout(period)

    periods = [1.0 + i / processes for i in range(processes)]
    for period in periods:
        env.process(ticker(period))
    until = RAW_EVENTS / sum(1.0 / period for period in periods)
    first = next(env._eid)  # (SimPy numbers the events it schedules: see Simulation._run_until)
    with cyclic_gc_paused():
        start = time.perf_counter()
        env.run(until=until)
        elapsed = time.perf_counter() - start
    return (next(env._eid) - first - 1 - len(env._queue)) / elapsed


def _queue_depth(config: ModelConfig) -> float:
    """The mean number of events in SimPy's queue over a run of ``config`` (sampled each
    simulated second, in a run of its own that is not timed)."""
    sim = Simulation(config, 2026)
    depths: list[int] = []

    def probe():
        while True:
            yield sim.env.timeout(1_000.0)
            depths.append(len(sim.env._queue))

    sim.env.process(probe())
    sim.run()
    return sum(depths) / len(depths)


def _collected(run: Callable[[], T]) -> T:
    """``run()`` after a full collection: what earlier runs left does not slow its own."""
    gc.collect()
    return run()


def _timed_run(config: ModelConfig) -> ModelResult:
    return _collected(lambda: simulate(config, 2026))


def _wall(result: ModelResult) -> float:
    return result.wall_s


def _fastest(config: ModelConfig) -> ModelResult:
    return min((_timed_run(config) for _ in range(RUNS)), key=_wall)


def _frames_per_s(config: ModelConfig) -> float:
    fastest = _fastest(config)
    return fastest.counters["hot_path_frames"] / fastest.wall_s


def _against_raw(config: ModelConfig, processes: int = 1) -> tuple[ModelResult, float]:
    """The fastest of ``RUNS`` runs of ``config`` and the fastest raw SimPy rate of as many
    runs with ``processes``, the two alternating. Measured one set after the other, the second
    met another speed of this shared machine (raw SimPy's rate has moved by half within
    minutes) and another heap. One untimed raw run goes first: a process's first runs are slow."""
    _raw_simpy_events_per_s(processes)
    raws: list[float] = []

    def model_then_raw() -> ModelResult:
        result = _timed_run(config)
        raws.append(_collected(lambda: _raw_simpy_events_per_s(processes)))
        return result

    return min((model_then_raw() for _ in range(RUNS)), key=_wall), max(raws)


def run() -> dict[str, float]:
    """``wall_s`` times the event loop of a run (not drawing the plan or assembling records);
    ``events`` counts every SimPy event the run processed."""
    fastest, raw = _against_raw(DEFAULT_SCENARIO)
    frames_per_s = fastest.counters["hot_path_frames"] / fastest.wall_s
    model_events_per_s = fastest.events / fastest.wall_s
    depth = _queue_depth(DEFAULT_SCENARIO)
    at_depth, raw_at_depth = _against_raw(DEFAULT_SCENARIO, round(depth))
    model_events_per_s_at_depth = at_depth.events / at_depth.wall_s
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
        # the same against as many bare processes as the model keeps waiting in SimPy's queue:
        # how much of the gap is the depth of the queue rather than the model's own work
        "model.simpy_queue_depth": depth,
        "model.simpy_events_per_s_at_model_depth": raw_at_depth,
        "model.events_ratio_vs_simpy_at_model_depth": model_events_per_s_at_depth / raw_at_depth,
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
