"""The scenario file format: a validated, frozen pydantic model with a default and help text for
every field. Unknown keys are rejected; sizes and durations take human units."""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from nnrpsim.namespaces import MAX_HOSTS, MAX_SHARED_NAMESPACES
from nnrpsim.protocol import U16_MAX, U32_MAX, CacheObjectKind

from ..quoted import given
from .units import parse_duration_ms, parse_rate, parse_size, parse_whole_ms

Size = Annotated[int, BeforeValidator(parse_size)]
Duration = Annotated[float, BeforeValidator(parse_duration_ms)]
WireMs = Annotated[float, BeforeValidator(parse_whole_ms)]
"""A duration the protocol carries in a u32 of whole milliseconds: a lease TTL."""
Rate = Annotated[float, BeforeValidator(parse_rate)]


def parse_warmup_ms(value: object) -> float | str:
    """A warm-up: a duration, or ``auto``, which each sweep point resolves to its own
    (:func:`nnrpsim.scenario.sweep.with_auto_warmup`)."""
    if value == "auto":
        return value
    ms = parse_duration_ms(value)
    if ms < 0:  # (here, not a constraint on the union, whose error would name its member)
        raise ValueError("must be at least 0")
    return ms


Warmup = Annotated[float | Literal["auto"], BeforeValidator(parse_warmup_ms)]


def _nameable(path: str) -> str:
    if not path:  # (read as the scenario's own folder: said to be "a folder, not a file")
        raise ValueError("must not be empty")
    if "\0" in path:  # (YAML can write one; no system opens such a name)
        raise ValueError("must not contain a NUL character")
    return path


FilePath = Annotated[str, AfterValidator(_nameable)]
Share = Annotated[float, Field(gt=0)]
"""A kind's relative share of objects: an error names the kind's own key."""
KIND_NAMES = tuple(kind.name.lower() for kind in CacheObjectKind)
Kind = Literal[KIND_NAMES]  # type: ignore[valid-type]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_and_booleans_apart(cls, value: object, info: ValidationInfo) -> object:
        """YAML reads yes, no, on, off, true and false as booleans, and pydantic would take one
        for 1 or 0 where a number is due (``max_cache_entries: yes``, a limit of one entry),
        and a 0 or 1 for a boolean."""
        kind = type(value)
        if kind is bool and info.field_name in _field_types(cls)[0]:
            raise ValueError(f"must be a number, got {given(value)}")
        if kind in (int, float) and info.field_name in _field_types(cls)[1]:
            raise ValueError(f"must be true or false, got {given(value)}")
        return value


