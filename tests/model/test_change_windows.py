"""A private object's content changes are drawn while its session runs only: one before the
session starts or after it has closed reaches no lease, so it would change no number, on
either engine, and drawing them over the whole run made a run's changes grow with the square
of its length."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnrpsim.metrics import des_metrics
from nnrpsim.model import simulate, synthetic_plan
from nnrpsim.model.workload import WorkloadPlan
from nnrpsim.vector_run import vector_run

from .test_engines_agree import drawn_config


def with_changes_outside_sessions(plan: WorkloadPlan, n_shared: int, per_session: int, rng):
    """``plan`` with two more changes of every private object: one before its session starts
    and one after it has ended (instant links: its last reply came by then)."""
    extra_times, extra_objects = [], []
    for index, session in enumerate(plan.sessions):
        first = n_shared + index * per_session
        for obj in range(first, first + per_session):
            before = np.floor(rng.random() * np.floor(session.start_ms))
            after = np.ceil(session.end_ms) + 1.0
            extra_times += [before, after + rng.random() * 5_000.0]
            extra_objects += [obj, obj]
    times = np.floor(np.concatenate([plan.change_times_ms, extra_times]))
    objects = np.concatenate([plan.change_objects, np.array(extra_objects, dtype=np.int64)])
    order = np.lexsort((objects, times))
    return replace(plan, change_times_ms=times[order], change_objects=objects[order])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_change_outside_its_session_changes_no_number(seed):
    config = drawn_config(np.random.default_rng(seed))
    workload = replace(
        config.workload,
        content_change_rate_per_s=0.05,
        private_objects_per_session=max(config.workload.private_objects_per_session, 2),
    )
    config = replace(config, workload=workload)
    plan = synthetic_plan(workload, 1, config.duration_ms, np.random.SeedSequence(seed))
    n_shared = workload.namespaces * workload.shared_objects_per_namespace
    more = with_changes_outside_sessions(
        plan, n_shared, workload.private_objects_per_session, np.random.default_rng(seed)
    )
    kept = more.change_times_ms < config.duration_ms
    more = replace(
        more, change_times_ms=more.change_times_ms[kept], change_objects=more.change_objects[kept]
    )
    assert len(more.change_times_ms) > len(plan.change_times_ms)
    drawn, padded = (des_metrics(simulate(config, seed, p), config.warmup_ms) for p in (plan, more))
    np.testing.assert_equal(drawn, padded)
    drawn, padded = (vector_run(config, p)[0] for p in (plan, more))
    assert drawn.keys() == padded.keys()
    for name, value in drawn.items():  # (the memory's time average: summed in another order)
        assert padded[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
