"""A server with a worker limit takes FRAME_SUBMITs up first come first served: a frame waits
while every worker is busy. Checked by hand for a burst, and against the closed forms of the
M/D/1 queue (Pollaczek-Khinchine) and the M/M/2 queue (Erlang C) for Poisson operations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nnrpsim.model import (
    InstallCause,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    WorkloadConfig,
    WorkloadPlan,
    simulate,
)
from nnrpsim.protocol import inline_object_bytes

from .plans import one_object_each, one_session

LATENCY_MS = 1.0
HANDSHAKE_MS = 4 * LATENCY_MS  # CLIENT_HELLO and SESSION_OPEN round trips come first
PER_OPERATION_MS = 10.0
END_MS = 1_000.0  # sessions last this long after their last operation is planned


def _simulate(
    plan: WorkloadPlan, server: ServerConfig, policy: PolicyConfig, latency_ms: float = LATENCY_MS
):
    """One run over links this fast that they serialise in well under a nanosecond, with as
    many operations in flight as the plan makes."""
    link = LinkConfig(latency_ms=latency_ms, bandwidth_bytes_per_ms=1e15)
    config = ModelConfig(
        duration_ms=plan.sessions[0].end_ms,
        uplink=link,
        downlink=link,
        server=server,
        policy=policy,
        workload=WorkloadConfig(max_in_flight_operations=65_535),
    )
    return simulate(config, 1, plan)


def _waits(plan: WorkloadPlan, workers: int | None, per_operation_ms: float, per_byte_ms: float):
    """Each operation's wait for a worker: its latency less the two link latencies and its own
    processing."""
    server = ServerConfig(
        per_operation_ms=per_operation_ms, per_inline_byte_ms=per_byte_ms, workers=workers
    )
    result = _simulate(plan, server, PolicyConfig(name="never"))
    assert result.violations == 0
    ops = result.operations
    order = np.argsort(ops["start_ms"], kind="stable")
    inline = np.array([inline_object_bytes(int(size)) for size in plan.sizes])
    processing = per_operation_ms + per_byte_ms * inline
    assert result.server_busy_ms == [pytest.approx(processing.sum())]
    return ops["latency_ms"][order] - 2 * LATENCY_MS - processing


@pytest.mark.parametrize("workers", [None, 1, 2, 3])
def test_a_burst_is_taken_up_in_turn(workers):
    # Seven operations at once: with k workers, the i-th waits for i // k frames before it.
    plan = one_object_each(np.zeros(7), 64, END_MS)
    waits = _waits(plan, workers, PER_OPERATION_MS, 0.0)
    turns = np.zeros(7) if workers is None else np.arange(7) // workers
    assert waits == pytest.approx(turns * PER_OPERATION_MS, abs=1e-6)


def test_poisson_operations_on_one_worker_wait_as_m_d_1():
    # Constant service s at load rho: mean wait rho * s / (2 (1 - rho)) (Pollaczek-Khinchine).
    service, rho, n = 1.0, 0.6, 40_000
    rng = np.random.default_rng(7)
    planned = HANDSHAKE_MS + np.cumsum(rng.exponential(service / rho, n))
    waits = _waits(one_object_each(planned, 64, planned[-1] + END_MS), 1, service, 0.0)
    assert waits.mean() == pytest.approx(rho * service / (2 * (1 - rho)), rel=0.06)
    assert waits.min() == pytest.approx(0.0, abs=1e-9)


def test_poisson_operations_with_exponential_bodies_on_two_workers_wait_as_m_m_2():
    # Service time = inline bytes x per-byte cost, the bodies exponential in size: M/M/2, whose
    # mean wait is Erlang C's probability of waiting over (c mu - lambda).
    mean_service, arrival_rate, servers, n = 1.0, 1.2, 2, 40_000
    per_byte = 1e-5
    rng = np.random.default_rng(11)
    planned = HANDSHAKE_MS + np.cumsum(rng.exponential(1 / arrival_rate, n))
    sizes = np.maximum(1, rng.exponential(mean_service / per_byte, n)).astype(np.int64)
    waits = _waits(one_object_each(planned, sizes, planned[-1] + END_MS), servers, 0.0, per_byte)
    a = arrival_rate * mean_service
    tail = a**servers / math.factorial(servers) * servers / (servers - a)
    waiting = tail / (sum(a**k / math.factorial(k) for k in range(servers)) + tail)
    expected = waiting / (servers / mean_service - arrival_rate)
    assert waits.mean() == pytest.approx(expected, rel=0.08)
    assert (waits > 1e-9).mean() == pytest.approx(waiting, rel=0.05)


@pytest.mark.parametrize("workers", [None, 1])
def test_cache_put_bodies_take_worker_time(workers):
    # Two operations at once each install a body that takes the server 4 ms to stage: with one
    # worker the second PUT waits for the first. Frames cost nothing, so the rest of each
    # operation is the PUT and frame round trips (4 latencies over instant wires).
    latency, size, per_put_byte = 10.0, 4_000, 1e-3
    server = ServerConfig(
        per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=per_put_byte, workers=workers
    )
    plan = one_object_each(np.zeros(2), size, END_MS)
    result = _simulate(plan, server, PolicyConfig(name="always"), latency)
    staging = per_put_byte * size
    turns = np.zeros(2) if workers is None else np.arange(2)
    assert result.counters["installs"] == 2 and result.violations == 0
    assert result.server_busy_ms == [pytest.approx(2 * staging)]
    assert result.operations["latency_ms"].tolist() == pytest.approx(
        4 * latency + staging * (1 + turns)
    )


def test_the_host_counts_a_lease_from_its_puts_arrival_not_from_a_wait_it_cannot_see():
    # One worker. A's frame (at 8 ms) keeps the worker busy until 58 ms, so B's PUT, arriving at
    # 11 ms, is granted only at 58 ms (100 ms lease: to 158 ms). The host, blind to that wait,
    # counts B's lease from 11 ms and stops referencing it at 110 ms: at 120 ms it installs B
    # again, cause expired, where a host that knew the grant time would send a reference.
    a, b = 0, 1
    server = ServerConfig(
        per_operation_ms=50.0, per_inline_byte_ms=0.0, per_put_byte_ms=1e-3, workers=1
    )
    policy = PolicyConfig(
        name="threshold", min_object_bytes=0, min_expected_reuse=0.0, ttl_hint_ms=100
    )
    plan = one_session(
        [(HANDSHAKE_MS, [a]), (10.0, [b]), (120.0, [b])], [1_000, 1_000], [2.0, 2.0], END_MS
    )
    result = _simulate(plan, server, policy)
    refs = result.references
    of_b = refs["object"] == b
    assert refs["outcome"][of_b].tolist() == [RefOutcome.INSTALLED, RefOutcome.INSTALLED]
    assert refs["cause"][of_b].tolist() == [InstallCause.COLD, InstallCause.EXPIRED]
    assert result.violations == 0 and result.audit["fallbacks"] == 0
