"""The host knows its own send queue: a reference whose lease would run out before the frame's
last byte is on the wire is not sent. Queued behind the host's own transfers, the object is
installed again; outlived by its own frame's inline bodies, it goes inline. Either way no cache
error and no fallback, where a host that looked only at the clock would draw one."""

from __future__ import annotations

import pytest

from nnrpsim.model import (
    InstallCause,
    LinkConfig,
    ModelConfig,
    ModelResult,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    WorkloadConfig,
    WorkloadPlan,
    simulate,
)
from nnrpsim.model.link import Link
from nnrpsim.protocol import inline_object_bytes

from .plans import one_session

A, B = 0, 1
BYTES_PER_MS = 1_000.0  # 1 MB/s: 100 kB take 100 ms to send
TTL_MS = 40  # A is installed at about 4 ms: the host stops referencing it at 43 ms


def _run(plan: WorkloadPlan):
    link = LinkConfig(latency_ms=1.0, bandwidth_bytes_per_ms=BYTES_PER_MS)
    config = ModelConfig(
        duration_ms=400.0,
        uplink=link,
        downlink=link,
        server=ServerConfig(per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=0.0),
        policy=PolicyConfig(
            name="threshold",
            min_object_bytes=0,
            min_expected_reuse=1.0,  # reused once: inline
            ttl_hint_ms=TTL_MS,
            renew_margin=0.0,
        ),
    )
    result = simulate(config, 1, plan)
    assert result.violations == 0
    assert result.audit["fallbacks"] == 0  # no reference reached the server too late
    refs = result.references
    of_a = refs["object"] == A
    return result, refs["outcome"][of_a].tolist(), refs["cause"][of_a].tolist()


def test_a_reference_queued_behind_the_hosts_own_transfer_past_its_lease_is_reinstalled():
    # At 20 ms a 100 kB install of B takes the uplink until about 120 ms; at 25 ms A's lease
    # still holds by the clock, but a reference would leave only after B, long after 43 ms.
    plan = one_session(
        [(0.0, [A]), (20.0, [B]), (25.0, [A])], [2_000, 100_000], [10.0, 10.0], 400.0
    )
    result, outcomes, causes = _run(plan)
    assert outcomes == [RefOutcome.INSTALLED, RefOutcome.INSTALLED]
    assert causes == [InstallCause.COLD, InstallCause.EXPIRED]
    assert result.counters["reinstalls_after_expiry"] == 1


def test_a_reference_outlived_by_its_own_frames_inline_bodies_goes_inline():
    # At 30 ms A's lease holds, and the uplink is idle; but the frame also inlines 100 kB of B
    # (reused once: the policy inlines it), so its last byte leaves at about 130 ms.
    plan = one_session([(0.0, [A]), (30.0, [A, B])], [2_000, 100_000], [10.0, 1.0], 400.0)
    result, outcomes, causes = _run(plan)
    assert outcomes == [RefOutcome.INSTALLED, RefOutcome.INLINED_AFTER_INVALIDATE]
    assert causes == [InstallCause.COLD, InstallCause.EXPIRED]
    assert result.wire["inline"] == inline_object_bytes(2_000) + inline_object_bytes(100_000)
    assert result.wire["reference"] == 24  # the first operation's reference only


@pytest.mark.parametrize(
    ("second_ms", "outcome", "cause"),
    [
        (10_203.0, RefOutcome.HIT, InstallCause.NONE),
        (10_204.0, RefOutcome.INLINED_AFTER_INVALIDATE, InstallCause.EXPIRED),
    ],
)
def test_a_frame_whose_last_byte_leaves_as_the_lease_ends_inlines_it_as_expired(
    second_ms, outcome, cause
):
    """An uplink of one byte a millisecond and no latency: A's PUT (80 + 100 bytes) leaves at
    192 ms and arrives at 372, so the host counts on its 10 s lease until 10,372 ms; a
    referencing frame (168 bytes) started at 10,204 ms has its last byte out at that very
    millisecond, when the lease no longer holds: A goes inline, as run out."""
    config = ModelConfig(
        duration_ms=60_000.0,
        uplink=LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=1.0),
        downlink=LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=float("inf")),
        server=ServerConfig(per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=0.0),
        policy=PolicyConfig(name="always", ttl_hint_ms=10_000, renew_margin=0.0),
    )
    plan = one_session([(0.0, [A]), (second_ms, [A])], [100], [10.0], 60_000.0)
    result = simulate(config, 1, plan)
    refs = result.references
    assert refs["time_ms"].tolist() == [192.0, second_ms]
    assert refs["outcome"].tolist() == [RefOutcome.INSTALLED, outcome]
    assert refs["cause"].tolist() == [InstallCause.COLD, cause]
    assert result.violations == 0 and result.audit["fallbacks"] == 0


def _saturated_run() -> ModelResult:
    """One host whose uplink is offered more installs than it carries in the run (it catches up
    after): short leases, big objects, four operations in flight per session, nothing evicted,
    changed or renewed."""
    uplink = LinkConfig(latency_ms=1.0, bandwidth_bytes_per_ms=6_000.0)
    config = ModelConfig(
        duration_ms=20_000.0,
        uplink=uplink,
        downlink=LinkConfig(latency_ms=1.0),
        policy=PolicyConfig(name="always", ttl_hint_ms=500, renew_margin=0.0),
        workload=WorkloadConfig(
            session_rate_per_s=2.0,
            session_duration_ms=10_000.0,
            operation_rate_per_s=10.0,
            shared_objects_per_namespace=30,
            object_size_median=16_384,
        ),
    )
    return simulate(config, 3)


def test_a_host_that_sees_its_queue_sends_no_reference_too_late_on_a_saturated_link():
    result = _saturated_run()
    assert result.link_utilisation > 1 and result.violations == 0
    outcomes = result.references["outcome"]
    assert (outcomes == RefOutcome.HIT).mean() > 0.2
    assert not (outcomes == RefOutcome.LEASE_EXPIRED).any()
    assert result.audit["fallbacks"] == 0


@pytest.mark.interpreted
def test_a_host_blind_to_its_queue_draws_lease_expired_errors_there(monkeypatch):
    monkeypatch.setattr(Link, "free_at", lambda self, now: now)
    monkeypatch.setattr(Link, "last_byte_at", lambda self, now, n_bytes: now)
    result = _saturated_run()
    outcomes = result.references["outcome"]
    assert (outcomes == RefOutcome.LEASE_EXPIRED).sum() > 1_000
    assert result.audit["fallbacks"] > 1_000
    assert (outcomes == RefOutcome.HIT).mean() < 0.15  # fewer hits, for the fallbacks' traffic
    assert result.violations == 0  # late, not wrong: the server refuses, the host falls back
