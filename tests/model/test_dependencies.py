"""Objects made from another (spec section 11): a prompt segment built on the system prompt
depends on it at the version it was made from, and changes with it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog
from nnrpsim.model import (
    InstallCause,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    SessionPlan,
    WorkloadConfig,
    WorkloadPlan,
    simulate,
)
from nnrpsim.model.host import Host
from nnrpsim.model.workload import synthetic_plan
from nnrpsim.protocol import CacheObjectKind
from nnrpsim.vector_run import plan_stream

SOURCE, MADE = 0, 1  # a shared system prompt, and a session's segment made from it


def _plan(change_at: float | None = None) -> WorkloadPlan:
    catalog = ObjectCatalog.from_arrays(
        np.array([1, 1 << 20]),
        np.array([0, 1], np.uint64),
        np.zeros(2, np.uint64),
        [CacheObjectKind.PROMPT_SEGMENT] * 2,
    )
    # The operations use only the segment; none names the system prompt.
    operations = [(at, [MADE]) for at in (10.0, 1_000.0, 2_000.0, 3_000.0, 4_000.0)]
    session = SessionPlan(1, 0, 0.0, 5_000.0, 5_000.0, operations, {MADE: 5.0})
    changes = (np.array([change_at]), np.array([SOURCE])) if change_at else (np.zeros(0),) * 2
    return WorkloadPlan(
        catalog,
        np.array([8_192, 4_096]),
        [session],
        changes[0],
        changes[1].astype(np.int64),
        np.ones(2),
        depends_on={MADE: SOURCE},
    )


def _config(cascade: bool = True) -> ModelConfig:
    return ModelConfig(
        duration_ms=5_000.0,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=None), cascade_dependencies=cascade),
        policy=PolicyConfig(name="always", ttl_hint_ms=60_000),
    )


def test_the_source_is_installed_along_with_the_first_use_of_what_was_made_from_it():
    result = simulate(_config(), 1, _plan())
    assert result.references["outcome"].tolist() == [RefOutcome.INSTALLED] + [RefOutcome.HIT] * 4
    assert result.counters["installs"] == 2  # the segment and its source, in one burst
    assert result.wire["put_body"] == 8_192 + 4_096
    assert result.violations == 0 and result.audit["fallbacks"] == 0


@pytest.mark.interpreted
def test_without_installing_the_source_along_the_segment_never_hits(monkeypatch):
    # A host that does not install the source along: after each install of the segment the last
    # look before the frame leaves finds no lease of the source and inlines it; the next
    # operation references it, and the server refuses it with dependency_invalid (fallback).
    monkeypatch.setattr(Host, "_sources", lambda self, *args: args[-1])
    result = simulate(_config(), 1, _plan())
    inline, refused = RefOutcome.INLINED_AFTER_INVALIDATE, RefOutcome.DEPENDENCY_INVALID
    assert result.references["outcome"].tolist() == [inline, refused, inline, refused, inline]
    assert result.audit["fallbacks"] == 2 and result.fallback_success_rate == 1.0
    assert result.violations == 0


@pytest.mark.parametrize(
    ("cascade", "after_change", "dependency_invalidated"),
    [
        # The server ends the segment's lease with its source's and says so: the host inlines
        # it once, then reinstalls (spec section 14).
        (True, [RefOutcome.INLINED_AFTER_INVALIDATE, RefOutcome.INSTALLED, RefOutcome.HIT], 1),
        # The server keeps the old segment; the host knows its content changed and reinstalls.
        (False, [RefOutcome.INSTALLED, RefOutcome.HIT, RefOutcome.HIT], 0),
    ],
)
def test_a_change_of_the_source_changes_what_was_made_from_it(
    cascade, after_change, dependency_invalidated
):
    result = simulate(_config(cascade), 1, _plan(change_at=1_500.0))
    outcomes = result.references["outcome"].tolist()
    assert outcomes == [RefOutcome.INSTALLED, RefOutcome.HIT, *after_change]
    assert result.invalidations["content_changed"] == 1
    assert result.invalidations["dependency_invalidated"] == dependency_invalidated
    assert result.violations == 0


def test_a_source_a_reference_was_refused_for_is_put_again_at_its_next_use():
    """The frame of 1,490 ms references the segment alone and reaches the server (links of
    20 ms) after its source changed at 1,500, on a server that keeps what was made from an
    old source: dependency_invalid. The host learns from it that its source lease is no
    good; an operation that uses the source itself puts it again at once (the fallback's
    inline bodies were the turn the error brings), and the next hits it."""
    operations = [(10.0, [MADE]), (1_490.0, [MADE]), (2_000.0, [SOURCE]), (2_500.0, [SOURCE])]
    plan = _plan(change_at=1_500.0)
    plan = replace(plan, sessions=[replace(plan.sessions[0], operations=operations)])
    link = LinkConfig(latency_ms=20.0)
    config = replace(_config(cascade=False), uplink=link, downlink=link)
    result = simulate(config, 1, plan)
    refs = result.references
    assert refs["object"].tolist() == [MADE, MADE, SOURCE, SOURCE]
    assert refs["outcome"].tolist() == [
        RefOutcome.INSTALLED,
        RefOutcome.DEPENDENCY_INVALID,
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
    ]
    assert refs["cause"][2] == InstallCause.MISS
    assert result.counters["reinstalls_after_expiry"] == 0  # (after a miss, not an expiry)
    assert result.audit["fallbacks"] == result.audit["fallbacks_completed"] == 1
    assert result.violations == 0


def _racing(cascade: bool) -> ModelConfig:
    """Long links and frequent changes: frames in flight cross their source's change."""
    link = LinkConfig(latency_ms=20.0)
    return ModelConfig(
        duration_ms=60_000.0,
        uplink=link,
        downlink=link,
        server=ServerConfig(cascade_dependencies=cascade),
        workload=WorkloadConfig(
            session_rate_per_s=4.0,
            operation_rate_per_s=5.0,
            shared_objects_per_namespace=2,
            private_dependency_share=1.0,
            content_change_rate_per_s=0.2,
        ),
    )


