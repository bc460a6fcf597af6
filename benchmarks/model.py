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
from nnrpsim.model import BUILD_STATUS, ModelConfig, Simulation, simulate

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
    each push and pop there pays for the depth."""
    env = simpy.Environment()

    def ticker(period: float):
        while True:
            yield env.timeout(period)

    periods = [1.0 + i / processes for i in range(processes)]
    for period in periods:
        env.process(ticker(period))
    until = RAW_EVENTS / sum(1.0 / period for period in periods)
    first = next(env._eid)  # (SimPy numbers the events it schedules: see Simulation._run_until)
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
    depth = _queue_depth(DEFAULT_SCENARIO)
    raw_at_depth = max(_raw_simpy_events_per_s(round(depth)) for _ in range(RUNS))
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
        "model.events_ratio_vs_simpy_at_model_depth": model_events_per_s / raw_at_depth,
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