@functools.cache
def _field_types(section: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """A section's fields that take a plain number (or a number or null: not a size, a
    duration or a rate, whose parsers refuse a boolean themselves), and those that take a
    boolean."""
    numbers, booleans = set(), set()
    for name, field in section.model_fields.items():
        parsed = any(isinstance(rule, BeforeValidator) for rule in field.metadata)
        annotation = field.annotation
        if not parsed and (
            annotation in (int, float)
            or (
                get_origin(annotation) in (Union, UnionType)
                and any(member in (int, float) for member in get_args(annotation))
            )
        ):
            numbers.add(name)
        if annotation is bool:
            booleans.add(name)
    return frozenset(numbers), frozenset(booleans)


MAX_RUNS = 1_000_000
"""The most runs a study holds: each writes a file of its own under ``runs/`` (a slip of the
keyboard, 99999999999999999999 replications, sat building its list of runs without end)."""
MAX_POINTS = 100_000
"""The most sweep points a study holds: each is a scenario checked and kept in memory, about
15 kB and 0.5 ms each, and a grid's lists multiply (three lists of 1,000 values make a billion
points, which took 13.6 GB in their first minute)."""


NAME_MAX = 255
"""The longest file name the systems nnrpsim runs on take, in bytes: a study's folder name."""


class Study(Section):
    name: str = Field(
        "study",
        pattern=r"^[A-Za-z0-9_.-]+$",
        description=f"Folder name of the results ({NAME_MAX} characters at most).",
    )
    description: str = Field("", description="What question the study answers.")
    seed: int = Field(1, ge=0, description="Study seed; every run's seed derives from it.")
    replications: int = Field(
        3,
        ge=1,
        description=f"Independent runs per sweep point (a study holds {MAX_RUNS:,} runs at most).",
    )
    duration: Duration = Field(
        600_000.0,
        ge=1,
        description="Simulated time per run, e.g. 10min; 1 ms or more (the runs read the clock "
        "in whole ms).",
    )
    warmup: Warmup = Field(
        0.0,
        description="Simulated time discarded before measuring (validate says if the sessions' "
        "climb needs more); auto: each point's least that keeps its sessions at once, averaged "
        "over the measured time, within 1 % of their steady number (closed form).",
    )

    @field_validator("replications")
    @classmethod
    def _runs_a_study_holds(cls, replications: int) -> int:
        if replications > MAX_RUNS:
            raise ValueError(f"must be at most {MAX_RUNS:,}, the runs a study holds")
        return replications

    @field_validator("name")
    @classmethod
    def _folder_of_its_own(cls, name: str) -> str:
        if set(name) == {"."}:  # results/. is results/ itself, results/.. the folder above it
            raise ValueError("must name a folder of its own, not only dots")
        if len(name) > NAME_MAX:  # (the pattern's characters are one byte each)
            raise ValueError(f"must be at most {NAME_MAX} characters, a folder name's limit")
        return name

    @model_validator(mode="after")
    def _warmup_shorter(self) -> Study:
        if self.warmup == "auto":  # (shorter by its making)
            return self
        end = math.ceil(self.warmup)  # (it ends at a whole millisecond)
        if end >= self.duration:  # (said in ms: "duration: 5", a plain number, is 5 ms)
            whole = "" if end == self.warmup else f", which ends at {end:,} ms"
            raise ValueError(
                f"warmup ({self.warmup:,g} ms{whole}) must be shorter than duration "
                f"({self.duration:,g} ms)"
            )
        return self


class Link(Section):
    latency: Duration = Field(0.5, ge=0, description="One-way latency, e.g. 0.5ms.")
    bandwidth: Rate = Field(1.25e9, gt=0, description="Link rate, e.g. 10Gbit/s or 1.25GB/s.")
    loss: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Probability that a transmission is lost (wire_bytes_resent counts the "
        "bytes sent again).",
    )
    retransmit_timeout: Duration = Field(20.0, gt=0, description="Wait before a resend.")


class Topology(Section):
    hosts: int = Field(1, ge=1, le=MAX_HOSTS, description="NNRP clients.")
    servers: int = Field(1, ge=1, description="NNRP runtimes, each with its own GPU cache.")
    routing: Literal["round_robin", "hash", "least_sessions"] = Field(
        "round_robin",
        description="How sessions are assigned to servers: round_robin and hash by session id, "
        "least_sessions to the server with the fewest sessions open as it starts.",
    )
    link: Link = Field(default_factory=Link, description="Every host-server path, both ways.")
    gpu_memory: Size | None = Field(
        8 << 30, gt=0, description="Per-server byte budget for cached objects; null: unlimited."
    )
    max_object_bytes: Size = Field(
        1 << 30, gt=0, le=U32_MAX, description="Per-object ceiling announced in the handshake."
    )
    max_cache_entries: int = Field(0, ge=0, le=U32_MAX, description="Object limit; 0: none.")
    object_kinds: tuple[Literal[KIND_NAMES], ...] = Field(  # type: ignore[valid-type]
        KIND_NAMES, min_length=1, description="Cache object kinds the server negotiates."
    )
    ttl_floor: WireMs = Field(
        0.0, ge=0, le=U32_MAX, description="Shortest lease granted (whole ms)."
    )
    ttl_ceiling: WireMs = Field(
        3_600_000.0, gt=0, le=U32_MAX, description="Longest lease granted (whole ms, at most u32)."
    )
    default_lease_ttl: WireMs = Field(
        30_000.0, gt=0, le=U32_MAX, description="Lease TTL when the host sends no hint (whole ms)."
    )
    eviction: Literal["lru", "fifo", "ttl", "size", "none"] = Field(
        "lru",
        description="Victim order when an install does not fit (evictions counts the "
        "victims); none rejects instead.",
    )
    sweep_interval: Duration = Field(
        1_000.0,
        ge=1,
        description="Period of the expiry sweep, 1 ms or more (it reads the clock in whole ms, "
        "as leases run out); the bytes held include run-out leases until it frees them.",
    )
    renewal: Literal["touch", "extend"] = Field(
        "touch",
        description="A renewal restarts the lease at the TTL it asks for (touch, the reference "
        "rule: it may shorten a lease another host holds) or never shortens it (extend, a "
        "what-if).",
    )
    dependency_cascade: bool = Field(
        True,
        description="When a content change ends an object's lease, end the leases of what was "
        "made from it too and tell their holders (reason dependency_invalidated); false: they "
        "stay until a reference is refused with dependency_invalid (DES).",
    )
    per_operation_cost: Duration = Field(0.05, ge=0, description="Server time per frame.")
    per_inline_byte_cost: Duration = Field(
        1e-6, ge=0, description="Server time per inline byte (1ns: 1 GB/s ingest)."
    )
    per_put_byte_cost: Duration = Field(
        1e-6,
        ge=0,
        description="Server time per CACHE_PUT body byte, installs and renewals (1ns: staged "
        "like an inline body, but once).",
    )
    server_workers: int | None = Field(
        None,
        ge=1,
        le=1 << 20,
        description="FRAME_SUBMITs a server processes at once, the rest waiting first come first "
        "served (DES); null: no limit, processing is a pure delay.",
    )

    @model_validator(mode="after")
    def _ttl_order(self) -> Topology:
        if self.ttl_floor > self.ttl_ceiling:
            raise ValueError(
                f"ttl_floor ({self.ttl_floor:,.0f} ms) must not exceed ttl_ceiling "
                f"({self.ttl_ceiling:,.0f} ms)"
            )
        return self


class ObjectSize(Section):
    median: Size = Field(16_384, gt=0, le=U32_MAX, description="Median object size, e.g. 16KiB.")
    sigma: float = Field(1.0, ge=0, description="Lognormal shape; 0: every object the median size.")


class Objects(Section):
    namespaces: int = Field(
        4, ge=1, le=MAX_SHARED_NAMESPACES, description="Namespaces of shared objects."
    )
    shared_per_namespace: int = Field(50, ge=0, description="System prompts, tool schemas, ...")
    private_per_session: int = Field(4, ge=0, description="Objects only one session uses.")
    zipf_alpha: float = Field(0.9, ge=0, description="Popularity skew of shared objects.")
    size: ObjectSize = Field(default_factory=ObjectSize, description="Object size distribution.")
    shared_kinds: dict[Kind, Share] = Field(
        default_factory=lambda: {"prompt_segment": 1.0, "tool_schema": 1.0},
        min_length=1,
        description="Kinds of the shared objects and their relative shares, spread evenly "
        "over the popularity ranks.",
    )
    private_kinds: dict[Kind, Share] = Field(
        default_factory=lambda: {"prompt_segment": 1.0},
        min_length=1,
        description="Kinds of each session's private objects and their relative shares.",
    )
    kind_sizes: dict[Kind, ObjectSize] = Field(
        default_factory=dict,
        description="Size distributions of the kinds whose sizes differ from size, e.g. "
        "{tool_schema: {median: 2KiB, sigma: 0.5}}.",
    )
    private_dependency_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of each session's private objects made from its namespace's most "
        "popular shared object (a prompt built on the system prompt): they depend on it at the "
        "version they were made from, and change with it.",
    )

    @model_validator(mode="after")
    def _dependencies_need_shared(self) -> Objects:
        if self.private_dependency_share and not self.shared_per_namespace:
            raise ValueError("private_dependency_share needs shared objects (shared_per_namespace)")
        return self


