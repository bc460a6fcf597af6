"""The object lifecycle of shared/spec/nnrp-cache.md section 12, step by step:
install and ACK, referenced submits, proactive renewal, eviction with CACHE_INVALIDATE, inline
fallback on the next submit (and a reinstall after it)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, ObjectCatalog
from nnrpsim.metrics import des_metrics
from nnrpsim.model import (
    InstallCause,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    SessionPlan,
    Simulation,
    WorkloadPlan,
)
from nnrpsim.model.host import Host
from nnrpsim.protocol import (
    CacheObjectKind,
    MessageType,
    frame_submit_bytes,
    inline_object_bytes,
    packet_bytes,
)

from .plans import one_session
from .test_against_replay import INSTANT

A, B, C = 0, 1, 2
SIZE = 4096


def _plan() -> WorkloadPlan:
    ids = np.arange(3, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(3), ids, ids, np.full(3, CacheObjectKind.PROMPT_SEGMENT)
    )
    times_objects = [(0, A), (100, A), (200, A), (850, A), (900, B), (950, C), (1000, A), (1100, A)]
    session = SessionPlan(
        1,
        0,
        0.0,
        1_200.0,
        1_200.0,
        [(float(t), [obj]) for t, obj in times_objects],
        {A: 10.0, B: 10.0, C: 10.0},
    )
    return WorkloadPlan(
        catalog, np.full(3, SIZE), [session], np.zeros(0), np.zeros(0, np.int64), np.zeros(3)
    )


LIFECYCLE_LINK = LinkConfig(latency_ms=1.0, bandwidth_bytes_per_ms=1e6)


def _lifecycle_config() -> ModelConfig:
    """Room for two of the three objects, 1 s leases renewed in their last fifth."""
    return ModelConfig(
        duration_ms=1_200.0,
        uplink=LIFECYCLE_LINK,
        downlink=LIFECYCLE_LINK,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=2 * SIZE, eviction="lru")),
        policy=PolicyConfig(
            name="threshold",
            min_object_bytes=0,
            min_expected_reuse=0,
            ttl_hint_ms=1_000,
            renew_margin=0.2,
        ),
        sample_interval_ms=100.0,
    )


def test_section_12_lifecycle():
    link, config = LIFECYCLE_LINK, _lifecycle_config()
    sim = Simulation(config, 1, _plan())
    result = sim.run()
    refs = result.references
    a = refs["object"] == A
    assert refs["outcome"][a].tolist() == [
        RefOutcome.INSTALLED,  # 1-2. CACHE_PUT -> CACHE_ACK(accepted), then referenced
        RefOutcome.HIT,  # 3. hot-path reuse by a 24-byte reference
        RefOutcome.HIT,
        RefOutcome.HIT,  # 4. near expiry: referenced and renewed in the same burst
        RefOutcome.INLINED_AFTER_INVALIDATE,  # 5-6. evicted, told, inlined on the next submit
        RefOutcome.INSTALLED,  # and installed again after that
    ]
    assert refs["cause"][a].tolist()[-2:] == [InstallCause.EVICTED, InstallCause.EVICTED]
    assert result.counters["renewals"] == 1
    assert result.invalidations["evicted"] == 2  # A for C, then B for A again
    assert result.accepted_ttl_ms.tolist() == [1_000] * 5  # A, renewal of A, B, C, A again
    assert result.wire["inline"] == inline_object_bytes(SIZE)
    assert result.wire["reference"] == 24 * 7  # every submit but the inline one references
    assert result.violations == 0 and result.fallback_success_rate == 1.0
    # Server time: per frame, per inline byte, and per body byte staged by the four installs
    # and the renewal.
    server = config.server
    assert result.server_busy_ms == [
        pytest.approx(
            8 * server.per_operation_ms
            + server.per_inline_byte_ms * inline_object_bytes(SIZE)
            + server.per_put_byte_ms * 5 * SIZE
        )
    ]

    # Latency runs from the submit to the reply's arrival: one round trip for a hit, and the
    # CACHE_PUT/CACHE_ACK round trip before it for an install, the server staging the body
    # (idle links: no queueing).
    per_ms = link.bandwidth_bytes_per_ms
    put, ack = packet_bytes(MessageType.CACHE_PUT, SIZE), packet_bytes(MessageType.CACHE_ACK)
    hit = (
        2 * link.latency_ms
        + (frame_submit_bytes((), 1) + packet_bytes(MessageType.RESULT_PUSH)) / per_ms
        + config.server.per_operation_ms
    )
    latency = result.operations["latency_ms"]
    assert latency[1] == pytest.approx(hit)  # the hit at 100 ms
    put_processing = config.server.per_put_byte_ms * SIZE
    assert latency[0] == pytest.approx(
        hit + 2 * link.latency_ms + (put + ack) / per_ms + put_processing
    )


@pytest.mark.interpreted
def test_the_auditor_counts_a_reference_the_host_knew_was_invalid(monkeypatch):
    """A careless host references A at 1 s though it was told A was evicted (its inline turn
    made a reference, and no last look before the frame leaves): one violation, and the
    server's miss brings the fallback."""
    decide = Host._decide

    def careless(self, *args):
        decided = decide(self, *args)
        references, _, _, inline, outcome, _, _ = decided
        for obj in [o for o in inline if outcome[o] == RefOutcome.INLINED_AFTER_INVALIDATE]:
            inline.remove(obj)
            references.append(obj)
            del outcome[obj]
        return decided

    def no_last_look(self, server, references, renewals, inline, *rest):
        return self._frame_bytes(references, inline, renewals)

    monkeypatch.setattr(Host, "_decide", careless)
    monkeypatch.setattr(Host, "_drop_late_references", no_last_look)
    result = Simulation(_lifecycle_config(), 1, _plan()).run()
    refs = result.references
    assert refs["outcome"][refs["object"] == A].tolist()[-2:] == [
        RefOutcome.CACHE_MISS,
        RefOutcome.INSTALLED,
    ]
    assert result.audit["reference_after_invalidate"] == 1 and result.violations == 1
    assert result.fallback_success_rate == 1.0


