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

SHARED = 0  # a system prompt both hosts' sessions use (owned by the connection that put it)


def _plan() -> WorkloadPlan:
    catalog = ObjectCatalog.from_arrays(
        np.ones(1), np.zeros(1, np.uint64), np.zeros(1, np.uint64), [CacheObjectKind.PROMPT_SEGMENT]
    )
    # Host 0's 10 s session asks for 5 s leases; host 1's 0.4 s session for 0.2 s ones.
    long = SessionPlan(1, 0, 0.0, 10_000.0, 10_000.0, [(10.0, [SHARED]), (2_000.0, [SHARED])])
    short = SessionPlan(2, 1, 1_000.0, 1_400.0, 400.0, [(1_100.0, [SHARED])])
    return WorkloadPlan(
        catalog, np.array([4_096]), [long, short], np.zeros(0), np.zeros(0, np.int64), np.ones(1)
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
    result = simulate(config, 1, _plan())
    refs = result.references
    of_host_0 = refs["session"] == 1
    assert refs["outcome"][of_host_0].tolist() == [RefOutcome.INSTALLED, second_use]
    assert result.violations == 0 and result.fallback_success_rate == 1.0