class Arrivals(Section):
    path: FilePath = Field(
        description="A CSV or Parquet log with a row per arrival (e.g. Azure's LLM inference "
        "trace)."
    )
    column: str = Field(
        "TIMESTAMP", description="The column of arrival times: datetimes, or numbers in ms."
    )
    time_scale: float = Field(1.0, gt=0, description="Multiply arrival times by this.")


class Sessions(Section):
    rate_per_s: float = Field(2.0, gt=0, description="Session arrivals per second per host.")
    duration: Duration = Field(60_000.0, gt=0, description="Mean session length.")
    duration_cv: float = Field(
        0.5,
        ge=0,
        le=1e150,
        description="Coefficient of variation; 0: fixed length. At most 1e150, whose square "
        "(the lognormal's shape takes it) is still a float.",
    )
    arrivals: Arrivals | None = Field(
        None,
        description="Session starts at a trace's arrival times, hosts taking them in turn, "
        "instead of Poisson at rate_per_s.",
    )


class Operations(Section):
    rate_per_s: float = Field(1.0, gt=0, description="Operations per second per session.")
    shared_refs: int = Field(2, ge=0, description="Shared objects referenced per operation.")
    private_refs: int = Field(2, ge=0, description="Private objects referenced per operation.")
    max_in_flight: int = Field(
        4,
        ge=1,
        le=U16_MAX,
        description="Operations a session may have outstanding (SESSION_OPEN's "
        "max_in_flight_operations); 1: each waits for the previous reply (operations_waited "
        "counts those that waited).",
    )


