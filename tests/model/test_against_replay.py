"""With zero latency and no capacity limit, the SimPy model is the replay: same hits, same misses
by cause, and (through the replay) the closed forms of shared/reference/analytic-models.md."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, ObjectCatalog
from nnrpsim.engine.replay import replay
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.metrics import des_metrics, vector_metrics
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
    stream_plan,
    synthetic_plan,
)
from nnrpsim.protocol import CacheObjectKind
from nnrpsim.vector_run import plan_stream, vector_run
from tests.engine.streams import poisson_stream

from .plans import one_object_each, one_session

A = 0
T = 10_000
MEAN_GAP = 10_000
N_OBJECTS = 100
DURATION = 1_500_000
INSTANT = LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=float("inf"))


def _stream(purge_per_ms: float) -> ReferenceStream:
    stream = poisson_stream(
        np.random.default_rng(99), N_OBJECTS, 1 / MEAN_GAP, DURATION, purge_per_ms
    )
    # Keep invalidations off the milliseconds that carry references: same-millisecond order is
    # a modelling choice the two paths need not share.
    keep = ~np.isin(stream.invalidation_time_ms, stream.time_ms)
    return ReferenceStream(
        stream.time_ms,
        stream.object_id,
        stream.size + 4095,
        stream.invalidation_time_ms[keep],
        stream.invalidation_object_id[keep],
        0,
        DURATION,
    )


def _config(
    mode: str,
    limits: CacheLimits | None = None,
    renew_margin: float = 1.0,
    inline_after_invalidate: bool = False,
) -> ModelConfig:
    """Instant links and no processing; in reset mode the hosts renew a lease on a use within
    its last ``renew_margin`` (1: every use)."""
    return ModelConfig(
        duration_ms=float(DURATION),
        uplink=INSTANT,
        downlink=INSTANT,
        server=ServerConfig(
            limits=limits or CacheLimits(capacity_bytes=None),
            per_operation_ms=0.0,
            per_inline_byte_ms=0.0,
            per_put_byte_ms=0.0,
            sweep_interval_ms=5_000.0,
        ),
        policy=PolicyConfig(
            name="always",
            ttl_hint_ms=T,
            renew_margin=renew_margin if mode == "reset" else 0.0,
            inline_after_invalidate=inline_after_invalidate,
        ),
        sample_interval_ms=60_000.0,
    )


def _model(stream: ReferenceStream, mode: str, limits: CacheLimits | None = None):
    return simulate(_config(mode, limits), 0, stream_plan(stream))


def _same_bytes(des: dict[str, float], vector: dict[str, float]) -> None:
    """The same bytes on both engines, the DES's CACHE_INVALIDATE notices counted alike."""
    for name in ("invalidations", "wire_bytes", "wire_bytes_saved"):
        assert des[name] == vector[name], name


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("purge_per_ms", [0.0, 1 / MEAN_GAP])
def test_model_equals_replay_and_closed_forms(mode, purge_per_ms):
    stream = _stream(purge_per_ms)
    result = _model(stream, mode)
    sweep = replay(stream, [T], mode)
    outcome, cause = result.references["outcome"], result.references["cause"]
    installed = outcome == RefOutcome.INSTALLED
    assert result.violations == 0
    assert int((outcome == RefOutcome.HIT).sum()) == int(sweep.hits[0])
    assert int((installed & (cause == InstallCause.COLD)).sum()) == int(sweep.cold_misses[0])
    assert int((installed & (cause == InstallCause.EXPIRED)).sum()) == int(sweep.expired_misses[0])
    invalidated = installed & (cause == InstallCause.INVALIDATED)
    assert int(invalidated.sum()) == int(sweep.invalidated_misses[0])
    assert result.counters["renewals"] == int(sweep.renewals[0])

    lam, mu = 1 / MEAN_GAP, purge_per_ms
    if mode == "reset":
        expected = lam / (lam + mu) * (1 - math.exp(-(lam + mu) * T))
    else:
        life = T if mu == 0 else (1 - math.exp(-mu * T)) / mu
        expected = lam * life / (1 + lam * life)
    hits = np.bincount(stream.object_id, weights=outcome == RefOutcome.HIT, minlength=N_OBJECTS)
    refs = np.bincount(stream.object_id, minlength=N_OBJECTS)
    ratio = hits.sum() / refs.sum()
    se = math.sqrt(((hits - ratio * refs) ** 2).sum()) / refs.sum()
    assert abs(ratio - expected) <= 4 * se


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("eviction", ["lru", "fifo", "size", "ttl"])
def test_with_a_capacity_the_model_still_equals_the_replay(mode, eviction):
    """Evictions, announced by CACHE_INVALIDATE, and reinstalls on the next reference."""
    stream = _stream(1 / MEAN_GAP)
    capacity = int(stream.size.mean() * 40)  # room for 40 of the 100 objects
    result = _model(stream, mode, CacheLimits(capacity_bytes=capacity, eviction=eviction))
    sweep = replay(stream, [T], mode, capacity_bytes=capacity, policy=eviction)
    assert sweep.evicted_misses[0] > 1000 and result.invalidations["evicted"] > 1000
    assert result.violations == 0
    assert int((result.references["outcome"] == RefOutcome.HIT).sum()) == int(sweep.hits[0])
    assert result.counters["installs"] == int(sweep.installs[0])


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("eviction", ["none", "lru"])
def test_wire_bytes_equal_the_replays(mode, eviction):
    """Byte for byte, the replay's hosts pay what the model's pay: a PUT the server refuses
    (``none``: no room, nothing evicted) sends its body, then the body goes inline; a lease
    its server evicts (``lru``) or sweeps is announced by a CACHE_INVALIDATE on both."""
    stream = _stream(1 / MEAN_GAP)
    capacity = int(stream.size.mean() * 40)
    result = _model(stream, mode, CacheLimits(capacity_bytes=capacity, eviction=eviction))
    sweep = replay(
        stream,
        [T],
        mode,
        capacity_bytes=capacity,
        policy=eviction,
        per_object=True,
        sweep_ms=_config(mode, None).server.sweep_interval_ms,
    )
    object_sizes = np.zeros(stream.n_objects, np.int64)
    object_sizes[stream.object_id] = stream.size
    everything_cached = np.zeros(len(stream.size), dtype=bool)
    frames = len(stream.size)  # (a frame a reference: the stream names no operations)
    vector = vector_metrics(
        sweep, 0, stream.size, object_sizes, everything_cached, True, frames, session_bytes=0
    )
    des = des_metrics(result, 0.0)
    assert des["refused_puts"] == vector["refused_puts"]
    assert (des["refused_puts"] > 1000) == (eviction == "none")
    assert des["invalidations"] == vector["invalidations"] > 100  # (swept, and evicted)
    assert des["wire_bytes_saved"] == vector["wire_bytes_saved"]


