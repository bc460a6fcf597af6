"""A renewal by one host of a lease another host holds: under the reference rule (touch) it can
shorten the lease, and the first host, not told, meets an expired lease; under the what-if rule
``extend`` a renewal never shortens a lease."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, ObjectCatalog
from nnrpsim.model import (
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    SessionPlan,
    WorkloadPlan,
    simulate,
)
from nnrpsim.protocol import CacheObjectKind

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


@pytest.mark.parametrize(
    ("renewal", "second_use"),
    [
        ("touch", RefOutcome.LEASE_EXPIRED),  # host 1's PUT at 1.1 s ended the lease at 1.3 s
        ("extend", RefOutcome.HIT),  # the lease keeps its 5 s
    ],
)
def test_another_hosts_renewal_shortens_a_shared_lease_only_under_touch(renewal, second_use):
    config = ModelConfig(
        duration_ms=10_000.0,
        hosts=2,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=None, renewal=renewal)),
        policy=PolicyConfig(name="always", ttl_fraction=0.5, renew_margin=0.0),
    )
    # Host 0's 10 s session asks for 5 s leases; host 1's 0.4 s session for 0.2 s ones.
    long = SessionPlan(1, 0, 0.0, 10_000.0, 10_000.0, [(10.0, [SHARED]), (2_000.0, [SHARED])])
    short = SessionPlan(2, 1, 1_000.0, 1_400.0, 400.0, [(1_100.0, [SHARED])])
    result = simulate(config, 1, _plan([long, short]))
    refs = result.references
    of_host_0 = refs["session"] == 1
    assert refs["outcome"][of_host_0].tolist() == [RefOutcome.INSTALLED, second_use]
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
    uses = [(0.0, [SHARED]), (use_ms, [SHARED]), (1_200.0, [SHARED])]
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
        policy=PolicyConfig(name="always", ttl_fraction=0.1, renew_margin=0.5),
    )
    result = simulate(config, 1, _plan([SessionPlan(1, 0, 0.0, 10_000.0, 10_000.0, uses)]))
    assert result.references["outcome"].tolist() == [
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
        third_use,
    ]
    assert result.counters["renewals"] == renewals
    assert result.violations == 0 and result.fallback_success_rate == 1.0