def _dependency_invalid(result) -> int:
    return int((result.references["outcome"] == RefOutcome.DEPENDENCY_INVALID).sum())


def test_in_flight_references_to_what_changed_with_its_source_are_never_stale_hits():
    cascaded, checked = simulate(_racing(True), 3), simulate(_racing(False), 3)
    assert cascaded.invalidations["dependency_invalidated"] > 0
    assert checked.invalidations["dependency_invalidated"] == 0
    assert _dependency_invalid(checked) > 0  # caught on resolve, then the fallback
    for result in (cascaded, checked):
        assert result.violations == 0 and result.fallback_success_rate == 1.0


@pytest.mark.interpreted
def test_a_server_that_forgets_what_an_object_was_made_from_serves_stale_hits(monkeypatch):
    # It serves references to what changed with its source from the old content: the
    # auditor sees stale hits.
    monkeypatch.setattr(LeaseTable, "set_dependencies", lambda self, obj, deps: None)
    unaware = simulate(_racing(False), 3)
    assert unaware.audit["hit_on_stale_content"] > 0
    assert _dependency_invalid(unaware) == 0


def test_the_plan_marks_the_share_of_private_objects_made_from_the_top_shared_one():
    config = WorkloadConfig(private_dependency_share=0.5, shared_objects_per_namespace=10)
    plan = synthetic_plan(config, 1, 60_000.0, np.random.SeedSequence(5))
    plain = synthetic_plan(
        WorkloadConfig(shared_objects_per_namespace=10), 1, 60_000.0, np.random.SeedSequence(5)
    )
    assert plain.depends_on == {}
    np.testing.assert_array_equal(plan.sizes, plain.sizes)  # nothing else drawn differently
    assert [s.operations for s in plan.sessions] == [s.operations for s in plain.sessions]
    catalog = plan.catalog
    for session in plan.sessions:
        private = sorted(session.expected_reuse)
        made = [obj for obj in private if obj in plan.depends_on]
        assert made == private[1::2]  # two of four, spread
        namespaces = {int(catalog.namespace[plan.depends_on[obj]]) for obj in made}
        ranks = {int(catalog.key_hi[plan.depends_on[obj]]) for obj in made}
        assert len(namespaces) == 1 and ranks == {0}
        used = {obj for _, objects in session.operations for obj in objects if obj not in private}
        assert not used or {int(catalog.namespace[obj]) for obj in used} == namespaces
    assert plan.dependents() == {
        source: sorted(o for o, s in plan.depends_on.items() if s == source)
        for source in set(plan.depends_on.values())
    }