@pytest.mark.parametrize(("margin", "inline_once"), [(1.0, False), (0.2, False), (0.2, True)])
@pytest.mark.parametrize("capacity", [None, 40])
def test_the_vector_runs_hosts_act_as_the_models(margin, capacity, inline_once):
    """The hosts renew only on a use within the last ``margin`` of the lease (best_practice's
    0.2), with the body; with ``inline_once`` they send the body of a lease the server ended
    (invalidated or evicted) inline at its next use and put it at the one after. The vector
    run makes the same hits, PUTs and renewals, and sends the same bytes."""
    stream = _stream(1 / MEAN_GAP)
    limits = CacheLimits(
        capacity_bytes=None if capacity is None else int(stream.size.mean() * capacity)
    )
    config = _config("reset", limits, margin, inline_once)
    result = simulate(config, 0, stream_plan(stream))
    des, vector = des_metrics(result, 0.0), vector_run(config, stream_plan(stream)).metrics
    hits = des["hit_rate"] * len(stream)
    assert 100 < des["renewals"] <= hits * (0.2 if margin < 1 else 1)  # not every use renews
    inlined = result.references["outcome"] == RefOutcome.INLINED_AFTER_INVALIDATE
    assert (inlined.sum() > 1000) == inline_once
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("capacity", [None, 40])
@pytest.mark.parametrize("inline_once", [False, True])
@pytest.mark.parametrize("cascade", [True, False])
def test_with_dependencies_the_vector_run_equals_the_model(mode, capacity, inline_once, cascade):
    """Half the objects are made from one of five sources, which no reference names itself
    more often than the rest: the hosts install a source along whenever it lapsed, and a
    content change of a source changes what was made from it. With the server's cascade the
    dependents' leases end with the source's (when it has a live one), announced; without
    it they stay, and their hosts, who see the change, put new versions. With
    ``inline_once`` a host told of an ending inlines the next use, and installs no source
    for it. The vector run's hosts make the same PUTs and send the same bytes, less
    CACHE_INVALIDATE."""
    stream = _stream(1 / MEAN_GAP)
    plan = replace(stream_plan(stream), depends_on={obj: obj % 5 for obj in range(50, N_OBJECTS)})
    limits = CacheLimits(
        capacity_bytes=None if capacity is None else int(stream.size.mean() * capacity)
    )
    config = _config(mode, limits, 0.2, inline_once)
    config = replace(config, server=replace(config.server, cascade_dependencies=cascade))
    result = simulate(config, 0, plan)
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    assert result.violations == 0 and result.audit["fallbacks"] == 0
    inlined = result.references["outcome"] == RefOutcome.INLINED_AFTER_INVALIDATE
    assert (inlined.sum() > 1000) == inline_once
    along = int(plan_stream(plan, config)[0].along.sum())
    assert along > 1000  # sources made along: in place, or installed when they lapsed
    assert (result.invalidations["dependency_invalidated"] > 100) == cascade
    if capacity and not inline_once:  # (inlining once, the hosts install less)
        assert result.invalidations["evicted"] > 100
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("dependencies", [False, True])
def test_a_host_backing_off_after_refusals_acts_alike_on_both_engines(mode, dependencies):
    """A server that evicts nothing (``none``) refuses PUTs for room; the hosts send a refused
    object inline, without a PUT, for 20 s after the refusal, and with it what is made from a
    refused source. The vector run makes the same PUTs, refusals and hits, and sends the same
    bytes but for the CACHE_INVALIDATE frames. With dependencies too: a host puts a source
    just before what is made from it, puts no source for an object it backs off from, and
    when the source's PUT is refused it has put what is made from it in the same burst all
    the same (its body inline: no source)."""
    stream = _stream(1 / MEAN_GAP)
    plan = stream_plan(stream)
    if dependencies:
        plan = replace(plan, depends_on={obj: obj % 5 for obj in range(50, N_OBJECTS)})
    limits = CacheLimits(capacity_bytes=int(stream.size.mean() * 40), eviction="none")
    config = _config(mode, limits, 0.2)
    config = replace(config, policy=replace(config.policy, refused_backoff_ms=20_000.0))
    result = simulate(config, 0, plan)
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    backing_off = result.references["outcome"] == RefOutcome.INSTALL_REJECTED
    assert backing_off.sum() > 2 * des["refused_puts"] > 400  # most uses put nothing
    plain = replace(config, policy=replace(config.policy, refused_backoff_ms=0.0))
    assert vector_run(plain, plan)[0]["refused_puts"] > 2 * vector["refused_puts"]
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


