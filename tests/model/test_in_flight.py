"""SESSION_OPEN's max_in_flight_operations: a session's operation starts at its planned time
while fewer than the granted number are outstanding, otherwise when enough replies have arrived.
Checked against a hand computation of that rule with a constant round trip."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nnrpsim.model import (
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    ServerConfig,
    WorkloadConfig,
    simulate,
)

from .plans import one_object_each

LATENCY_MS = 1.0
ROUND_TRIP_MS = 2 * LATENCY_MS  # links this fast serialise in well under a nanosecond
HANDSHAKE_MS = 2 * ROUND_TRIP_MS  # CLIENT_HELLO and SESSION_OPEN come first


def _config(limit: int, duration_ms: float) -> ModelConfig:
    link = LinkConfig(latency_ms=LATENCY_MS, bandwidth_bytes_per_ms=1e12)
    return ModelConfig(
        duration_ms=duration_ms,
        uplink=link,
        downlink=link,
        server=ServerConfig(per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=0.0),
        policy=PolicyConfig(name="never"),  # every frame one round trip, nothing to install
        workload=WorkloadConfig(max_in_flight_operations=limit),
    )


def _expected_starts(planned_ms: list[float], limit: int) -> tuple[list[float], int]:
    """In plan order; each at its planned time, or when the reply that leaves ``limit - 1``
    others outstanding arrives; and how many found ``limit`` outstanding, and waited."""
    starts: list[float] = []
    waited = 0
    for planned in planned_ms:
        at = max(planned, HANDSHAKE_MS, starts[-1] if starts else 0.0)
        outstanding = sorted(s + ROUND_TRIP_MS for s in starts if s + ROUND_TRIP_MS > at)
        if len(outstanding) >= limit:
            at = outstanding[len(outstanding) - limit]
            waited += 1
        starts.append(at)
    return starts, waited


def _starts(planned_ms: list[float], limit: int) -> tuple[np.ndarray, int]:
    """The operations' starts, and how many waited for a slot (the run's count)."""
    result = simulate(
        _config(limit, max(planned_ms) + 50.0),
        1,
        one_object_each(planned_ms, 4096, max(planned_ms) + 100.0),
    )
    assert result.violations == 0
    return np.sort(result.operations["start_ms"]), result.counters["operations_waited"]


@pytest.mark.parametrize("limit", [1, 2, 4, 8])
def test_a_burst_goes_out_limit_at_a_time(limit):
    planned = [10.0] * 8
    expected = [10.0 + ROUND_TRIP_MS * (i // limit) for i in range(8)]
    starts, waited = _starts(planned, limit)
    assert starts == pytest.approx(expected, abs=1e-6)
    assert waited == 8 - limit  # (all but the first window's)


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_staggered_operations_follow_the_window_rule(limit, seed):
    gaps = np.random.default_rng(seed).exponential(0.7, 60)
    planned = (HANDSHAKE_MS + np.cumsum(gaps)).tolist()
    (starts, waited), (expected, expected_waited) = (
        _starts(planned, limit),
        _expected_starts(planned, limit),
    )
    assert starts == pytest.approx(expected, abs=1e-6)
    assert waited == expected_waited > 0


def test_one_in_flight_waits_for_each_reply():
    """The window of one is the old rule: each operation waits for the previous reply."""
    planned = [10.0, 10.5, 11.0, 20.0]
    starts, waited = _starts(planned, 1)
    assert starts == pytest.approx([10.0, 12.0, 14.0, 20.0], abs=1e-6) and waited == 2


def test_overlapping_operations_keep_the_rules():
    """Operations in flight together may install the same objects and meet each other's
    CACHE_INVALIDATEs; the books still balance and every operation completes."""
    config = ModelConfig(
        duration_ms=20_000.0,
        server=ServerConfig(sweep_interval_ms=50.0),
        policy=PolicyConfig(name="always", ttl_hint_ms=300),
        workload=WorkloadConfig(
            operation_rate_per_s=500.0,
            session_rate_per_s=0.5,
            content_change_rate_per_s=1.0,
            shared_objects_per_namespace=5,
        ),
    )
    serial = simulate(
        dataclasses.replace(
            config, workload=dataclasses.replace(config.workload, max_in_flight_operations=1)
        ),
        3,
    )
    overlapped = simulate(config, 3)
    for result in (serial, overlapped):
        assert result.violations == 0, result.audit
        assert result.fallback_success_rate == 1.0
    assert most_in_flight(serial) == 1
    assert most_in_flight(overlapped) == 4


def most_in_flight(result) -> int:
    """The most operations any session had started and not yet been answered."""
    operations, most = result.operations, 0
    for session in np.unique(operations["session"]):
        mine = operations["session"] == session
        start = operations["start_ms"][mine]
        end = start + operations["latency_ms"][mine]
        most = max(most, int(np.sum((start[:, None] < end) & (start[:, None] >= start), 1).max()))
    return most