def _stream(plan: WorkloadPlan):
    return plan_stream(plan, _config())[0]


def test_the_vector_engine_invalidates_what_was_made_from_a_changed_object():
    stream = _stream(_plan(change_at=1_500.0))
    assert stream.invalidation_time_ms.tolist() == [1_500, 1_500]
    assert stream.invalidation_object_id.tolist() == [SOURCE, MADE]
    assert _stream(_plan()).invalidation_object_id.tolist() == []


def test_the_vector_engine_makes_a_reference_to_the_source_along_before_each_use():
    stream = _stream(_plan())
    assert stream.object_id.tolist() == [SOURCE, MADE] * 5
    assert stream.along.tolist() == [True, False] * 5
    assert stream.time_ms.tolist() == [t for t in (10, 1_000, 2_000, 3_000, 4_000) for _ in "ab"]
    assert stream.counted == 5
    # Nothing is made along for a segment sent inline: one too small for the policy, or one
    # whose source the server's ceiling does not allow (the DES hosts inline it with its source).
    plan = _plan()
    too_small = ModelConfig(policy=PolicyConfig(name="threshold", min_object_bytes=5_000))
    source_too_big = ModelConfig(
        server=ServerConfig(limits=CacheLimits(max_object_bytes=6_000)),
        policy=PolicyConfig(name="always"),
    )
    few_uses = ModelConfig(policy=PolicyConfig(name="threshold", min_expected_reuse=5.0))
    for config in (too_small, source_too_big, few_uses):  # (the session expects 5 uses)
        stream, cached = plan_stream(plan, config)
        assert stream.along is None and stream.object_id.tolist() == [MADE] * 5
        assert not cached.any()


def test_a_segment_whose_source_goes_inline_goes_inline_too():
    # The budget holds the system prompt and the segment. The segment's second use makes the
    # prompt the least recent, so another object's install evicts it (CACHE_INVALIDATE). The
    # next operation inlines the prompt once (spec section 14); the segment, whose lease still
    # holds, cannot be resolved without it, so it goes inline too rather than draw
    # dependency_invalid and a fallback.
    other = 2
    catalog = ObjectCatalog.from_arrays(
        np.array([1, 1 << 20, 1 << 20]),
        np.array([0, 1, 1], np.uint64),
        np.array([0, 0, 1], np.uint64),
        [CacheObjectKind.PROMPT_SEGMENT] * 3,
    )
    operations = [(10.0, [MADE]), (1_000.0, [MADE]), (2_000.0, [other]), (3_000.0, [SOURCE, MADE])]
    session = SessionPlan(1, 0, 0.0, 5_000.0, 5_000.0, operations, {MADE: 5.0, other: 5.0})
    plan = WorkloadPlan(
        catalog,
        np.array([8_192, 4_096, 8_192]),
        [session],
        np.zeros(0),
        np.zeros(0, np.int64),
        np.ones(3),
        depends_on={MADE: SOURCE},
    )
    config = ModelConfig(
        duration_ms=5_000.0,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=8_192 + 4_096)),
        policy=PolicyConfig(name="always", ttl_hint_ms=60_000),
    )
    result = simulate(config, 1, plan)
    assert result.invalidations["evicted"] == 1
    after = RefOutcome.INLINED_AFTER_INVALIDATE
    assert result.references["outcome"].tolist()[-2:] == [after, after]
    assert result.audit["fallbacks"] == 0 and result.violations == 0


def test_after_a_change_both_go_inline_once_and_the_segment_is_not_installed_in_vain():
    # Without the cascade the host learns of the prompt's change by its CACHE_INVALIDATE and
    # inlines it once; the segment changed with it, and it goes inline with it: installing it
    # then would send its body twice.
    plan = _plan(change_at=1_500.0)
    for session in plan.sessions:
        session.operations = [(at, [SOURCE, MADE]) for at, _ in session.operations]
    result = simulate(_config(cascade=False), 1, plan)
    by_object = {
        obj: result.references["outcome"][result.references["object"] == obj].tolist()
        for obj in (SOURCE, MADE)
    }
    inline, installed, hit = (
        RefOutcome.INLINED_AFTER_INVALIDATE,
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
    )
    assert by_object[SOURCE] == by_object[MADE] == [installed, hit, inline, installed, hit]
    assert result.counters["installs"] == 4
    assert result.violations == 0 and result.audit["fallbacks"] == 0