def test_an_object_backing_off_itself_is_charged_its_own_lapse_not_its_sources():
    """An object made from a source, whose own lease ran out and whose own PUT was refused
    (so the host backs off from it), in a frame whose source goes inline for a content change:
    the DES host decides the object by its own lease first, so the miss is an expired lease.
    The vector run once charged it the source's invalidation (a cache miss); a random draw of
    the engines against each other found it (in seed 376's plan; since a private object's
    changes come only while its session runs, seed 0's has the case)."""
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=1 << 20, eviction="none"), 0.5),
        duration_ms=120_000.0,
        policy=PolicyConfig(
            name="always",
            ttl_fraction=0.1,
            renew_margin=0.5,
            inline_after_invalidate=False,
            refused_backoff_ms=2_000.0,
        ),
        workload=WorkloadConfig(
            namespaces=2,
            shared_objects_per_namespace=5,
            shared_refs_per_operation=1,
            private_refs_per_operation=2,
            private_objects_per_session=2,
            object_size_sigma=0.0,
            session_duration_cv=0.0,
            content_change_rate_per_s=0.01,
            private_dependency_share=1.0,
        ),
    )
    config = replace(config, server=replace(config.server, cascade_dependencies=False))
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(0))
    result = simulate(config, 0, plan)
    refs = result.references
    # the case is there: in one operation, a source sent inline for a content change and
    # something made from it sent inline for its own expired lease, backing off
    operation = list(zip(refs["time_ms"].tolist(), refs["session"].tolist(), strict=True))
    body_sent = np.isin(
        refs["outcome"], [RefOutcome.INLINED_AFTER_INVALIDATE, RefOutcome.INSTALL_REJECTED]
    )
    changed = {
        (operation[i], obj)
        for i, obj in enumerate(refs["object"].tolist())
        if body_sent[i] and refs["cause"][i] == InstallCause.INVALIDATED
    }
    assert any(
        (operation[i], plan.depends_on.get(obj)) in changed
        for i, obj in enumerate(refs["object"].tolist())
        if refs["outcome"][i] == RefOutcome.INSTALL_REJECTED
        and refs["cause"][i] == InstallCause.EXPIRED
    )
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    for name in ("hit_rate", "installs", "miss_rate_cache_miss", "miss_rate_lease_expired"):
        assert des[name] == vector[name]


