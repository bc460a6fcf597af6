"""The host keeps the clock itself (SimPy's ``now`` is a Python property, a call per look):
after a timeout, the time it was set for, as SimPy computes it. Checked against SimPy's own
clock at every wait, in runs that take each kind of wait: an operation's due time, a worker's
queue, resends of lost frames, fallbacks after misses, operations in flight, a restart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nnrpsim.engine import CacheLimits
from nnrpsim.model import LinkConfig, ModelConfig, ServerConfig, simulate
from nnrpsim.model.host import Host

BASE = ModelConfig(duration_ms=30_000.0)
LOSSY = LinkConfig(loss=0.05)
PER_FRAME_MS = 20.0
"""The workers scenario's processing per frame: an operation that took more than two of these
and its round trips (1 ms) waited for the worker."""
SCENARIOS = {  # and what shows that the run took its kind of wait
    "default": (BASE, "hot_path_frames"),
    "workers": (  # about 80 % busy: frames queue for the worker
        replace(BASE, server=ServerConfig(workers=1, per_operation_ms=PER_FRAME_MS)),
        "worker_waits",
    ),
    "loss": (replace(BASE, uplink=LOSSY, downlink=LOSSY), "retransmissions"),
    "restart": (  # unannounced: hosts learn it by misses, and fall back
        replace(BASE, faults=replace(BASE.faults, restart_at_ms=10_000.0, announce_restart=False)),
        "fallbacks",
    ),
    "memory_pressure": (
        replace(BASE, server=ServerConfig(limits=CacheLimits(capacity_bytes=1 << 20))),
        "evictions",
    ),
}


@pytest.mark.interpreted
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_hosts_clock_is_simpys_at_every_wait(monkeypatch, name):
    config, feature = SCENARIOS[name]
    sleep, waits, behind = Host._sleep, [], []

    def checked_sleep(self, delay, now, window, holder):
        waits.append(now)
        if now != self.sim.env.now:
            behind.append((now, self.sim.env.now))
        return sleep(self, delay, now, window, holder)

    monkeypatch.setattr(Host, "_sleep", checked_sleep)
    result = simulate(config, 5)
    assert len(waits) > 1_000
    assert behind == []
    took = {
        **result.counters,
        **result.audit,
        "evictions": result.invalidations.get("evicted", 0),
        "worker_waits": int((result.operations["latency_ms"] > 2 * PER_FRAME_MS + 1.0).sum()),
    }
    assert took[feature] > 0