def _caching_all(link: LinkConfig, ttl_hint_ms: int, duration_ms: float) -> ModelConfig:
    """Hosts that cache every object for ``ttl_hint_ms`` and never renew, over ``link``."""
    policy = PolicyConfig(name="always", ttl_hint_ms=ttl_hint_ms, renew_margin=0.0)
    return ModelConfig(duration_ms=duration_ms, uplink=link, downlink=link, policy=policy)


def test_a_notice_for_a_lease_the_host_knows_has_run_out_changes_nothing():
    """After the handshake (two round trips over 5 ms links) A's PUT reaches the server at
    25 ms: its 100 ms lease runs to 125 there, and to 120 by the host's reckoning (it allows
    for the latency of a reference). A's content changes at 122: the server announces it,
    and the notice arrives at 127, when the host already counts the lease gone. So at its
    next use the host puts A again at once, as any expired lease, instead of sending it
    inline first."""
    ids = np.arange(1, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(1), ids, ids, np.full(1, CacheObjectKind.PROMPT_SEGMENT)
    )
    session = SessionPlan(1, 0, 0.0, 400.0, 400.0, [(0.0, [A]), (200.0, [A])], {A: 10.0})
    plan = WorkloadPlan(
        catalog, np.full(1, SIZE), [session], np.array([122.0]), np.array([A]), np.zeros(1)
    )
    config = _caching_all(
        LinkConfig(latency_ms=5.0, bandwidth_bytes_per_ms=float("inf")), 100, 400.0
    )
    result = Simulation(config, 0, plan).run()
    assert result.invalidations["content_changed"] == 1
    assert result.references["outcome"].tolist() == [RefOutcome.INSTALLED] * 2
    assert result.references["cause"].tolist() == [InstallCause.COLD, InstallCause.EXPIRED]


