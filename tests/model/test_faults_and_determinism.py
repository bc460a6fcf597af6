"""Faults leave no invariant broken and every operation completes; runs are pure functions of
their seed."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from nnrpsim.engine import CacheLimits
from nnrpsim.model import (
    FaultConfig,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    WorkloadConfig,
    simulate,
    stream_plan,
)
from nnrpsim.model.simulation import PROGRESS_STEPS, Simulation, progress_ends
from nnrpsim.protocol import OwnerScope

WORKLOAD = WorkloadConfig(
    session_rate_per_s=1.0,
    session_duration_ms=20_000.0,
    operation_rate_per_s=2.0,
    shared_objects_per_namespace=20,
    content_change_rate_per_s=0.01,
)


def _config(**changes) -> ModelConfig:
    base = {
        "duration_ms": 60_000.0,
        "hosts": 2,
        "servers": 2,
        "workload": WORKLOAD,
        "server": ServerConfig(limits=CacheLimits(capacity_bytes=4 << 20), sweep_interval_ms=500.0),
        "policy": PolicyConfig(name="best_practice"),
    }
    return ModelConfig(**{**base, **changes})


def _assert_sound(result):
    assert result.violations == 0, result.audit
    assert result.fallback_success_rate == 1.0
    assert len(result.operations["start_ms"]) > 100


def test_link_loss_retransmits_and_completes():
    lossy = LinkConfig(loss=0.2, retransmit_timeout_ms=5.0)
    result = simulate(_config(uplink=lossy, downlink=lossy), 3)
    _assert_sound(result)
    assert result.counters["retransmissions"] > 0
    # each byte sent once in its class, the resends beside (a fifth lost: a quarter resent)
    resent = result.counters["wire_bytes_resent"]
    assert sum(result.wire.values()) + resent == result.wire_bytes_total
    assert 0.15 < resent / sum(result.wire.values()) < 0.35
    clean = simulate(_config(), 3)
    assert result.operations["latency_ms"].mean() > clean.operations["latency_ms"].mean()


@pytest.mark.parametrize("announce", [True, False])
def test_server_restart_drops_the_cache(announce):
    result = simulate(
        _config(faults=FaultConfig(restart_at_ms=30_000.0, announce_restart=announce)), 4
    )
    _assert_sound(result)
    if announce:
        assert result.invalidations["server_restart"] > 0
    else:  # hosts find out from cache misses and fall back to inlining
        assert result.audit["fallbacks"] > 0
        assert (result.references["outcome"] == RefOutcome.CACHE_MISS).sum() > 0


def test_a_restarted_server_still_knows_each_open_session_s_connection():
    """The sessions open on a server survive its restart: a lease one of them is granted
    after it ends when the session's connection closes, as one granted before would."""
    server = Simulation(_config(), 4).servers[0]
    server.open_session(7, 3, 0)
    server.restart(announce=False)
    server.put(0, [0], [1], 60_000, [100], OwnerScope.SESSION, 7, {})
    assert server.table.holds(0, 0)
    server.close_connection(3, 0)
    assert not server.table.holds(0, 0)


def test_memory_pressure_evicts_and_completes():
    faults = FaultConfig(memory_pressure_at_ms=30_000.0, memory_pressure_fraction=0.05)
    result = simulate(_config(faults=faults), 5)
    _assert_sound(result)
    assert result.invalidations["evicted"] > 0
    held = result.memory["held_bytes"][
        (result.memory["time_ms"] > 31_000) & (result.memory["server"] == 0)
    ]
    assert held.max() <= 0.05 * (4 << 20)


def test_the_leases_memory_pressure_evicts_are_counted():
    """Ended as the budget shrinks: what the shrink evicted, each announced to at most both
    hosts, is in the faulted run's evictions beyond the same run's without it."""
    faults = FaultConfig(memory_pressure_at_ms=30_000.0, memory_pressure_fraction=0.05)
    faulted, clean = (
        simulate(_config(faults=chosen, duration_ms=30_000.0), 5)
        for chosen in (faults, FaultConfig())
    )
    announced = faulted.invalidations["evicted"] - clean.invalidations["evicted"]
    assert announced > 50
    assert faulted.counters["evictions"] - clean.counters["evictions"] >= announced / 2