def test_a_session_closes_after_its_last_use_within_one_millisecond():
    """The session's last use of A at 999.3 ms hits on the DES, whose close at 999.6 ends A's
    lease after it; so it does on the vector engine, which counts in whole milliseconds."""
    plan = one_session([(0.0, [A]), (999.3, [A])], [4096], [10.0], 999.6)
    config = replace(_config("reset", CacheLimits(), 0.2, True), duration_ms=2_000.0)
    config = replace(config, policy=replace(config.policy, ttl_hint_ms=10_000))
    des, vector = des_metrics(simulate(config, 0, plan), 0.0), vector_run(config, plan).metrics
    assert des["hit_rate"] == vector["hit_rate"] == 0.5


def test_operations_due_at_one_instant_race_on_the_des_and_queue_on_the_vector_engine():
    """Three requests at the same instant, each putting an object, on a server that holds two,
    over links that take no time but the bytes' (the README's recipe, a petabyte a second): on
    the DES they are in flight together (up to ``max_in_flight``), so the third PUT evicts the
    first lease before its frame arrives (a cache error, then the body inline); the vector
    engine takes them one after another. With one operation in flight the two agree again."""
    plan = one_object_each([0.0, 0.0, 0.0], 4096, 1_000.0)
    fast = LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=1e12)
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=None, max_cache_entries=2)),
        duration_ms=2_000.0,
        uplink=fast,
        downlink=fast,
    )
    vector = vector_run(config, plan).metrics
    racing = des_metrics(simulate(config, 0, plan), 0.0)
    assert config.workload.max_in_flight_operations > 1
    assert racing["fallback_rate"] == 1 / 3 and vector["fallback_rate"] == 0
    assert racing["wire_bytes_saved"] < vector["wire_bytes_saved"] - 4096  # a body sent twice
    one_at_a_time = replace(config, workload=replace(config.workload, max_in_flight_operations=1))
    queued = des_metrics(simulate(one_at_a_time, 0, plan), 0.0)
    for name in ("hit_rate", "installs", "fallback_rate", "miss_rate_cache_miss"):
        assert queued[name] == vector[name]