def test_a_content_change_and_the_sweep_in_one_millisecond_tell_the_host_alike():
    """A's 1,500 ms lease runs out at 1,500 ms, and at 2,000 both the sweep (every second) and
    a change of A's content come. SimPy runs first the one that asked first: the change, when
    its process has waited since the start; the sweep, when a change of B at 1,700 ms made the
    change's process ask again after the sweep's tick of 1,000. The sweep announces A's run-out
    lease; the change, when it came first, freed it without a word."""
    config = _caching_all(INSTANT, 1_500, 3_000.0)
    plan = one_session([(0.0, [A])], [SIZE, SIZE], [10.0, 10.0], 3_000.0)
    change_first, sweep_first = (
        Simulation(config, 0, _changed(plan, changes)).run()
        for changes in ([(2_000.0, A)], [(1_700.0, B), (2_000.0, A)])
    )
    assert sweep_first.invalidations["expired"] == 1
    assert change_first.invalidations == sweep_first.invalidations
    assert change_first.wire == sweep_first.wire


def _changed(plan: WorkloadPlan, changes: list[tuple[float, int]]) -> WorkloadPlan:
    """``plan`` with the content ``changes`` (time, object), in time order."""
    return replace(
        plan,
        change_times_ms=np.array([t for t, _ in changes]),
        change_objects=np.array([o for _, o in changes], dtype=np.int64),
    )


# Each pair of change lists below differs by a change of B, which no host leases, a while
# before A's: it makes the changes' process ask SimPy for A's millisecond after whatever else
# falls on it had asked (SimPy runs an instant's events in the order they were asked for).


def test_a_content_change_comes_before_a_reference_in_its_millisecond():
    """A is put at 0 and, after its change at 50 ms, again at 60; at 100 ms both its second
    change and a reference to it are due. The change comes first, as on the vector engine:
    the host puts A's new version. (Had the reference come first, the host would have named
    the old version, which the change then ended under it: a cache miss and a fallback.)"""
    policy = PolicyConfig(name="always", ttl_hint_ms=10_000, inline_after_invalidate=False)
    config = ModelConfig(duration_ms=300.0, uplink=INSTANT, downlink=INSTANT, policy=policy)
    plan = one_session([(0.0, [A]), (60.0, [A]), (100.0, [A])], [SIZE, SIZE], [10.0] * 2, 300.0)
    for changes in ([(50.0, A), (100.0, A)], [(50.0, A), (70.0, B), (100.0, A)]):
        result = Simulation(config, 0, _changed(plan, changes)).run()
        assert result.references["outcome"].tolist() == [RefOutcome.INSTALLED] * 3, changes
        assert result.audit["fallbacks"] == 0, changes


def test_a_memory_sample_on_a_content_changes_millisecond_reads_it_after_the_change():
    """A's lease, put at 0 for 10 s, ends with its change at 1,000 ms, the instant of a
    memory sample (every 500 ms): the sample finds it gone, whichever SimPy had queued first."""
    config = replace(_caching_all(INSTANT, 10_000, 3_000.0), sample_interval_ms=500.0)
    plan = one_session([(0.0, [A])], [SIZE, SIZE], [10.0] * 2, 3_000.0)
    for changes in ([(1_000.0, A)], [(700.0, B), (1_000.0, A)]):
        memory = Simulation(config, 0, _changed(plan, changes)).run().memory
        live = dict(zip(memory["time_ms"].tolist(), memory["live_bytes"].tolist(), strict=True))
        assert (live[500], live[1_000]) == (SIZE, 0), changes


