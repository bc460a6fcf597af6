"""A scenario as the model takes it: the plain, frozen configuration a run of it simulates
(or replays), its keys' units turned into the model's (ms, bytes per ms) and its object kinds'
names into the protocol's codes."""

from __future__ import annotations

from .engine import CacheLimits
from .model import (
    FaultConfig,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    ServerConfig,
    WorkloadConfig,
)
from .protocol import CacheObjectKind, cache_object_bitmap
from .scenario import Scenario
from .scenario.per_scenario import once_per_scenario
from .scenario.schema import HostPolicy, Link, Topology, Workload
from .scenario.sweep import with_auto_warmup


def _kind(name: str) -> CacheObjectKind:
    return CacheObjectKind[name.upper()]


def _kind_mix(shares: dict[str, float]) -> tuple[tuple[int, float], ...]:
    return tuple((_kind(name), share) for name, share in shares.items())


@once_per_scenario
def model_config(scenario: Scenario) -> ModelConfig:
    """The model's plain configuration for a resolved scenario (frozen, so shared: sizing the
    runs and describing the workloads both ask for it). Its parts are kept for each section
    of the scenario, which a sweep's points share where they do not sweep it (100,000 points
    of a sweep of two sections took 4.3 s to configure, now 3.1 s)."""
    topology, faults = scenario.topology, scenario.faults
    return ModelConfig(
        duration_ms=scenario.study.duration,
        warmup_ms=with_auto_warmup(scenario).study.warmup,  # (a point's is resolved already)
        hosts=topology.hosts,
        servers=topology.servers,
        routing=topology.routing,
        uplink=_link_config(topology.link),
        downlink=_link_config(topology.link),
        server=_server_config(topology),
        policy=_policy_config(scenario.host_policy),
        workload=_workload_config(scenario.workload),
        faults=FaultConfig(
            restart_at_ms=faults.restart_at,
            announce_restart=faults.announce_restart,
            # (a cut of unlimited memory leaves it unlimited: no fault, and no end to the span
            # the memory is judged to settle in)
            memory_pressure_at_ms=None
            if topology.gpu_memory is None
            else faults.memory_pressure_at,
            memory_pressure_fraction=faults.memory_pressure_fraction,
        ),
        sample_interval_ms=_sample_interval_ms(scenario),
    )


SAMPLES_A_RUN = 300
"""Into how many intervals a run's samples of its memory cut it (fewer in a run of under
300 ms: :data:`LEAST_SAMPLE_INTERVAL_MS`)."""

LEAST_SAMPLE_INTERVAL_MS = 1.0
"""The samples fall on whole milliseconds: two in one would be one."""


def _sample_interval_ms(scenario: Scenario) -> float:
    """How often a run samples its memory, on either engine: every three hundredth of the
    run. A sample's memory over time is the bytes held on average since the one before, so
    where the samples fall against the DES's expiry sweep does not move it (until
    2026-12-06 it was the bytes held at the sample's instant, and the DES sampled no more
    often than it swept, each sample on a tick)."""
    return max(scenario.study.duration / SAMPLES_A_RUN, LEAST_SAMPLE_INTERVAL_MS)


@once_per_scenario
def _link_config(link: Link) -> LinkConfig:
    return LinkConfig(
        latency_ms=link.latency,
        bandwidth_bytes_per_ms=link.bandwidth / 1000.0,
        loss=link.loss,
        retransmit_timeout_ms=link.retransmit_timeout,
    )


@once_per_scenario
def _server_config(topology: Topology) -> ServerConfig:
    kinds = [_kind(name) for name in topology.object_kinds]
    limits = CacheLimits(
        object_kind_bitmap=cache_object_bitmap(*kinds),
        max_object_bytes=topology.max_object_bytes,
        max_cache_entries=topology.max_cache_entries,
        capacity_bytes=topology.gpu_memory,
        ttl_floor_ms=int(topology.ttl_floor),
        ttl_ceiling_ms=int(topology.ttl_ceiling),
        eviction=topology.eviction,
        renewal=topology.renewal,
    )
    return ServerConfig(
        limits=limits,
        default_lease_ttl_ms=int(topology.default_lease_ttl),
        per_operation_ms=topology.per_operation_cost,
        per_inline_byte_ms=topology.per_inline_byte_cost,
        per_put_byte_ms=topology.per_put_byte_cost,
        sweep_interval_ms=topology.sweep_interval,
        workers=topology.server_workers,
        cascade_dependencies=topology.dependency_cascade,
    )


@once_per_scenario
def _policy_config(policy: HostPolicy) -> PolicyConfig:
    return PolicyConfig(
        name=policy.name,
        min_object_bytes=policy.min_object_size,
        min_expected_reuse=policy.min_reuse,
        ttl_fraction=policy.ttl_fraction,
        renew_margin=policy.renew_margin,
        renewal_body=policy.renewal_body,
        ttl_hint_ms=None if policy.ttl_hint is None else int(policy.ttl_hint),
        inline_after_invalidate=policy.inline_after_invalidate,
        connection_ttl_ms=None if policy.connection_ttl is None else int(policy.connection_ttl),
        refused_backoff_ms=float(policy.refused_put_backoff),
    )


@once_per_scenario
def _workload_config(workload: Workload) -> WorkloadConfig:
    return WorkloadConfig(
        session_rate_per_s=workload.sessions.rate_per_s,
        session_duration_ms=workload.sessions.duration,
        session_duration_cv=workload.sessions.duration_cv,
        operation_rate_per_s=workload.operations.rate_per_s,
        namespaces=workload.objects.namespaces,
        shared_objects_per_namespace=workload.objects.shared_per_namespace,
        shared_refs_per_operation=workload.operations.shared_refs,
        zipf_alpha=workload.objects.zipf_alpha,
        private_objects_per_session=workload.objects.private_per_session,
        private_refs_per_operation=workload.operations.private_refs,
        object_size_median=workload.objects.size.median,
        object_size_sigma=workload.objects.size.sigma,
        shared_kinds=_kind_mix(workload.objects.shared_kinds),
        private_kinds=_kind_mix(workload.objects.private_kinds),
        kind_sizes=tuple(
            (_kind(name), size.median, size.sigma)
            for name, size in workload.objects.kind_sizes.items()
        ),
        content_change_rate_per_s=workload.invalidations.rate_per_s,
        private_dependency_share=workload.objects.private_dependency_share,
        max_in_flight_operations=workload.operations.max_in_flight,
    )