@pytest.mark.parametrize(
    ("capacity", "share", "changes", "cascade"),
    [(None, 0.5, 0.01, True), (8 << 20, 0.5, 0.01, True), (None, 1.0, 0.03, False)],
)
def test_several_objects_made_from_one_source_in_a_frame_act_alike(
    capacity, share, changes, cascade
):
    """Sessions of four references an operation, private objects made from their namespace's
    most popular shared object, content changes, inlining once. A frame often holds two
    objects made from one source, one of them inline after the cascade ended its lease: the
    DES host installs the source for the other, and so does the vector run, which makes the
    source along before each. A frame that uses the source itself while its body goes inline
    sends what is made from it inline too (``frame_source``)."""
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=capacity), 0.2, True),
        duration_ms=300_000.0,
        policy=PolicyConfig(),
        workload=WorkloadConfig(
            session_rate_per_s=1.0,
            operation_rate_per_s=0.5,
            private_dependency_share=share,
            content_change_rate_per_s=changes,
        ),
    )
    config = replace(config, server=replace(config.server, cascade_dependencies=cascade))
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(4))
    result = simulate(config, 0, plan)
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    assert (result.invalidations["dependency_invalidated"] > 100) == cascade
    for name in ("hit_rate", "installs", "renewals", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


@pytest.mark.parametrize(
    ("policy", "workload", "renewal", "cascade", "seed"),
    [
        pytest.param(  # a hit 0.3 ms after its renewal window opens, in the same millisecond
            PolicyConfig(name="connection_scope", ttl_fraction=0.1, connection_ttl_ms=5_000),
            WorkloadConfig(operation_rate_per_s=0.2, private_refs_per_operation=3),
            "extend",
            True,
            5021,
            id="renewal-window",
        ),
        pytest.param(  # a change 0.3 ms after a use of the object in the same millisecond
            PolicyConfig(name="connection_scope", ttl_fraction=0.1, connection_ttl_ms=5_000),
            WorkloadConfig(
                shared_refs_per_operation=1,
                private_refs_per_operation=3,
                content_change_rate_per_s=0.05,
                private_dependency_share=1.0,
            ),
            "touch",
            True,
            5054,
            id="change-within-a-millisecond",
        ),
        pytest.param(  # a stale lease sent inline with its source, then changed itself
            PolicyConfig(name="always", ttl_fraction=1.0, renew_margin=0.0),
            WorkloadConfig(
                operation_rate_per_s=0.2,
                shared_refs_per_operation=1,
                private_refs_per_operation=1,
                content_change_rate_per_s=0.01,
                private_dependency_share=1.0,
            ),
            "extend",
            False,
            5033,
            id="stale-lease-sent-inline",
        ),
    ],
)
def test_the_engines_agree_where_they_once_parted(policy, workload, renewal, cascade, seed):
    """Three plans, over instant links with no budget, on which the engines once parted by a
    reference or a PUT. The DES's renewal windows open, and its content changes fall, on
    whole milliseconds, as the vector engine counts time; and on the lease-table path a stale
    lease whose body goes inline with its source stays until its own change, announced."""
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=None, renewal=renewal), 0.2, True),
        duration_ms=120_000.0,
        policy=replace(policy, inline_after_invalidate=True),
        workload=workload,
    )
    config = replace(config, server=replace(config.server, cascade_dependencies=cascade))
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(seed))
    des, vector = des_metrics(simulate(config, 0, plan), 0.0), vector_run(config, plan).metrics
    for name in ("hit_rate", "installs", "renewals", "miss_rate_cache_miss"):
        assert des[name] == vector[name]


@pytest.mark.parametrize("capacity", [None, 60])
def test_an_entry_limit_binds_alike_on_both_engines(capacity):
    """A server that holds at most 20 leases (and, or not, a byte budget): the vector run
    evicts for the entry limit as the DES's server does, PUT for PUT."""
    stream = _stream(1 / MEAN_GAP)
    limits = CacheLimits(
        capacity_bytes=None if capacity is None else int(stream.size.mean() * capacity),
        max_cache_entries=20,
    )
    config = _config("reset", limits, 0.2, True)
    result = simulate(config, 0, stream_plan(stream))
    des, vector = des_metrics(result, 0.0), vector_run(config, stream_plan(stream)).metrics
    assert result.invalidations["evicted"] > 1000
    unlimited = vector_run(
        _config("reset", replace(limits, max_cache_entries=0), 0.2, True), stream_plan(stream)
    ).metrics
    assert unlimited["hit_rate"] > vector["hit_rate"] + 0.05
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


@pytest.mark.parametrize("routing", ["round_robin", "hash", "least_sessions"])
def test_each_server_replays_the_sessions_routed_to_it(routing):
    """Three servers, each with its own memory: the vector run routes the sessions as the DES
    does and replays each server's alone, so a shared object is put once per server. Hits,
    PUTs, renewals and bytes add up to the DES's. (Two sessions here reference one object
    within one millisecond under ``hash``: the stream keeps their order.)"""
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=None), 0.2, True),
        duration_ms=300_000.0,
        servers=3,
        routing=routing,
        policy=PolicyConfig(),
        workload=WorkloadConfig(
            session_rate_per_s=1.0, operation_rate_per_s=0.5, content_change_rate_per_s=0.005
        ),
    )
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(4))
    result = simulate(config, 0, plan)
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    one_server = vector_run(replace(config, servers=1), plan).metrics
    assert vector["installs"] > 1.1 * one_server["installs"]  # shared objects, once a server
    for name in ("hit_rate", "installs", "renewals", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


def test_the_vector_run_caches_what_the_model_hosts_cache():
    """best_practice caches an object only if its session expects to reuse it more than
    twice: both engines take the same decision per session and object (short sessions and
    rare shared objects go inline), so the same references are inlined by policy."""
    config = replace(
        _config("reset", renew_margin=0.2),
        duration_ms=300_000.0,
        policy=PolicyConfig(),
        workload=WorkloadConfig(session_rate_per_s=0.5, operation_rate_per_s=0.1),
    )
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(4))
    des = des_metrics(simulate(config, 0, plan), 0.0)
    vector = vector_run(config, plan).metrics
    assert 0.05 < des["inline_rate_policy"] < 0.95
    assert vector["inline_rate_policy"] == des["inline_rate_policy"]