class Invalidations(Section):
    rate_per_s: float = Field(
        0.0,
        ge=0,
        description="Content changes per object per second: shared objects (and a trace's) "
        "over the run, a session's own while the session runs.",
    )


TRACE_KEEPS = ("operations.max_in_flight", "invalidations.rate_per_s")
"""The synthetic workload's keys a trace's run takes too: its one session's operations in
flight at once (DES), and its objects' content changes."""


class Trace(Section):
    path: FilePath = Field(
        description="A Mooncake JSONL trace or a CSV/Parquet reference log; it replaces the "
        f"synthetic workload, of whose keys only {' and '.join(TRACE_KEEPS)} may be set with it."
    )
    format: Literal["auto", "mooncake", "csv", "parquet"] = Field(
        "auto", description="auto: by file extension (.jsonl is Mooncake)."
    )
    block_tokens: int = Field(
        512,
        gt=0,
        description="Tokens per Mooncake prefix block: the size the trace was cut in (a line's "
        "hash_ids must number input_length / block_tokens, rounded up).",
    )
    kv_bytes_per_token: Size = Field(
        327_680, gt=0, description="KV-cache bytes per token (320KiB: a 70B-class model)."
    )
    time_scale: float = Field(1.0, gt=0, description="Multiply trace times by this.")

    @property
    def read_as(self) -> str | None:
        """The format the trace is read in: ``format``, or for ``auto`` the one its file's
        extension names (None for another extension)."""
        if self.format != "auto":
            return self.format
        suffix = Path(self.path).suffix.lower()
        return {".jsonl": "mooncake", ".csv": "csv", ".parquet": "parquet"}.get(suffix)

    @model_validator(mode="after")
    def _block_fits_an_object(self) -> Trace:
        block = self.block_tokens * self.kv_bytes_per_token
        if block > U32_MAX:
            raise ValueError(
                f"a Mooncake block of block_tokens x kv_bytes_per_token = {block:,} bytes is "
                f"more than an object's {U32_MAX:,} (object_bytes is a u32)"
            )
        return self


class Workload(Section):
    sessions: Sessions = Field(default_factory=Sessions, description="Session arrivals and length.")
    operations: Operations = Field(
        default_factory=Operations, description="Operations per session."
    )
    objects: Objects = Field(default_factory=Objects, description="The objects sessions reference.")
    invalidations: Invalidations = Field(
        default_factory=Invalidations, description="Content changes that invalidate objects."
    )
    trace: Trace | None = Field(None, description="Drive the run from a trace instead.")

    @property
    def follows_a_log(self) -> bool:
        """Sessions start at an arrival log's times, or references follow a trace: the load
        is what the log makes it, with no steady level for the memory to settle to."""
        return self.trace is not None or self.sessions.arrivals is not None

    @model_validator(mode="after")
    def _keys_a_trace_replaces(self) -> Workload:
        """With a trace, the synthetic workload's keys set nothing (the trace gives the
        session, objects, sizes and references) but :data:`TRACE_KEEPS`: one set anyway would
        be silently ignored, so it is refused."""
        if self.trace is None:
            return self
        for key in _changed(self.model_dump(exclude={"trace"}), _synthetic_defaults()):
            if key not in TRACE_KEEPS:
                raise ValueError(
                    f"{key} is the synthetic workload's, which the trace replaces: leave it "
                    "out, or drop workload.trace"
                )
        return self


