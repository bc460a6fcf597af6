"""A reference carries the version of the host's lease, as the ORB does on the wire: when the
content changes while the frame is queued and another host installs the new version, the frame
arrives with the old version and gets VERSION_MISMATCH, then falls back inline."""

from __future__ import annotations

import numpy as np

from nnrpsim.engine import CacheLimits, ObjectCatalog
from nnrpsim.model import (
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    SessionPlan,
    WorkloadPlan,
    simulate,
)
from nnrpsim.protocol import CacheObjectKind

X, Y = 0, 1  # X is cached; Y, never reused, is inlined and clogs host 0's uplink
SIZES = np.array([4_096, 20_000])


def _plan() -> WorkloadPlan:
    ids = np.arange(2, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(2), ids, ids, np.full(2, CacheObjectKind.PROMPT_SEGMENT)
    )
    reuse = {X: 10.0, Y: 0.0}
    sessions = [
        SessionPlan(1, 0, 0.0, 200.0, 200.0, [(20.0, [X]), (60.0, [X])], reuse),
        SessionPlan(2, 0, 0.0, 200.0, 200.0, [(59.9, [Y])], reuse),
        SessionPlan(3, 1, 0.0, 200.0, 200.0, [(66.0, [X])], reuse),
    ]
    changes = np.array([65.0]), np.array([X])
    return WorkloadPlan(catalog, SIZES, sessions, *changes, np.zeros(2))


def test_a_reference_queued_across_a_content_change_misses_on_version():
    link = LinkConfig(latency_ms=1.0, bandwidth_bytes_per_ms=1_000.0)  # Y takes 20 ms to send
    config = ModelConfig(
        duration_ms=200.0,
        hosts=2,
        uplink=link,
        downlink=link,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=1 << 20)),
        policy=PolicyConfig(
            name="threshold", min_object_bytes=0, min_expected_reuse=0.5, ttl_hint_ms=10_000
        ),
    )
    result = simulate(config, 1, _plan())
    refs = result.references
    x_by_session = {
        (int(s), float(t)): int(o)
        for s, t, o, obj in zip(
            refs["session"], refs["time_ms"], refs["outcome"], refs["object"], strict=True
        )
        if obj == X
    }
    assert x_by_session == {
        (1, 20.0): RefOutcome.INSTALLED,
        (1, 60.0): RefOutcome.VERSION_MISMATCH,  # sent with v1; host 1 put v2 meanwhile
        (3, 66.0): RefOutcome.INSTALLED,
    }
    assert result.invalidations["content_changed"] == 1
    assert result.violations == 0 and result.fallback_success_rate == 1.0