def test_same_seed_same_results_different_seed_different_stream():
    first, again, other = (simulate(_config(), seed) for seed in (7, 7, 8))
    for name, column in first.references.items():
        np.testing.assert_array_equal(column, again.references[name])
    assert first.wire == again.wire and first.counters == again.counters
    assert len(other.references["time_ms"]) != len(
        first.references["time_ms"]
    ) or not np.array_equal(other.references["time_ms"], first.references["time_ms"])


def test_never_policy_inlines_everything_and_caching_saves_bytes():
    never = simulate(_config(policy=PolicyConfig(name="never")), 9)
    best = simulate(_config(), 9)
    assert (never.references["outcome"] == RefOutcome.INLINED_BY_POLICY).all()
    assert never.wire["put_body"] == 0 and never.wire["reference"] == 0
    assert best.wire_bytes_total < never.wire_bytes_total


def test_a_saturated_link_is_reported_as_such():
    """Offered load beyond the bandwidth: the queue outlasts the run, the unfinished operations
    are the only violations, and the utilisation says why."""
    clean = simulate(_config(hosts=1, servers=1), 6)
    links_capacity = LinkConfig().bandwidth_bytes_per_ms * clean.config.duration_ms
    assert clean.violations == 0
    assert clean.wire_bytes_total / 2 <= clean.link_utilisation * links_capacity
    assert clean.link_utilisation * links_capacity <= clean.wire_bytes_total
    slow = LinkConfig(bandwidth_bytes_per_ms=250.0)  # 2 Mbit/s
    saturated = simulate(_config(hosts=1, servers=1, uplink=slow, downlink=slow), 6)
    assert saturated.link_utilisation >= 1
    protocol = {
        name: count
        for name, count in saturated.audit.items()
        if name.startswith("hit_") or name == "reference_after_invalidate"
    }
    assert set(protocol.values()) == {0} and saturated.audit["operation_never_completed"] > 0
    assert saturated.operations_behind == saturated.audit["operation_never_completed"]
    assert clean.operations_behind == 0


def test_wire_savings_are_counted_over_the_operations_the_wire_counts():
    """A run that fell behind ended in the middle of operations: their bytes were on the wire
    and their references not yet recorded, so inlining everything "saved" less than nothing
    (-49 MiB in three minutes over a 2 Mbit/s link). Savings are now counted against what the
    operations started would send inline; in a run that completes them all, that is what its
    references' records add up to."""
    from nnrpsim.metrics import des_metrics

    slow = LinkConfig(bandwidth_bytes_per_ms=250.0)  # 2 Mbit/s
    never = _config(hosts=1, servers=1, uplink=slow, downlink=slow, policy=PolicyConfig("never"))
    saturated = simulate(never, 6)
    assert saturated.operations_behind > 0
    assert saturated.all_inline_bytes > saturated.references["inline_bytes"].sum()
    assert des_metrics(saturated, 0.0)["wire_bytes_saved"] == 0
    warmed = simulate(replace(never, warmup_ms=20_000.0), 6)
    assert des_metrics(warmed, 20_000.0)["wire_bytes_saved"] == 0
    clean = simulate(_config(hosts=1, servers=1), 6)
    assert clean.operations_behind == 0
    assert clean.all_inline_bytes == clean.references["inline_bytes"].sum()


@pytest.mark.parametrize(("shared", "private"), [(0, 4), (20, 0), (0, 0)])
def test_workloads_without_shared_or_private_objects_run(shared, private):
    workload = WorkloadConfig(
        shared_objects_per_namespace=shared, private_objects_per_session=private
    )
    result = simulate(_config(workload=workload, duration_ms=10_000.0), 7)
    assert result.violations == 0
    objects = result.references["object"]
    assert len(objects) == 0 if shared == private == 0 else len(objects) > 0
    pairs = np.unique(np.stack([objects, result.references["session"]]), axis=1)
    if shared == 0 and private:  # every object is one session's own
        assert len(np.unique(pairs[0])) == pairs.shape[1]
    if private == 0 and shared:  # every object is a shared one
        assert objects.max() < WORKLOAD.namespaces * shared


