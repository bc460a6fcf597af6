"""Plain, frozen configuration of one simulation run (the scenario layer builds these).

Times are milliseconds, sizes bytes, rates per millisecond unless a name says otherwise.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields

import numpy as np

from nnrpsim.engine import CacheLimits
from nnrpsim.namespaces import MAX_HOSTS, MAX_SHARED_NAMESPACES
from nnrpsim.protocol import U16_MAX, U32_MAX, CacheObjectKind

KindMix = tuple[tuple[int, float], ...]
"""Object kinds with their relative shares: ((kind code, weight), ...)."""
KindSizes = tuple[tuple[int, int, float], ...]
"""Size distributions by kind: ((kind code, median bytes, lognormal sigma), ...)."""


INT_HINTS = ("int", "int | None")


def _python_numbers(config: object) -> None:
    """numpy scalars as Python numbers (``np.int64(2)`` as ``2``): a notebook sweeps with numpy
    values, and the compiled model refuses an ``np.int64`` where its type hints say ``int``. A
    field hinted ``int`` must hold one: a count of 2.5 (or NaN) would fail deep in the run."""
    for name, counted in _field_hints(type(config)):
        value = getattr(config, name)
        if isinstance(value, np.generic):
            value = value.item()
            object.__setattr__(config, name, value)
        whole = isinstance(value, int) and not isinstance(value, bool)
        if counted and value is not None and not whole:
            raise ValueError(f"{name} must be a whole number, got {value!r}")


@functools.cache
def _field_hints(cls: type) -> tuple[tuple[str, bool], ...]:
    """A configuration class's fields, each with whether it must hold a whole number (looked up
    once: ``dataclasses.fields`` took an eighth of a model config's 44 us)."""
    return tuple((f.name, f.type in INT_HINTS) for f in fields(cls))


def _positive(
    name: str, value: float, allow_zero: bool = False, allow_infinite: bool = False
) -> None:
    """A number the run can use: NaN never is (every comparison with it is false, so ``value <
    0`` let it through and the run went on with nonsense), infinity only where it means
    something (an instant link)."""
    bound = ">= 0" if allow_zero else "> 0"
    if not (value >= 0 if allow_zero else value > 0):
        raise ValueError(f"{name} must be {bound}, got {value}")
    if value == math.inf and not allow_infinite:
        raise ValueError(f"{name} must be finite and {bound}, got {value}")


def _kind(name: str, kind: int) -> None:
    if kind not in CacheObjectKind.__members__.values():
        raise ValueError(f"{name}: {kind} is not an object kind (1-9)")


@dataclass(frozen=True)
class LinkConfig:
    """One direction of a host-server path: latency, bandwidth, loss with retransmission."""

    latency_ms: float = 0.5
    bandwidth_bytes_per_ms: float = 1_250_000.0  # 10 Gbit/s
    loss: float = 0.0
    retransmit_timeout_ms: float = 20.0

    def __post_init__(self) -> None:
        _python_numbers(self)
        _positive("latency_ms", self.latency_ms, allow_zero=True)
        _positive("bandwidth_bytes_per_ms", self.bandwidth_bytes_per_ms, allow_infinite=True)
        if not 0 <= self.loss < 1:
            raise ValueError(f"loss must be in [0, 1), got {self.loss}")
        _positive("retransmit_timeout_ms", self.retransmit_timeout_ms)


@dataclass(frozen=True)
class ServerConfig:
    """The NNRP runtime: cache limits (GPU memory budget), lease TTL policy, processing costs."""

    limits: CacheLimits = field(default_factory=lambda: CacheLimits(capacity_bytes=8 << 30))
    default_lease_ttl_ms: int = 30_000
    per_operation_ms: float = 0.05
    per_inline_byte_ms: float = 1e-6
    per_put_byte_ms: float = 1e-6  # a CACHE_PUT's body is staged like an inline one, once
    sweep_interval_ms: float = 1_000.0
    workers: int | None = None  # frames processed at once; None: no limit (a pure delay)
    # When an object's lease ends by a content change, end its dependents' too and tell their
    # holders (reason dependency_invalidated); else a dependent stays until a reference to it
    # is refused (dependency_invalid). Either way references are checked against dependencies.
    cascade_dependencies: bool = True

    def __post_init__(self) -> None:
        _python_numbers(self)
        if not 0 < self.default_lease_ttl_ms <= U32_MAX:
            raise ValueError(
                f"default_lease_ttl_ms must be in 1..{U32_MAX}, got {self.default_lease_ttl_ms}"
            )
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1 (or None: no limit), got {self.workers}")
        _positive("per_operation_ms", self.per_operation_ms, allow_zero=True)
        _positive("per_inline_byte_ms", self.per_inline_byte_ms, allow_zero=True)
        _positive("per_put_byte_ms", self.per_put_byte_ms, allow_zero=True)
        _positive("sweep_interval_ms", self.sweep_interval_ms)
        if self.sweep_interval_ms < 1:
            raise ValueError(
                "sweep_interval_ms must be at least 1: a sweep reads the clock in whole ms, as "
                f"leases run out, so one more often finds nothing new, got {self.sweep_interval_ms}"
            )


