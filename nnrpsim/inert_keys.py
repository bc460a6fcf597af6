"""Which scenario keys change nothing under which other settings: a fault's detail without
its fault, a policy's TTL under ``never``, a link's resend timer on a link that loses
nothing. A value set there is silently unused; ``nnrpsim validate`` and a study's warnings
name it (:mod:`nnrpsim.checks`). Each rule is checked by a run in
``tests/study/test_inert_keys.py``: its keys, swept where it holds, move no number."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass

from .protocol import CacheObjectKind
from .scenario import Scenario
from .scenario.schema import HostPolicy


def ends_leases_but_by_eviction(scenario: Scenario) -> bool:
    """Whether something but an eviction ends leases under their hosts in ``scenario``, with
    a CACHE_INVALIDATE that the inline-once rule acts on: content changes, or a restart the
    hosts are told of."""
    faults = scenario.faults
    restart_told = faults.restart_at is not None and faults.announce_restart
    return bool(scenario.workload.invalidations.rate_per_s or restart_told)


@dataclass(frozen=True)
class InertRule:
    """``keys`` change nothing in a scenario for which ``holds``, as ``reason`` says;
    ``controls`` are the keys ``holds`` reads. ``names_fixed``: whether a key set, not swept,
    is worth a word (a baseline run of a file with ``--set host_policy.name=never`` keeps the
    file's caching settings on purpose). ``in_help``: whether ``nnrpsim keys`` gives the
    reason in each key's help (not a second way of caching nothing beside ``never``'s)."""

    keys: tuple[str, ...]
    controls: tuple[str, ...]
    holds: Callable[[Scenario], bool]
    reason: str
    names_fixed: bool = True
    in_help: bool = True


UNTIMED_ON_VECTOR = (
    "topology.link",
    "topology.link.latency",
    "topology.link.bandwidth",
    "topology.link.retransmit_timeout",
    "topology.per_operation_cost",
    "topology.per_inline_byte_cost",
    "topology.per_put_byte_cost",
    "topology.server_workers",
    "workload.operations.max_in_flight",
)
"""Keys of the network's, the servers' and the sessions' timing (a session's operations
outstanding at once): the vector engine has none (a link's loss it refuses). A server's
expiry sweep it has: it holds the leases run out until the sweep frees them, as the DES."""

NEVER_IGNORES = (
    *(f"host_policy.{key}" for key in HostPolicy.model_fields if key != "name"),
    "topology.gpu_memory",
    "topology.eviction",
    "topology.max_cache_entries",
    "topology.max_object_bytes",
    "topology.object_kinds",
    "topology.ttl_floor",
    "topology.ttl_ceiling",
    "topology.default_lease_ttl",
    "topology.renewal",
    "topology.dependency_cascade",
    "topology.per_put_byte_cost",
    "faults.announce_restart",
    "faults.memory_pressure_fraction",
    "workload.invalidations.rate_per_s",
)
"""Every host_policy key but the name, and the keys of what servers cache: ``never`` inlines
everything, putting nothing (a restart drops an empty cache, a content change reaches the
next body inlined anyway). Not the faults' times: the first ends the span in which
``memory_settled_s`` is judged."""


def references_shared(scenario: Scenario) -> bool:
    """Whether a synthetic workload references shared objects: by its operations, or as the
    sources its private objects are made from (the only objects a connection owns)."""
    objects = scenario.workload.objects
    return bool(objects.shared_per_namespace) and bool(
        scenario.workload.operations.shared_refs or objects.private_dependency_share
    )


def workload_kinds(scenario: Scenario) -> set[str]:
    """The kinds of the objects ``scenario``'s operations reference, by name: a trace's (its
    ``kind`` column, else prompt segments), or a synthetic workload's shared kinds where shared
    objects are referenced (or made from) and private kinds where private ones are; where a
    namespace has fewer objects than kinds, some may not be drawn."""
    workload = scenario.workload
    if workload.trace is not None:
        from .traces import load_trace  # (pandas: not for ``nnrpsim keys``)

        codes = load_trace(workload.trace).object_kind
        if codes is None:
            return {CacheObjectKind.PROMPT_SEGMENT.name.lower()}
        return {CacheObjectKind(int(code)).name.lower() for code in set(codes.tolist())}
    objects, operations = workload.objects, workload.operations
    kinds: set[str] = set()
    if references_shared(scenario):
        kinds.update(objects.shared_kinds)
    if objects.private_per_session and operations.private_refs:
        kinds.update(objects.private_kinds)
    return kinds


WORKLOAD_KINDS = (
    "workload.trace",
    "workload.objects.shared_kinds",
    "workload.objects.private_kinds",
    "workload.objects.shared_per_namespace",
    "workload.objects.private_per_session",
    "workload.objects.private_dependency_share",
    "workload.operations.shared_refs",
    "workload.operations.private_refs",
)
"""The keys :func:`workload_kinds` reads."""

NO_KIND_CACHED = InertRule(
    tuple(key for key in NEVER_IGNORES if key != "topology.object_kinds"),
    ("topology.object_kinds", *WORKLOAD_KINDS),
    lambda s: bool(kinds := workload_kinds(s)) and not kinds & set(s.topology.object_kinds),
    "topology.object_kinds holds none of the kinds of the workload's objects, so every body "
    "goes inline",
    names_fixed=False,
    in_help=False,
)
"""The servers cache no kind the workload's objects are of: the hosts inline every body, as
under ``never``. A fixed case is named once, by the kinds
(:func:`nnrpsim.checks.caching.uncached_kinds_advice`), not by each caching key set."""


def unused_kind_sizes(scenario: Scenario) -> list[str]:
    """The kinds ``workload.objects.kind_sizes`` sizes that no object the workload references
    is of (a synthetic workload's: a trace gives its own sizes)."""
    kinds = workload_kinds(scenario)
    return [kind for kind in scenario.workload.objects.kind_sizes if kind not in kinds]


INERT_RULES = (
    InertRule(
        UNTIMED_ON_VECTOR,
        ("engine",),
        lambda s: s.engine == "vector",
        "the vector engine has no network, processing or session timing",
    ),
    InertRule(
        ("host_policy.ttl_fraction",),
        ("host_policy.ttl_hint",),
        lambda s: s.host_policy.ttl_hint is not None,
        "host_policy.ttl_hint is set, and a fixed hint replaces the fraction",
    ),
    InertRule(
        NEVER_IGNORES,
        ("host_policy.name",),
        lambda s: s.host_policy.name == "never",
        "host_policy.name is never, which inlines everything",
        names_fixed=False,
    ),
    NO_KIND_CACHED,
    InertRule(
        ("topology.default_lease_ttl",),
        ("host_policy.ttl_hint",),
        lambda s: s.host_policy.ttl_hint != 0,
        "host_policy.ttl_hint is not 0s, so every SESSION_OPEN carries a hint and the server's "
        "default is never asked for",
    ),
    InertRule(
        ("faults.announce_restart",),
        ("faults.restart_at",),
        lambda s: s.faults.restart_at is None,
        "faults.restart_at is null (no restart)",
    ),
    InertRule(
        ("faults.memory_pressure_fraction",),
        ("faults.memory_pressure_at",),
        lambda s: s.faults.memory_pressure_at is None,
        "faults.memory_pressure_at is null (no memory pressure)",
    ),
    InertRule(
        ("faults.memory_pressure_at", "faults.memory_pressure_fraction"),
        ("topology.gpu_memory",),
        lambda s: s.topology.gpu_memory is None,
        "topology.gpu_memory is null (unlimited), and so is any fraction of it",
    ),
    InertRule(
        ("topology.eviction", "host_policy.refused_put_backoff"),
        ("topology.gpu_memory", "topology.max_cache_entries"),
        lambda s: s.topology.gpu_memory is None and s.topology.max_cache_entries == 0,
        "topology.gpu_memory is null (unlimited) and max_cache_entries 0 (none), so nothing is "
        "ever evicted or refused room",
    ),
    InertRule(
        ("host_policy.inline_after_invalidate",),
        (
            "topology.gpu_memory",
            "topology.max_cache_entries",
            "workload.invalidations.rate_per_s",
            "faults.restart_at",
            "faults.announce_restart",
        ),
        lambda s: (
            s.topology.gpu_memory is None
            and s.topology.max_cache_entries == 0
            and not ends_leases_but_by_eviction(s)
        ),
        "no server ends a lease under its host: topology.gpu_memory is null (unlimited), "
        "max_cache_entries 0, workload.invalidations.rate_per_s 0 and no restart is announced",
    ),
    InertRule(
        ("topology.routing",),
        ("topology.servers",),
        lambda s: s.topology.servers == 1,
        "topology.servers is 1 (nothing to route between)",
    ),
    InertRule(
        ("host_policy.renewal_body",),
        ("host_policy.renew_margin",),
        lambda s: s.host_policy.renew_margin == 0,
        "host_policy.renew_margin is 0 (no lease is renewed)",
    ),
    InertRule(
        ("topology.renewal",),
        ("host_policy.renew_margin", "topology.hosts"),
        lambda s: s.host_policy.renew_margin == 0 and s.topology.hosts == 1,
        "host_policy.renew_margin is 0 and topology.hosts 1 (no lease is renewed: a host "
        "puts what it holds no lease of)",
    ),
    InertRule(
        ("topology.hosts",),
        ("workload.trace",),
        lambda s: s.workload.trace is not None,
        "workload.trace is set, and a trace is one host's one session: the other hosts open none",
    ),
    InertRule(
        ("topology.dependency_cascade",),
        ("workload.objects.private_dependency_share",),
        lambda s: s.workload.objects.private_dependency_share == 0,
        "workload.objects.private_dependency_share is 0 (no object is made from another)",
    ),
    InertRule(
        ("topology.dependency_cascade",),
        ("workload.invalidations.rate_per_s",),
        lambda s: s.workload.invalidations.rate_per_s == 0,
        "workload.invalidations.rate_per_s is 0 (no content changes)",
    ),
    InertRule(
        ("workload.sessions.rate_per_s",),
        ("workload.sessions.arrivals",),
        lambda s: s.workload.sessions.arrivals is not None,
        "workload.sessions.arrivals is set (sessions start at its times)",
    ),
    InertRule(
        (
            "workload.objects.zipf_alpha",
            "workload.objects.shared_kinds",
            "workload.objects.namespaces",
            "workload.operations.shared_refs",
        ),
        ("workload.objects.shared_per_namespace",),
        lambda s: s.workload.objects.shared_per_namespace == 0,
        "workload.objects.shared_per_namespace is 0 (no shared objects)",
    ),
    InertRule(
        ("workload.objects.zipf_alpha",),
        ("workload.operations.shared_refs",),
        lambda s: s.workload.operations.shared_refs == 0,
        "workload.operations.shared_refs is 0 (no operation draws a shared object by its "
        "popularity)",
    ),
    InertRule(
        ("workload.objects.shared_kinds",),
        ("workload.operations.shared_refs", "workload.objects.private_dependency_share"),
        lambda s: (
            s.workload.operations.shared_refs == 0
            and s.workload.objects.private_dependency_share == 0
        ),
        "workload.operations.shared_refs and objects.private_dependency_share are 0 (no "
        "shared object is referenced)",
    ),
    InertRule(
        (
            "workload.objects.private_kinds",
            "workload.objects.private_dependency_share",
            "workload.operations.private_refs",
        ),
        ("workload.objects.private_per_session",),
        lambda s: s.workload.objects.private_per_session == 0,
        "workload.objects.private_per_session is 0 (no private objects)",
    ),
    InertRule(
        ("workload.objects.private_kinds", "workload.objects.private_dependency_share"),
        ("workload.operations.private_refs",),
        lambda s: s.workload.operations.private_refs == 0,
        "workload.operations.private_refs is 0 (no operation references a private object)",
    ),
    InertRule(
        ("host_policy.connection_ttl",),
        (
            "workload.trace",
            "workload.objects.shared_per_namespace",
            "workload.operations.shared_refs",
            "workload.objects.private_dependency_share",
        ),
        lambda s: s.workload.trace is not None or not references_shared(s),
        "no object the workload references is owned by a connection: only shared objects are "
        "(a trace's objects are its one session's)",
    ),
    InertRule(
        ("workload.objects.size", "workload.objects.size.median", "workload.objects.size.sigma"),
        ("workload.objects.kind_sizes", *WORKLOAD_KINDS),
        lambda s: bool(kinds := workload_kinds(s)) and kinds <= set(s.workload.objects.kind_sizes),
        "workload.objects.kind_sizes sizes every kind of the workload's objects",
    ),
    InertRule(
        ("workload.trace.block_tokens", "workload.trace.kv_bytes_per_token"),
        ("workload.trace", "workload.trace.path", "workload.trace.format"),
        lambda s: s.workload.trace is not None and s.workload.trace.read_as != "mooncake",
        "workload.trace is a reference log, whose rows give their sizes (a Mooncake trace's "
        "blocks are sized by these)",
    ),
    InertRule(
        ("topology.link.retransmit_timeout",),
        ("topology.link.loss",),
        lambda s: s.topology.link.loss == 0,
        "topology.link.loss is 0 (nothing is resent)",
    ),
)
"""The first rule that holds for a key (and is worth a word, :func:`inert_reason`) gives its
reason."""

INERT_KEYS = tuple(dict.fromkeys(key for rule in INERT_RULES for key in rule.keys))
"""Every key some rule names, once."""


def within(key: str, params: Collection[str]) -> bool:
    """Whether ``key`` is one of the swept ``params`` or lies in a section swept whole."""
    return _within(key, tuple(params))


@functools.cache
def _within(key: str, params: tuple[str, ...]) -> bool:
    """:func:`within`, kept: the checks ask it of each point for each key they judge, and a
    sweep's points share their swept keys (about 1 us a question; a validate of 100,000
    points asked 2.9 million: 2.4 s)."""
    return any(f"{key}.".startswith(f"{param}.") for param in params)


def inert_in(scenario: Scenario, key: str) -> bool:
    """Whether a rule gives ``key`` no say in ``scenario``, whether or not a word is due."""
    return any(key in rule.keys and rule.holds(scenario) for rule in INERT_RULES)


def inert_reason(scenario: Scenario, key: str, swept: Collection[str]) -> str | None:
    """Why ``key`` changes nothing in ``scenario``, whose sweep sets the ``swept`` keys, or
    None when it may change something or a word would be noise: where a key a rule reads is
    swept, the grid meant it (a never baseline beside caching policies across a memory
    sweep, a restart swept over null and a time), as the check after a run judges a key by
    the points where it could move the numbers
    (:func:`nnrpsim.checks.keys.unmoved_key_warnings`)."""
    fixed = not within(key, swept)
    for rule in INERT_RULES:
        if key not in rule.keys or not rule.holds(scenario) or (fixed and not rule.names_fixed):
            continue
        if not any(within(control, swept) for control in rule.controls):
            return rule.reason
    return None