def test_a_content_change_at_the_warm_ups_very_instant_is_measured():
    """A's change at the warm-up's instant (1,000 ms) ends its live lease: the notice counts
    after the warm-up, as an operation at that instant does."""
    config = replace(_caching_all(INSTANT, 10_000, 3_000.0), warmup_ms=1_000.0)
    plan = one_session([(0.0, [A])], [SIZE, SIZE], [10.0] * 2, 3_000.0)
    for changes in ([(1_000.0, A)], [(500.0, B), (1_000.0, A)]):
        result = Simulation(config, 0, _changed(plan, changes)).run()
        assert des_metrics(result, config.warmup_ms)["invalidations"] == 1, changes


def test_an_operation_at_the_warm_ups_very_instant_is_measured():
    """The counts after the warm-up take what begins at its instant, as the vector engine's
    do: the latencies too."""
    config = replace(_caching_all(INSTANT, 10_000, 3_000.0), warmup_ms=1_000.0)
    plan = one_session([(0.0, [A]), (1_000.0, [A])], [SIZE], [10.0], 3_000.0)
    result = Simulation(config, 0, plan).run()
    assert result.operations["start_ms"].tolist() == [0.0, 1_000.0]
    metrics = des_metrics(result, config.warmup_ms)
    assert metrics["p50_latency_ms"] == result.operations["latency_ms"][1] > 0


def _a_frame_that_evicts_its_own(operations: list[tuple[float, list[int]]]):
    """A (6000 bytes) and B (3000) with room for 8000, over instant links; the server evicts
    the largest bytes per hit first (``size``): in a frame that puts both, B's PUT evicts A."""
    plan = one_session(operations, [6_000, 3_000], [10.0, 10.0], 100.0)
    link = LinkConfig(latency_ms=0.0)
    config = ModelConfig(
        duration_ms=100.0,
        uplink=link,
        downlink=link,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=8_000, eviction="size")),
        policy=PolicyConfig(name="always", ttl_hint_ms=1_000, renew_margin=0.0),
    )
    return Simulation(config, 0, plan).run()


def test_a_lease_evicted_by_a_later_put_of_its_own_burst_is_announced():
    """One frame references A (6000 bytes) and B (3000) with room for 8000; the server
    evicts the largest bytes per hit first (``size``). A's PUT is granted, then B's evicts
    it: the server announces A's eviction, so the host sends A inline in that frame rather
    than a reference the server would answer with cache_miss (and a fallback)."""
    result = _a_frame_that_evicts_its_own([(0.0, [A, B])])
    assert result.references["outcome"].tolist() == [
        RefOutcome.INLINED_AFTER_INVALIDATE,
        RefOutcome.INSTALLED,
    ]
    assert result.invalidations["evicted"] == 1 and result.counters["installs"] == 2
    assert result.audit["fallbacks"] == 0 and result.violations == 0


def test_the_inline_body_of_a_reference_told_invalid_in_flight_is_its_one_inline_turn():
    """As above, B's PUT evicts A within the frame that references both, and the host sends A
    inline in that frame: that was the submit after the notice (spec section 14), so at A's
    next use, at 50 ms, the host puts it again rather than send its body inline a second time."""
    result = _a_frame_that_evicts_its_own([(0.0, [A, B]), (50.0, [A])])
    assert result.references["outcome"].tolist() == [
        RefOutcome.INLINED_AFTER_INVALIDATE,
        RefOutcome.INSTALLED,
        RefOutcome.INSTALLED,
    ]
    assert result.references["cause"].tolist()[2] == InstallCause.EVICTED
    assert result.audit["fallbacks"] == 0 and result.violations == 0