@dataclass(frozen=True)
class PolicyConfig:
    """A host cache policy by registry name, with its parameters."""

    name: str = "best_practice"
    min_object_bytes: int = 1024
    min_expected_reuse: float = 2.0
    ttl_fraction: float = 0.75
    renew_margin: float = 0.2
    renewal_body: bool = True
    # a fixed lease_ttl_hint_ms instead of a session fraction; 0: unspecified (the server's default)
    ttl_hint_ms: int | None = None
    inline_after_invalidate: bool = True  # spec section 14: inline next time, reinstall after
    # CACHE_PUT's ttl_ms for connection-owned (shared) objects, whose reuse then counts across
    # the connection's sessions over that TTL; None: the session's TTL and its reuse.
    connection_ttl_ms: int | None = None
    # After a CACHE_ACK refuses room (memory or entry limit), inline the object without another
    # CACHE_PUT for this long; 0: try again at its next use.
    refused_backoff_ms: float = 0.0

    def __post_init__(self) -> None:
        _python_numbers(self)
        _positive("min_object_bytes", self.min_object_bytes, allow_zero=True)
        _positive("min_expected_reuse", self.min_expected_reuse, allow_zero=True)
        if not 0 < self.ttl_fraction <= 10:
            raise ValueError(f"ttl_fraction must be in (0, 10], got {self.ttl_fraction}")
        if not 0 <= self.renew_margin <= 1:
            raise ValueError(f"renew_margin must be in [0, 1], got {self.renew_margin}")
        for name, least in (("ttl_hint_ms", 0), ("connection_ttl_ms", 1)):  # (hint 0: none)
            value = getattr(self, name)
            if value is not None and not least <= value <= U32_MAX:
                raise ValueError(f"{name} must be in {least}..{U32_MAX}, got {value}")
        if not 0 <= self.refused_backoff_ms < math.inf:
            raise ValueError(
                f"refused_backoff_ms must be finite and >= 0, got {self.refused_backoff_ms}"
            )


@dataclass(frozen=True)
class WorkloadConfig:
    """Synthetic sessions: arrivals, durations, private and shared objects, operations, changes."""

    session_rate_per_s: float = 2.0
    session_duration_ms: float = 60_000.0
    session_duration_cv: float = 0.5  # lognormal coefficient of variation; 0 = fixed
    operation_rate_per_s: float = 1.0
    namespaces: int = 4
    shared_objects_per_namespace: int = 50
    shared_refs_per_operation: int = 2
    zipf_alpha: float = 0.9
    private_objects_per_session: int = 4
    private_refs_per_operation: int = 2
    object_size_median: int = 16_384
    object_size_sigma: float = 1.0
    # kinds of the shared objects (system prompts, tool schemas) and of each session's private
    # ones, spread by their shares; sizes by kind where a kind's differ from the above
    shared_kinds: KindMix = (
        (CacheObjectKind.PROMPT_SEGMENT, 1.0),
        (CacheObjectKind.TOOL_SCHEMA, 1.0),
    )
    private_kinds: KindMix = ((CacheObjectKind.PROMPT_SEGMENT, 1.0),)
    kind_sizes: KindSizes = ()
    content_change_rate_per_s: float = 0.0  # per object
    # Of each session's private objects, the share made from its namespace's most popular shared
    # object (a prompt built on the system prompt): they depend on it at the version they were
    # made from (spec section 11), and a change of it changes them too. Spread like kinds.
    private_dependency_share: float = 0.0
    # SESSION_OPEN's max_in_flight_operations (the spec's default, 4); servers grant it as asked
    max_in_flight_operations: int = 4

    def __post_init__(self) -> None:
        _python_numbers(self)
        for name in ("session_rate_per_s", "session_duration_ms", "operation_rate_per_s"):
            _positive(name, getattr(self, name))
        if not 1 <= self.max_in_flight_operations <= U16_MAX:
            raise ValueError(
                f"max_in_flight_operations must be in 1..{U16_MAX}, "
                f"got {self.max_in_flight_operations}"
            )
        for name in ("namespaces", "object_size_median"):
            _positive(name, getattr(self, name))
        if self.namespaces > MAX_SHARED_NAMESPACES:
            raise ValueError(f"namespaces must be at most {MAX_SHARED_NAMESPACES:,}")
        for name in (
            "session_duration_cv",
            "shared_objects_per_namespace",
            "shared_refs_per_operation",
            "zipf_alpha",
            "private_objects_per_session",
            "private_refs_per_operation",
            "object_size_sigma",
            "content_change_rate_per_s",
        ):
            _positive(name, getattr(self, name), allow_zero=True)
        for name in ("shared_kinds", "private_kinds"):
            mix = getattr(self, name)
            if not mix:
                raise ValueError(f"{name} must name at least one object kind")
            for kind, weight in mix:
                _kind(name, kind)
                _positive(f"{name} weight of kind {kind}", weight)
        if not 0 <= self.private_dependency_share <= 1:
            raise ValueError(
                f"private_dependency_share must be in [0, 1], got {self.private_dependency_share}"
            )
        if self.private_dependency_share and not self.shared_objects_per_namespace:
            raise ValueError(
                "private_dependency_share needs shared objects to depend on "
                "(shared_objects_per_namespace > 0)"
            )
        for kind, median, sigma in self.kind_sizes:
            _kind("kind_sizes", kind)
            _positive(f"kind_sizes median of kind {kind}", median)
            _positive(f"kind_sizes sigma of kind {kind}", sigma, allow_zero=True)