def test_the_vector_run_holds_about_what_the_model_holds():
    """A session's close ends the leases it owns on both engines: the vector run's mean live
    bytes come within 8 % of the model's (sampled every 0.5 s; the rest is mostly the one TTL
    the vector run gives every session). Leases left to run out would hold about 24 % more."""
    config = replace(
        _config("reset", renew_margin=0.2),
        duration_ms=600_000.0,
        sample_interval_ms=500.0,
        policy=PolicyConfig(),
        workload=WorkloadConfig(session_rate_per_s=0.5, operation_rate_per_s=0.5),
    )
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(4))
    result = simulate(config, 0, plan)
    vector = vector_run(config, plan).metrics
    assert vector["mean_gpu_bytes"] == pytest.approx(result.memory["live_bytes"].mean(), rel=0.08)
    assert vector["hit_rate"] == pytest.approx(des_metrics(result, 0.0)["hit_rate"], abs=0.01)


@pytest.mark.parametrize("capacity", [None, 40])
def test_after_a_warm_up_the_vector_run_counts_what_the_model_counts(capacity):
    """Both engines count only what happens after the warm-up: the vector run takes away what
    it counted by the warm-up's end (``replay_after``)."""
    stream = _stream(1 / MEAN_GAP)
    warmup = 400_000
    while warmup in stream.time_ms:  # (which side of the cut a reference then falls on is
        warmup += 1  # a matter of event order)
    limits = CacheLimits(
        capacity_bytes=None if capacity is None else int(stream.size.mean() * capacity)
    )
    config = replace(_config("reset", limits, 0.2, True), warmup_ms=float(warmup))
    result = simulate(config, 0, stream_plan(stream))
    des, vector = (
        des_metrics(result, config.warmup_ms),
        vector_run(config, stream_plan(stream)).metrics,
    )
    whole = vector_run(replace(config, warmup_ms=0.0), stream_plan(stream)).metrics
    assert vector["hit_rate"] != whole["hit_rate"] and vector["installs"] < whole["installs"]
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name]
    _same_bytes(des, vector)


def test_a_fresh_install_counts_its_frames_reference_as_the_size_policy_weighs_it():
    """The frame that installs an object references it, and the server counts that resolution
    as a hit of the lease: so ``size`` eviction (largest bytes per hit first) weighs A, with
    two resolutions, at 100 / 3 and B, with one, at 60 / 2, and C's PUT evicts A, not B. B's
    reference at 4 ms hits on both engines."""
    A_, B_, C_ = 0, 1, 2
    plan = one_session(
        [(0.0, [A_]), (1.0, [B_]), (2.0, [A_]), (3.0, [C_]), (4.0, [B_])],
        [100, 60, 100],
        [10.0] * 3,
        100.0,
    )
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=250, eviction="size")), duration_ms=100.0
    )
    result = simulate(config, 0, plan)
    assert result.references["outcome"].tolist()[-1] == RefOutcome.HIT
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    assert des["hit_rate"] == vector["hit_rate"] == 2 / 5


@pytest.mark.parametrize("eviction", ["lru", "fifo", "ttl", "size"])
def test_under_memory_pressure_the_engines_agree_frame_by_frame(eviction):
    """2 MiB for a working set several times larger, over instant links: most PUTs evict, some
    of them what their own frame was to reference (the DES host decides a frame's references
    before it sends its PUTs, and the server touches them only when the frame arrives). The
    vector run takes each frame so too, and makes the same hits, PUTs and renewals."""
    config = replace(
        _config("reset", CacheLimits(capacity_bytes=2 << 20, eviction=eviction), 0.2, True),
        duration_ms=120_000.0,
        policy=PolicyConfig(),
        workload=WorkloadConfig(session_rate_per_s=1.0, operation_rate_per_s=0.5),
    )
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(4))
    result = simulate(config, 0, plan)
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    assert result.invalidations["evicted"] > 500
    names = ("hit_rate", "installs", "renewals", "miss_rate_cache_miss", "refused_puts")
    for name in (*names, "evictions"):
        assert des[name] == vector[name], name
    assert des["evictions"] >= result.invalidations["evicted"]  # (one host: a notice a lease)