def test_a_workload_drawing_more_references_than_it_has_objects_runs():
    """99999999999999999999 references drawn an operation: the run references every object
    each operation (it failed: ``Python int too large to convert to C long``)."""
    many = 10**20
    workload = WorkloadConfig(
        shared_objects_per_namespace=3,
        private_objects_per_session=2,
        shared_refs_per_operation=many,
        private_refs_per_operation=many,
    )
    result = simulate(_config(workload=workload, duration_ms=10_000.0), 7)
    assert result.violations == 0
    operations = len(result.operations["start_ms"])
    assert operations > 100 and len(result.references["object"]) == 5 * operations


def test_operations_a_session_falls_behind_on_count_as_never_completed():
    """One session, a reference every 10 ms to 1 MB objects over a 1 Mbit/s link: each PUT takes
    8 s, so the session serves a handful of its planned operations; the rest never start."""
    from nnrpsim.engine.stream import ReferenceStream

    n = 2000
    stream = ReferenceStream(np.arange(n) * 10, np.arange(n) % 50, np.full(n, 1_000_000))
    slow = LinkConfig(bandwidth_bytes_per_ms=125.0)
    config = ModelConfig(
        duration_ms=20_000.0, uplink=slow, downlink=slow, policy=PolicyConfig(name="always")
    )
    result = simulate(config, 1, stream_plan(stream))
    completed = len(result.operations["start_ms"])
    assert completed < 20
    assert result.audit["operation_never_completed"] == result.operations_behind == n - completed
    assert result.link_utilisation >= 1


def test_the_event_count_is_every_event_the_run_stepped_through(monkeypatch):
    """``events`` (what the benchmark's event rate counts) is read off SimPy's schedule
    numbering, not counted per step: it must equal the steps taken, less the run's own
    ``until`` event."""
    steps = 0
    step = simpy.Environment.step

    def counting_step(env: simpy.Environment) -> None:
        nonlocal steps
        steps += 1
        step(env)

    monkeypatch.setattr(simpy.Environment, "step", counting_step)
    result = simulate(_config(faults=FaultConfig(restart_at_ms=30_000.0)), 3)
    assert result.events > 1_000
    assert result.events == steps - 1


def _same_run(first, second) -> None:
    """Two results of one run: every record, count and audit figure alike (not the wall time)."""
    for table in ("references", "operations", "memory", "held_by_kind"):
        one, other = getattr(first, table), getattr(second, table)
        assert one.keys() == other.keys()
        for name, column in one.items():
            np.testing.assert_array_equal(column, other[name], err_msg=f"{table}.{name}")
    np.testing.assert_array_equal(first.accepted_ttl_ms, second.accepted_ttl_ms)
    for name in ("wire", "counters", "audit", "invalidations", "events", "operations_behind"):
        assert getattr(first, name) == getattr(second, name), name
    assert first.at_warmup == second.at_warmup


@pytest.mark.parametrize(
    "changes",
    [
        {"faults": FaultConfig(restart_at_ms=30_000.0, memory_pressure_at_ms=40_000.0)},
        # whole-millisecond parts of a run that ends between milliseconds, timeout included
        {"duration_ms": 12_345.678, "warmup_ms": 1_000.0, "operation_timeout_ms": 0.25},
        {"duration_ms": 40.0, "operation_timeout_ms": 0.0},  # fewer parts than PROGRESS_STEPS
    ],
)
def test_a_run_told_of_its_progress_gives_the_same_records(changes):
    """A progress bar's run stops SimPy between events, PROGRESS_STEPS times: the same events
    then run in the same order, and every number of the run is the same. The bar is told a
    share that grows to 1."""
    config = _config(**changes)
    told: list[float] = []
    _same_run(simulate(config, 5), simulate(config, 5, progress=told.append))
    until = config.duration_ms + config.operation_timeout_ms
    assert told == [end / until for end in progress_ends(until)] and told[-1] == 1.0


@given(until=st.floats(1e-3, 1e12))
def test_progress_parts_end_on_whole_milliseconds_in_order_and_the_run_last(until):
    """PROGRESS_STEPS parts in a run of as many ms or more; fewer, never none, below."""
    ends = progress_ends(until)
    assert ends[-1] == until and len(ends) <= PROGRESS_STEPS
    assert len(ends) == PROGRESS_STEPS or until < PROGRESS_STEPS
    assert all(0 < a < b for a, b in itertools.pairwise(ends))
    assert all(end == int(end) for end in ends[:-1])