@dataclass(frozen=True)
class FaultConfig:
    """Faults injected during the run (link loss lives in LinkConfig)."""

    restart_at_ms: float | None = None
    announce_restart: bool = True
    memory_pressure_at_ms: float | None = None
    memory_pressure_fraction: float = 0.5

    def __post_init__(self) -> None:
        _python_numbers(self)
        if not 0 < self.memory_pressure_fraction <= 1:
            raise ValueError(
                f"memory_pressure_fraction must be in (0, 1], got {self.memory_pressure_fraction}"
            )
        for name in ("restart_at_ms", "memory_pressure_at_ms"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name), allow_zero=True)

    @property
    def first_at_ms(self) -> float | None:
        """The earliest fault's time (a restart, a budget cut), which ends the span a run's
        memory is judged to settle in; None without faults."""
        times = (self.restart_at_ms, self.memory_pressure_at_ms)
        return min((at for at in times if at is not None), default=None)


@dataclass(frozen=True)
class ModelConfig:
    """Everything one run needs besides its seed."""

    duration_ms: float = 600_000.0
    warmup_ms: float = 0.0
    """Counted from the first whole millisecond at or after this (rounded up here): the
    protocol's clock, and the vector engine's, on which both engines cut the warm-up."""
    hosts: int = 1
    servers: int = 1
    routing: str = "round_robin"
    uplink: LinkConfig = field(default_factory=LinkConfig)
    downlink: LinkConfig = field(default_factory=LinkConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    faults: FaultConfig = field(default_factory=FaultConfig)
    sample_interval_ms: float = 1_000.0
    operation_timeout_ms: float = 60_000.0

    def __post_init__(self) -> None:
        _python_numbers(self)
        _positive("duration_ms", self.duration_ms)
        _positive("warmup_ms", self.warmup_ms, allow_zero=True)
        if self.warmup_ms >= self.duration_ms:
            raise ValueError("warmup_ms must be shorter than duration_ms")
        object.__setattr__(self, "warmup_ms", float(math.ceil(self.warmup_ms)))
        if self.warmup_ms >= self.duration_ms:
            raise ValueError("warmup_ms must end a whole millisecond before duration_ms")
        _positive("hosts", self.hosts)
        if self.hosts > MAX_HOSTS:
            raise ValueError(f"hosts must be at most {MAX_HOSTS:,}")
        _positive("servers", self.servers)
        if self.routing not in ROUTING_RULES:
            raise ValueError(
                f"routing must be one of {', '.join(ROUTING_RULES)}, got {self.routing!r}"
            )
        _positive("sample_interval_ms", self.sample_interval_ms)
        if self.sample_interval_ms < 1.0:  # (two samples in one millisecond: an empty interval)
            raise ValueError(
                f"sample_interval_ms must be at least 1 (the samples fall on whole "
                f"milliseconds), got {self.sample_interval_ms}"
            )
        _positive("operation_timeout_ms", self.operation_timeout_ms, allow_zero=True)

    def sample_times_ms(self) -> list[int]:
        """When a run samples its memory, on either engine: every ``sample_interval_ms`` from
        0 to its end, each on the whole millisecond it falls in; each a multiple of the
        interval, not the intervals added up, whose rounding could drop the run's end."""
        count = math.floor(self.duration_ms / self.sample_interval_ms + 1e-9) + 1
        return [math.floor(k * self.sample_interval_ms) for k in range(count)]


ROUTING_RULES = ("round_robin", "hash", "least_sessions")
