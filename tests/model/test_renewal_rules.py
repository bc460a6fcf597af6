"""A renewal by one host of a lease another host holds: under the reference rule (touch) it can
shorten the lease, and the first host, not told, meets an expired lease; under the what-if rule
``extend`` a renewal never shortens a lease."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, ObjectCatalog
from nnrpsim.model import (
    InstallCause,
    ModelConfig,
    ModelResult,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    SessionPlan,
    WorkloadPlan,
    simulate,
)
from nnrpsim.model.host import ACK_BYTES, ERROR_BYTES, FRAME_SUBMIT_OVERHEAD, PUT_OVERHEAD
from nnrpsim.protocol import CacheObjectKind, MessageType, packet_bytes

from .test_against_replay import INSTANT

SHARED = 0  # a system prompt both hosts' sessions use (owned by the connection that put it)


def _plan(sessions: list[SessionPlan]) -> WorkloadPlan:
    """These sessions' uses of the one object, of 4 KiB."""
    catalog = ObjectCatalog.from_arrays(
        np.ones(1), np.zeros(1, np.uint64), np.zeros(1, np.uint64), [CacheObjectKind.PROMPT_SEGMENT]
    )
    return WorkloadPlan(
        catalog, np.array([4_096]), sessions, np.zeros(0), np.zeros(0, np.int64), np.ones(1)
    )


def _two_hosts(renewal: str, host_0_uses_ms: list[float]) -> ModelResult:
    """Host 0's 10 s session asks for 5 s leases of the shared object and uses it at
    ``host_0_uses_ms``; host 1's 0.4 s session, which asks for 0.2 s ones, puts it at 1.1 s
    (under touch, ending the lease at 1.3 s)."""
    config = ModelConfig(
        duration_ms=10_000.0,
        hosts=2,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=None, renewal=renewal)),
        policy=PolicyConfig(name="always", ttl_fraction=0.5, renew_margin=0.0),
    )
    uses = [(at, [SHARED]) for at in host_0_uses_ms]
    long = SessionPlan(1, 0, 0.0, 10_000.0, 10_000.0, uses)
    short = SessionPlan(2, 1, 1_000.0, 1_400.0, 400.0, [(1_100.0, [SHARED])])
    return simulate(config, 1, _plan([long, short]))


def _one_host(uses_ms: list[float], renew_margin: float) -> ModelResult:
    """One host's 10 s session uses the object at ``uses_ms`` over instant links and a server
    that takes no time, asking for 1 s leases."""
    config = ModelConfig(
        duration_ms=10_000.0,
        uplink=INSTANT,
        downlink=INSTANT,
        server=ServerConfig(
            limits=CacheLimits(capacity_bytes=None),
            per_operation_ms=0.0,
            per_inline_byte_ms=0.0,
            per_put_byte_ms=0.0,
        ),
        policy=PolicyConfig(name="always", ttl_fraction=0.1, renew_margin=renew_margin),
    )
    uses = [(at, [SHARED]) for at in uses_ms]
    return simulate(config, 1, _plan([SessionPlan(1, 0, 0.0, 10_000.0, 10_000.0, uses)]))


@pytest.mark.parametrize(
    ("renewal", "second_use"),
    [
        ("touch", RefOutcome.LEASE_EXPIRED),  # host 1's PUT at 1.1 s ended the lease at 1.3 s
        ("extend", RefOutcome.HIT),  # the lease keeps its 5 s
    ],
)
def test_another_hosts_renewal_shortens_a_shared_lease_only_under_touch(renewal, second_use):
    result = _two_hosts(renewal, [10.0, 2_000.0])
    refs = result.references
    of_host_0 = refs["session"] == 1
    assert refs["outcome"][of_host_0].tolist() == [RefOutcome.INSTALLED, second_use]
    assert result.violations == 0 and result.fallback_success_rate == 1.0


def test_a_fallback_resubmission_is_the_caches_cost():
    """Host 0's use at 2 s, which meets the lease touch shortened, draws an ERROR and is sent
    again inline: both are the cache's control bytes (with each CACHE_PUT and its ACK, and
    each CACHE_INVALIDATE), which the wire saving counts against caching."""
    result = _two_hosts("touch", [10.0, 2_000.0])
    assert result.references["outcome"][-1] == RefOutcome.LEASE_EXPIRED
    assert result.audit["fallbacks"] == 1 and result.counters["renewals"] == 0
    notices = sum(result.invalidations.values())
    assert result.wire["cache_control"] == (
        result.counters["installs"] * (PUT_OVERHEAD + ACK_BYTES)
        + notices * packet_bytes(MessageType.CACHE_INVALIDATE)
        + ERROR_BYTES
        + FRAME_SUBMIT_OVERHEAD
    )


def test_a_host_told_its_lease_ran_out_early_puts_it_again_at_once():
    """As above under touch, but host 0's next use comes after the server's sweep at 2 s has
    told it that the lease ran out (at 1.3 s): a lease run out is put again at once, with no
    inline turn as after other notices, and counted as a reinstall after expiry."""
    result = _two_hosts("touch", [10.0, 2_500.0, 2_600.0])
    refs = result.references
    of_host_0 = refs["session"] == 1
    assert refs["outcome"][of_host_0].tolist() == [
        RefOutcome.INSTALLED,
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
    ]
    assert refs["cause"][of_host_0][1] == InstallCause.EXPIRED
    assert result.counters["reinstalls_after_expiry"] == 1
    assert result.violations == 0 and result.fallback_success_rate == 1.0


@pytest.mark.parametrize(
    ("use_ms", "third_use", "renewals"),
    [
        (499.0, RefOutcome.INSTALLED, 0),  # before renewal starts: the lease runs out at 1 s
        (500.0, RefOutcome.HIT, 2),  # renewed there, it lasts to 1.5 s, and renewed at 1.2 s
    ],
)
def test_renewal_starts_at_the_millisecond_the_margin_is_left(use_ms, third_use, renewals):
    """A 1 s lease put at 0 with a renewal margin of one half: a use at 0.5 s renews it, one
    at 0.499 s does not, and the use at 1.2 s hits the renewed lease or puts it again. (The
    engines' agreement over instant links never met a use on that very millisecond.)"""
    result = _one_host([0.0, use_ms, 1_200.0], renew_margin=0.5)
    assert result.references["outcome"].tolist() == [
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
        third_use,
    ]
    assert result.counters["renewals"] == renewals
    assert result.violations == 0 and result.fallback_success_rate == 1.0


@pytest.mark.parametrize(
    ("use_ms", "second_use", "reinstalls"),
    [(999.0, RefOutcome.HIT, 0), (1_000.0, RefOutcome.INSTALLED, 1)],
)
def test_a_lease_is_over_at_the_millisecond_it_runs_out(use_ms, second_use, reinstalls):
    """A 1 s lease put at 0, never renewed: a use at 0.999 s references it, one at 1 s puts
    it again at once (it ran out: no inline turn, as after a notice)."""
    result = _one_host([0.0, use_ms], renew_margin=0.0)
    assert result.references["outcome"].tolist() == [RefOutcome.INSTALLED, second_use]
    assert result.counters["reinstalls_after_expiry"] == reinstalls
    assert result.counters["renewals"] == 0
    assert result.violations == 0 and result.fallback_success_rate == 1.0