def test_a_notice_about_an_earlier_lease_leaves_the_one_just_granted_alone():
    """A and C (the connection's) ran out at 100 ms. At 200 one frame puts B (the session's)
    and A again, in two runs of PUTs, B's first: making room for B the server reclaims A's
    and C's old leases and announces their expiry, before it grants A anew. The downlink
    delivers the notices before A's CACHE_ACK, so the host keeps the new lease: it references
    A in that frame, and A hits at 250 (a notice taken for the new lease sent A inline)."""
    ids = np.arange(3, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(3), ids, ids, np.full(3, CacheObjectKind.PROMPT_SEGMENT)
    )
    operations = [(0.0, [A, C]), (200.0, [B, A]), (250.0, [A])]
    session = SessionPlan(1, 0, 0.0, 400.0, 400.0, operations, {B: 10.0})  # B: its own
    plan = WorkloadPlan(
        catalog, np.full(3, SIZE), [session], np.zeros(0), np.zeros(0, np.int64), np.zeros(3)
    )
    link = LinkConfig(latency_ms=0.0)
    config = ModelConfig(
        duration_ms=400.0,
        uplink=link,
        downlink=link,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=2 * SIZE)),
        policy=PolicyConfig(name="always", ttl_hint_ms=100, renew_margin=0.0),
    )
    result = Simulation(config, 0, plan).run()
    assert result.invalidations["expired"] == 2
    assert result.references["object"].tolist() == [A, C, B, A, A]
    assert result.references["outcome"].tolist()[2:] == [
        RefOutcome.INSTALLED,
        RefOutcome.INSTALLED,
        RefOutcome.HIT,
    ]


def test_an_owner_close_is_told_to_the_other_hosts_that_hold_its_leases():
    """A session's close ends the leases it owns, a connection's the ones its connection owns
    (the shared object S, put first by host 0 and put again by host 1 while live: a renewal,
    its owner unchanged). The host that closes knows; only host 1, which holds S, is told
    (owner closed): it sends S inline once, then puts it again."""
    shared, private = A, B
    ids = np.arange(2, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(2), ids, ids, np.full(2, CacheObjectKind.PROMPT_SEGMENT)
    )
    first = SessionPlan(
        1,
        0,
        0.0,
        1_000.0,
        1_000.0,
        [(0.0, [shared, private]), (100.0, [shared, private])],
        {private: 2.0},
    )
    second = SessionPlan(
        2, 1, 50.0, 3_000.0, 3_000.0, [(50.0, [shared]), (2_000.0, [shared]), (2_100.0, [shared])]
    )
    plan = WorkloadPlan(
        catalog, np.full(2, SIZE), [first, second], np.zeros(0), np.zeros(0, np.int64), np.zeros(2)
    )
    config = ModelConfig(
        duration_ms=3_000.0,
        hosts=2,
        policy=PolicyConfig(name="always", ttl_hint_ms=10_000),
    )
    sim = Simulation(config, 1, plan)
    result = sim.run()
    assert result.invalidations["owner_closed"] == 1
    refs = result.references
    assert refs["outcome"][refs["session"] == 2].tolist() == [
        RefOutcome.INSTALLED,  # a renewal on the server: host 1 held no lease of its own
        RefOutcome.INLINED_AFTER_INVALIDATE,  # told at host 0's close
        RefOutcome.INSTALLED,
    ]
    assert private not in sim.hosts[0].leases[0]  # its session's leases ended with it
    assert result.violations == 0


def test_a_session_closes_once_its_last_reply_is_in_though_its_plan_ended_before():
    """The session's last operation, at 25 ms of a plan that ends at 30 ms, over links of 5 ms:
    its PUT reaches the server at 30, the frame at 40, the reply the host at 45; only then
    does SESSION_CLOSE leave, ending at 50 the lease the session owns (held until then)."""
    link = LinkConfig(latency_ms=5.0, bandwidth_bytes_per_ms=1e12)
    config = ModelConfig(
        duration_ms=100.0,
        uplink=link,
        downlink=link,
        sample_interval_ms=1.0,
        server=ServerConfig(per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=0.0),
        policy=PolicyConfig(name="always", ttl_hint_ms=10_000),
    )
    result = Simulation(config, 1, one_session([(25.0, [A])], [SIZE], [10.0], 30.0)).run()
    assert result.operations["latency_ms"].tolist() == pytest.approx([20.0])
    memory = result.memory
    held = set(memory["time_ms"][memory["held_bytes"] == SIZE].tolist())
    assert set(range(31, 50)) <= held and max(held) <= 50