def test_a_session_that_ends_within_the_millisecond_of_anothers_frame_frees_its_bytes_first():
    """Session 1 ends at 9,000.4 ms, which ends the lease of object 0, its own; session 2's
    frame at 9,000.6 ms puts object 2 into 250 bytes. The DES frees 0's 100 bytes first, so
    2 fits and 1 stays for its reference at 11,000. The vector run places the close among the
    references of its millisecond as the DES runs them (after the millisecond's, 1 would be
    evicted instead)."""
    ids = np.arange(3, dtype=np.uint64)
    kinds = np.full(3, CacheObjectKind.PROMPT_SEGMENT)
    sessions = [
        SessionPlan(1, 0, 0.0, 9_000.4, 9_000.4, [(1_000.0, [0]), (5_000.0, [0])], {0: 2.0}),
        SessionPlan(
            2,
            0,
            0.0,
            20_000.0,
            20_000.0,
            [(2_000.0, [1]), (9_000.6, [2]), (11_000.0, [1])],
            {1: 2.0, 2: 1.0},
        ),
    ]
    plan = WorkloadPlan(
        ObjectCatalog.from_arrays(np.ones(3), ids, ids, kinds),
        np.array([100, 100, 100]),
        sessions,
        np.zeros(0),
        np.zeros(0, np.int64),
        np.zeros(3),
    )
    config = replace(_config("reset", CacheLimits(capacity_bytes=250)), duration_ms=30_000.0)
    result = simulate(config, 0, plan)
    assert result.invalidations["evicted"] == 0
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    assert des["hit_rate"] == vector["hit_rate"] == 2 / 5
    assert des["installs"] == vector["installs"] == 3


def test_a_warm_up_ends_at_a_whole_millisecond_on_both_engines():
    """A warm-up of 400,000.3 ms is counted from 400,001 (the protocol's clock), on both
    engines: the references at 400,000 are the warm-up's, and the vector run's replay cut
    falls where its count starts."""
    stream = _stream(1 / MEAN_GAP)
    at = int(stream.time_ms[np.searchsorted(stream.time_ms, 400_000)])  # a reference's ms
    limits = CacheLimits(capacity_bytes=int(stream.size.mean() * 40))
    config = replace(_config("reset", limits, 0.2, True), warmup_ms=at + 0.3)
    assert config.warmup_ms == at + 1
    result = simulate(config, 0, stream_plan(stream))
    des, vector = (
        des_metrics(result, config.warmup_ms),
        vector_run(config, stream_plan(stream)).metrics,
    )
    for name in ("hit_rate", "installs", "renewals", "refused_puts", "miss_rate_cache_miss"):
        assert des[name] == vector[name], name
    with pytest.raises(ValueError, match="whole millisecond before duration_ms"):
        replace(config, duration_ms=1_000.5, warmup_ms=1_000.2)


@pytest.mark.parametrize(
    ("mode", "last"), [("non_reset", RefOutcome.INSTALLED), ("reset", RefOutcome.HIT)]
)
def test_a_frames_hits_then_installs_then_renewals_touch_their_leases(mode, last):
    """A (0) is put at 0; the frame at 1 puts B (1) and references A, filling 200 bytes of an
    LRU cache; C's PUT at 2 evicts the least recent. The server resolves the frame's hits,
    then its installs, then renews: unrenewed, A is the least recent and is put again at 3;
    renewed (``reset``: every use), A hits there. The vector run takes each frame so too."""
    stream = ReferenceStream(
        [0, 1, 1, 2, 3], [0, 1, 0, 2, 0], [100] * 5, end_ms=10, operation=[0, 1, 1, 2, 3]
    )
    limits = CacheLimits(capacity_bytes=200, eviction="lru")
    config = replace(_config(mode, limits), duration_ms=10.0)
    result = simulate(config, 0, stream_plan(stream))
    installed, hit = RefOutcome.INSTALLED, RefOutcome.HIT
    assert result.references["outcome"].tolist() == [installed, installed, hit, installed, last]
    assert (
        des_metrics(result, 0.0)["hit_rate"]
        == vector_run(config, stream_plan(stream)).metrics["hit_rate"]
    )