@functools.cache
def _synthetic_defaults() -> dict[str, Any]:
    return Workload().model_dump(exclude={"trace"})


def _changed(values: dict[str, Any], defaults: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted keys whose ``values`` differ from ``defaults``, into sections both have
    (``objects.size.sigma``; a mapping such as ``kind_sizes`` is one key)."""
    changed = []
    for name, value in values.items():
        default = defaults[name]
        if isinstance(value, dict) and isinstance(default, dict) and value.keys() == default.keys():
            changed += _changed(value, default, f"{prefix}{name}.")
        elif value != default:
            changed.append(f"{prefix}{name}")
    return changed


class HostPolicy(Section):
    name: Literal["best_practice", "connection_scope", "always", "never", "threshold"] = Field(
        "best_practice", description="Host cache policy (never: inline everything, the baseline)."
    )
    ttl_fraction: float = Field(
        0.75, gt=0, le=10, description="lease_ttl_hint as a fraction of the expected session."
    )
    ttl_hint: WireMs | None = Field(
        None,
        ge=0,
        le=U32_MAX,
        description="A fixed lease_ttl_hint (whole ms) instead of the fraction; 0s: none (0, "
        "unspecified), the server grants its default_lease_ttl.",
    )
    min_object_size: Size = Field(
        1024, ge=0, description="threshold: cache only larger objects (others fix it)."
    )
    min_reuse: float = Field(
        2.0, ge=0, description="threshold: cache only objects reused more often (others fix it)."
    )
    renew_margin: float = Field(
        0.2, ge=0, le=1, description="Renew when this fraction of the TTL remains (1: every use)."
    )
    renewal_body: bool = Field(True, description="Renewal resends the body (no renew bit exists).")
    inline_after_invalidate: bool = Field(
        True,
        description="After CACHE_INVALIDATE inline once, then reinstall; false: reinstall at "
        "once (threshold, always; best_practice and connection_scope keep the spec's rule).",
    )
    connection_ttl: WireMs | None = Field(
        None,
        gt=0,
        le=U32_MAX,
        description="TTL (whole ms) asked for connection-owned (shared) objects, their reuse then "
        "counted across the connection; null: the session's (connection_scope: 10min).",
    )
    refused_put_backoff: Duration = Field(
        0.0,
        ge=0,
        description="After a CACHE_ACK refuses room, inline the object without another "
        "CACHE_PUT for this long (0: try again at its next use).",
    )

    @model_validator(mode="after")
    def _keys_the_policy_fixes(self) -> HostPolicy:
        """A key the named policy overrides would be silently ignored: refuse it instead."""
        for key in POLICY_FIXES.get(self.name, ()):
            if getattr(self, key) != HostPolicy.model_fields[key].default:
                raise ValueError(
                    f"{self.name} fixes {key} (the spec's rules); use name: threshold to set "
                    f"it (sweeping host_policy.name, pair each name with a value of {key} in "
                    f"sweep.zip, for {self.name} its default)"
                )
        return self


POLICY_FIXES = {
    "best_practice": ("min_object_size", "min_reuse", "inline_after_invalidate"),
    "connection_scope": ("min_object_size", "min_reuse", "inline_after_invalidate"),
    "always": ("min_object_size", "min_reuse"),
}
"""The host_policy keys each policy sets itself (see ``nnrpsim.model.policies``)."""


class Faults(Section):
    restart_at: Duration | None = Field(None, ge=0, description="Server 0 drops its cache then.")
    announce_restart: bool = Field(True, description="Send CACHE_INVALIDATE on restart.")
    memory_pressure_at: Duration | None = Field(None, ge=0, description="Server 0 budget shrinks.")
    memory_pressure_fraction: float = Field(0.5, gt=0, le=1, description="Budget kept.")


_NOT_SWEPT = {
    "study.name": "(a study writes one results folder): sweep the study's other keys one by one",
    "study.description": "(no run reads it: its points would be the same runs, named apart)",
    "sweep": (
        "(a point is one run's scenario, whose sweep no run reads: its points would be the "
        "same runs, named apart): sweep the keys themselves"
    ),
}
"""The keys a sweep leaves alone, and why: their values make no run differ, or no study."""


class Sweep(Section):
    grid: dict[str, list] = Field(
        default_factory=dict,
        description=f"Cartesian product of values (with zip's, {MAX_POINTS:,} points at most).",
    )
    zip: dict[str, list] = Field(default_factory=dict, description="Paired lists of equal length.")

    @model_validator(mode="after")
    def _well_formed(self) -> Sweep:
        """Each list has values, zip's are as long, the study's name is not swept (its folder
        is the base's), nor what no run reads (the description, the sweep itself), and no key
        is swept twice: in grid and zip, or within a section swept whole (its value would hide
        the other's, silently)."""
        for kind in ("grid", "zip"):
            for key, values in getattr(self, kind).items():
                if not values:
                    raise ValueError(f"{kind}.{key} must list at least one value")
        if len({len(v) for v in self.zip.values()}) > 1:
            lengths = ", ".join(f"{key} {len(values)}" for key, values in self.zip.items())
            raise ValueError(f"zip lists must have equal lengths, where they have {lengths}")
        if not self.grid and not self.zip:
            raise ValueError("sweep is empty: give grid or zip keys, or leave sweep out")
        lists = [len(v) for v in self.grid.values()] + [len(v) for v in self.zip.values()][:1]
        if (points := math.prod(lists)) > MAX_POINTS:
            made = " x ".join(f"{n:,}" for n in lists)
            raise ValueError(
                f"its lists ({made} values) make {points:,} sweep points, more than a study "
                f"holds ({MAX_POINTS:,}, each a scenario checked and kept in memory): split it "
                "into studies"
            )
        swept = [*self.grid, *self.zip]
        for key, (fixed, why) in itertools.product(swept, _NOT_SWEPT.items()):
            whole = fixed.startswith(f"{key}.")  # (its section swept whole: name the key)
            if key == fixed or key.startswith(f"{fixed}.") or whole:
                raise ValueError(f"{fixed if whole else key} cannot be swept {why}")
        both = sorted(self.zip.keys() & self.grid.keys())
        if both:
            raise ValueError(f"{both[0]} is swept in both grid and zip: one would hide the other")
        for key, within in itertools.product(swept, swept):
            if within.startswith(f"{key}."):
                raise ValueError(
                    f"{within} is swept within {key}, also swept: one would hide the other"
                )
        return self


class Scenario(Section):
    study: Study = Field(default_factory=Study, description="Name, seed, replications, duration.")
    engine: Literal["des", "vector"] = Field(
        "des", description="des: the SimPy model; vector: the engine's replay (no network timing)."
    )
    topology: Topology = Field(default_factory=Topology, description="Hosts, servers, links, GPU.")
    workload: Workload = Field(default_factory=Workload, description="What the hosts do.")
    host_policy: HostPolicy = Field(default_factory=HostPolicy, description="How hosts cache.")
    faults: Faults = Field(default_factory=Faults, description="Faults to inject.")
    sweep: Sweep | None = Field(None, description="Parameters to vary across runs.")

    @model_validator(mode="after")
    def _what_vector_replays(self) -> Scenario:
        """What the vector engine cannot replay is refused there, not ignored."""
        if self.engine != "vector":
            return self
        why = {
            "topology.hosts above 1": (
                self.topology.hosts > 1,
                "replays one host's view of its leases (each DES host puts what it holds no "
                "lease of itself)",
            ),
            "topology.link.loss": (
                self.topology.link.loss > 0,
                "has no network, so no resent bytes",
            ),
            "faults.restart_at": (self.faults.restart_at is not None, "injects no faults"),
            "faults.memory_pressure_at": (
                self.faults.memory_pressure_at is not None,
                "injects no faults",
            ),
        }
        for key, (refused, reason) in why.items():
            if refused:
                raise ValueError(f"{key} needs engine des: the vector engine {reason}")
        return self
