"""Host cache policies: the spec's rule, and connection_scope, which counts the reuse of
connection-owned objects across sessions and leases them for longer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nnrpsim.model import ModelConfig, PolicyConfig, RefOutcome, WorkloadConfig, simulate
from nnrpsim.model.policies import CONNECTION_TTL_MS, make_policy

# Sessions reference their objects about once (an operation every 50 s of a one-minute
# session), while 20 concurrent sessions share each namespace's system prompts.
RARE_USE = WorkloadConfig(
    session_rate_per_s=2.0,
    operation_rate_per_s=0.02,
    namespaces=2,
    shared_objects_per_namespace=10,
)


def test_connection_ttl_applies_to_connection_owned_objects_only():
    scoped = make_policy(PolicyConfig(name="connection_scope"))
    assert scoped.connection_ttl_ms == CONNECTION_TTL_MS
    assert (scoped.put_ttl_ms(45_000, True), scoped.put_ttl_ms(45_000, False)) == (
        CONNECTION_TTL_MS,
        45_000,
    )
    assert (
        make_policy(PolicyConfig(name="connection_scope", connection_ttl_ms=5)).put_ttl_ms(
            45_000, True
        )
        == 5
    )
    spec = make_policy(PolicyConfig(name="best_practice"))
    assert spec.connection_ttl_ms is None and spec.put_ttl_ms(45_000, True) == 45_000
    with pytest.raises(ValueError, match="connection_ttl_ms"):
        PolicyConfig(connection_ttl_ms=0)


@pytest.mark.parametrize(
    ("size", "reuse", "cached"),
    [(1_025, 2.5, True), (1_024, 2.5, False), (1_025, 2.0, False), (1_000_000, 1.0, False)],
)
def test_the_spec_rule_caches_objects_larger_than_1_kib_reused_more_than_twice(size, reuse, cached):
    """shared/spec/nnrp-cache.md section 14, at its thresholds: 1 KiB itself is not larger,
    and two uses are not more than twice; ``always`` caches each of them, ``never`` none."""
    assert make_policy(PolicyConfig(name="best_practice")).should_cache(size, reuse) is cached
    assert make_policy(PolicyConfig(name="connection_scope")).should_cache(size, reuse) is cached
    assert make_policy(PolicyConfig(name="always")).should_cache(size, reuse) is True
    assert make_policy(PolicyConfig(name="never")).should_cache(size, reuse) is False


def _run(name: str):
    config = ModelConfig(
        duration_ms=300_000.0, warmup_ms=60_000.0, workload=RARE_USE, policy=PolicyConfig(name)
    )
    return simulate(config, 13)


def test_connection_scope_caches_what_sessions_share_when_each_uses_it_once():
    spec, scoped = _run("best_practice"), _run("connection_scope")
    n_shared = RARE_USE.namespaces * RARE_USE.shared_objects_per_namespace

    def hit_rates(result):
        refs = result.references
        hits, shared = refs["outcome"] == RefOutcome.HIT, refs["object"] < n_shared
        return hits[shared].mean(), hits[~shared].mean()

    (spec_shared, spec_private), (scoped_shared, scoped_private) = (
        hit_rates(spec),
        hit_rates(scoped),
    )
    assert spec_shared < 0.05 and scoped_shared > 0.9  # few shared objects reach 3 uses a session
    assert scoped_private == spec_private  # session-owned objects: the same rule
    ttls = scoped.accepted_ttl_ms
    assert CONNECTION_TTL_MS in ttls and (ttls[ttls != CONNECTION_TTL_MS] < 300_000).all()
    assert scoped.violations == 0
    assert sum(scoped.wire.values()) < sum(spec.wire.values()) / 2  # the same work, half the bytes


@pytest.mark.parametrize(("hint_ms", "granted_ms"), [(0, 7_000), (3_000, 3_000)])
def test_a_host_that_sends_no_ttl_hint_gets_the_servers_default(hint_ms, granted_ms):
    """lease_ttl_hint_ms 0 is unspecified (spec section 9): SESSION_OPEN_ACK grants the
    server's default lease TTL, and every PUT asks for it."""
    config = ModelConfig(
        duration_ms=60_000.0,
        policy=PolicyConfig(name="always", ttl_hint_ms=hint_ms),
    )
    config = replace(config, server=replace(config.server, default_lease_ttl_ms=7_000))
    result = simulate(config, 3)
    assert len(result.accepted_ttl_ms) > 10
    assert set(result.accepted_ttl_ms.tolist()) == {granted_ms}


def test_every_cache_ack_s_ttl_is_recorded_one_of_0_ms_too():
    """A server whose TTL ceiling is 0 grants leases that end as they begin: each CACHE_ACK
    is recorded all the same, one an install, a renewal or a refusal."""
    config = ModelConfig(duration_ms=60_000.0, policy=PolicyConfig(name="always"))
    limits = replace(config.server.limits, ttl_ceiling_ms=0)
    result = simulate(replace(config, server=replace(config.server, limits=limits)), 3)
    acks = sum(result.counters[name] for name in ("installs", "renewals", "refused_puts"))
    assert len(result.accepted_ttl_ms) == acks > 10
    assert set(result.accepted_ttl_ms.tolist()) == {0}
