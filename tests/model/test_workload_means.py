"""The closed-form means of a synthetic workload match what its drawn plans hold."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.model import WorkloadConfig
from nnrpsim.model.workload import synthetic_plan
from nnrpsim.model.workload_means import describe_means, workload_means
from nnrpsim.protocol import CacheObjectKind, inline_object_bytes

PROMPT, TOOL, TABLE = (
    CacheObjectKind.PROMPT_SEGMENT,
    CacheObjectKind.TOOL_SCHEMA,
    CacheObjectKind.TENSOR_SECTION_TABLE,
)
HOSTS, DURATION_MS = 2, 3_600_000.0
WINDOW = (600_000.0, 3_000_000.0)  # past the ramp, before sessions are cut at the end


def test_means_match_a_drawn_plan():
    config = WorkloadConfig(
        session_rate_per_s=0.5,
        operation_rate_per_s=2.0,
        namespaces=10,
        shared_objects_per_namespace=200,
        shared_refs_per_operation=3,
        private_objects_per_session=4,
        private_refs_per_operation=3,
        shared_kinds=((PROMPT, 1.0), (TOOL, 2.0)),
        private_kinds=((PROMPT, 3.0), (TABLE, 1.0)),
        kind_sizes=((TOOL, 2_048, 0.5), (TABLE, 256 << 10, 0.5)),
    )
    plan = synthetic_plan(config, HOSTS, DURATION_MS, np.random.SeedSequence(17))
    means = workload_means(config, HOSTS * config.session_rate_per_s)

    lo, hi = WINDOW
    samples = np.linspace(lo, hi, 500)
    starts = np.array([s.start_ms for s in plan.sessions])
    ends = np.array([s.end_ms for s in plan.sessions])
    running = (starts[:, None] <= samples) & (samples < ends[:, None])
    assert running.sum(axis=0).mean() == pytest.approx(means.concurrent_sessions, rel=0.1)

    n_shared = config.namespaces * config.shared_objects_per_namespace
    assert plan.sizes[:n_shared].sum() == pytest.approx(means.shared_bytes, rel=0.1)
    private = plan.sizes[n_shared:].reshape(len(plan.sessions), -1).sum(axis=1)
    in_use = (running * private[:, None]).sum(axis=0).mean()
    assert in_use == pytest.approx(means.private_bytes_in_use, rel=0.1)

    operations = [refs for s in plan.sessions for t, refs in s.operations if lo <= t < hi]
    span_s = (hi - lo) / 1000
    assert len(operations) / span_s == pytest.approx(means.operations_per_s, rel=0.1)
    per_operation = np.mean([len(refs) for refs in operations])
    assert per_operation == pytest.approx(means.references_per_operation, rel=0.03)
    inline = sum(int(inline_object_bytes(plan.sizes[refs]).sum()) for refs in operations)
    assert inline / span_s == pytest.approx(means.inline_bytes_per_s, rel=0.1)


def test_the_description_names_every_mean_with_units():
    line = describe_means(workload_means(WorkloadConfig(), 2.0))
    # 2 sessions/s x 60 s; 120 x 1 operation/s; 50 shared objects x 4 namespaces of 16 KiB
    # median (27 kB mean)
    assert line.startswith("~120 sessions at once, 120.0 operations/s")
    assert "shared objects 5.4 MB" in line and "/s" in line.split(";")[-1]
