"""Model group: hot-path frames per wall second for the default scenario, against raw SimPy."""

from __future__ import annotations

import time

import simpy

from nnrpsim.model import ModelConfig, simulate

RAW_EVENTS = 300_000


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


def run() -> dict[str, float]:
    result = simulate(ModelConfig(duration_ms=300_000.0), 2026)
    frames_per_s = result.counters["hot_path_frames"] / result.wall_s
    model_events_per_s = result.events / result.wall_s
    raw = _raw_simpy_events_per_s()
    return {
        "model.frames_per_s": frames_per_s,
        "model.events_per_s": model_events_per_s,
        "model.simpy_events_per_s": raw,
        "model.events_ratio_vs_simpy": model_events_per_s / raw,
    }
