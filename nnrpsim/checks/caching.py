"""Settings under which the caching studied reaches next to nothing: a policy whose thresholds
pass almost no object, servers that cache none of the workload's kinds, a size limit most
objects exceed, kind sizes no object takes, a trace whose objects come in several sizes."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from ..display_units import counted, figures, percent, scenario_text
from ..inert_keys import NO_KIND_CACHED, WORKLOAD_KINDS, unused_kind_sizes, within, workload_kinds
from ..model.policies import CachePolicy, make_policy
from ..model.policy_reach import PolicyReach, references_larger_share
from ..run_config import model_config
from ..scenario import Point, Scenario
from ..traces import load_trace, resized_objects
from ..workload_facts import scenario_reach
from .wording import span_text, warnings_by_text


def uncached_kinds_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of caching ``points`` (of ``of_points``) whose servers cache no
    kind their workload's objects are of (:data:`nnrpsim.inert_keys.NO_KIND_CACHED`): every
    body goes inline, as under ``never``, whatever the other caching keys say. Not where a
    key the rule reads is swept: a point that caches nothing may be the grid's baseline."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario = point.scenario
        if (
            scenario.host_policy.name == "never"
            or any(within(key, point.params) for key in NO_KIND_CACHED.controls)
            or not NO_KIND_CACHED.holds(scenario)
        ):
            continue
        cached = scenario_text("topology.object_kinds", scenario.topology.object_kinds)
        text = (
            f"topology.object_kinds is {cached}, which holds none of the kinds of the "
            f"workload's objects ({_kinds_text(scenario)}): every body goes inline, as under "
            "policy never"
        )
        found.append((text, point.index))
    return warnings_by_text(found, of_points)


UNCACHED_SHARE = 0.01
"""A policy whose thresholds cache the objects of fewer references than this is named."""


REACH_KEYS = (
    "topology.hosts",
    "workload.sessions",
    "workload.operations",
    "workload.objects",
    "host_policy.name",
    "host_policy.min_object_size",
    "host_policy.min_reuse",
    "host_policy.connection_ttl",
    "workload.trace",
)
"""The keys (and sections) that set which objects a policy's thresholds pass."""


def policy_reach_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose host policy's size and
    reuse thresholds pass the objects of fewer than :data:`UNCACHED_SHARE` of a synthetic
    workload's references (:func:`nnrpsim.model.policy_reach.policy_reach`, in closed form):
    its TTL, renewal and memory keys have next to no say there, and a hit rate near zero is
    the thresholds' verdict on the workload. A trace's objects are all expected to be reused
    (its one session spans it): there the least size alone decides, counted over the trace's
    references in the run (a log whose sizes are in KiB, not bytes, say). Not where a key of
    :data:`REACH_KEYS` is swept (a point that caches nothing may be the grid's point), nor for
    ``never``."""
    found = [(text, point.index) for point in points if (text := reach_warning(point))]
    return warnings_by_text(found, of_points)


def reach_warning(point: Point) -> str | None:
    """:func:`policy_reach_advice`'s text for ``point``, or None where it says nothing."""
    scenario = point.scenario
    if scenario.host_policy.name == "never" or _sweeps(point, REACH_KEYS):
        return None
    config = model_config(scenario)
    policy = make_policy(config.policy)
    if scenario.workload.trace is not None:
        larger = _larger_share(scenario)(policy.min_object_bytes)
        return _trace_reach_text(scenario, policy, larger) if larger < UNCACHED_SHARE else None
    reach = scenario_reach(scenario, config)
    return _reach_text(scenario, policy, reach) if reach.cached_share < UNCACHED_SHARE else None


def _sweeps(point: Point, keys: tuple[str, ...]) -> bool:
    """Whether ``point``'s grid sweeps one of ``keys``, a key within one, or a section
    holding one."""
    return any(within(param, keys) for param in point.params) or any(
        within(key, point.params) for key in keys
    )


def _trace_reach_text(scenario: Scenario, policy: CachePolicy, larger: float) -> str:
    least = scenario_text("host_policy.min_object_size", policy.min_object_bytes)
    return (
        f"host_policy.name is {scenario.host_policy.name}, which caches objects larger than "
        f"{least}: those of {percent(larger)} of the trace's references in the run, so its "
        "TTL, renewal and memory keys have next to no say and its hit rate is near 0"
    )


def _reach_text(scenario: Scenario, policy: CachePolicy, reach: PolicyReach) -> str:
    least = scenario_text("host_policy.min_object_size", policy.min_object_bytes)
    uses = []
    if not math.isnan(reach.private_reuse):
        uses.append(f"a private object {figures(reach.private_reuse, 2)} times")
    if not math.isnan(reach.top_shared_reuse):
        lasting = " while its connection lease lasts" if policy.connection_ttl_ms else ""
        top = figures(reach.top_shared_reuse, 2)
        uses.append(f"the most popular shared one {top} times{lasting}")
    return (
        f"host_policy.name is {scenario.host_policy.name}, which caches objects larger than "
        f"{least} expected to be used more than {policy.min_expected_reuse:g} times in their "
        f"session: those of {percent(reach.cached_share)} of the references here "
        f"({percent(reach.large_enough_share)} are to objects larger than {least}; "
        f"a session of the mean length, {span_text(scenario.workload.sessions.duration)}, "
        f"uses {' and '.join(uses)}), so its TTL, renewal and memory keys have next to no say "
        "and its hit rate is near 0"
    )


LIMITED_SHARE = 0.5
"""A server size limit that the objects of this share of the references exceed is named."""


SIZE_KEYS = (
    "topology.max_object_bytes",
    "topology.gpu_memory",
    "workload.objects",
    "workload.trace",
)
"""The keys (and sections) that set the objects' sizes and the server's limits on them."""


def size_limit_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of caching ``points`` (of ``of_points``) where most references
    (:data:`LIMITED_SHARE`) are to objects larger than the server's ``max_object_bytes``,
    which the hosts inline without a CACHE_PUT (the handshake's ceiling), or than its whole
    ``gpu_memory``, for which it refuses room: a hit rate near zero that is the limit's, most
    likely a unit written wrong. In closed form for a synthetic workload, counted for a
    trace's references in the run. Not where a key of :data:`SIZE_KEYS` is swept (the
    grid's point), nor where the servers cache no kind of the workload's (named alone)."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario, topology = point.scenario, point.scenario.topology
        if (
            scenario.host_policy.name == "never"
            or _sweeps(point, SIZE_KEYS)
            or NO_KIND_CACHED.holds(scenario)
        ):
            continue
        larger = _larger_share(scenario)
        ceiling, budget = topology.max_object_bytes, topology.gpu_memory
        if (above := larger(ceiling)) >= LIMITED_SHARE:
            said = scenario_text("topology.max_object_bytes", ceiling)
            text = (
                f"topology.max_object_bytes is {said}: {percent(above)} of the references are "
                "to larger objects, which the hosts inline without a CACHE_PUT"
            )
            found.append((text, point.index))
        beyond = 0.0 if budget is None else larger(budget) - larger(max(budget, ceiling))
        if beyond >= LIMITED_SHARE:
            text = (
                f"topology.gpu_memory is {scenario_text('topology.gpu_memory', budget)}: "
                f"{percent(beyond)} of the references are to objects larger than a server's "
                "whole budget, for which it refuses room"
            )
            found.append((text, point.index))
    return warnings_by_text(found, of_points)


def _larger_share(scenario: Scenario) -> Callable[[int], float]:
    """The share of a scenario's references made to objects larger than a size: a trace's
    in the run, counted; a synthetic workload's in closed form."""
    if (trace := scenario.workload.trace) is not None:
        sizes = load_trace(trace).before(int(scenario.study.duration)).size
        return lambda size: float((sizes > size).mean())
    workload = model_config(scenario).workload
    return lambda size: references_larger_share(workload, size)


def kind_sizes_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose ``kind_sizes`` sizes a
    kind no object of their workload is of (:func:`nnrpsim.inert_keys.unused_kind_sizes`):
    that size changes nothing, most likely a kind left out of ``shared_kinds`` or
    ``private_kinds``. Not where a key that sets the workload's kinds is swept: the grid may
    draw the kind elsewhere."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        if any(within(key, point.params) for key in WORKLOAD_KINDS):
            continue
        if unused := unused_kind_sizes(point.scenario):
            sizes = "that size changes" if len(unused) == 1 else "those sizes change"
            text = (
                f"workload.objects.kind_sizes sizes {', '.join(unused)}, which no object of "
                f"the workload is (its kinds: {_kinds_text(point.scenario)}): {sizes} nothing"
            )
            found.append((text, point.index))
    return warnings_by_text(found, of_points)


def _kinds_text(scenario: Scenario) -> str:
    """The kinds of a scenario's objects, as a warning lists them."""
    return ", ".join(sorted(workload_kinds(scenario))) or "none"


def trace_sizes_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each trace the ``points`` (of ``of_points``) replay that references an
    object with several sizes: each replays at its largest, every reference of it, so a log
    that keeps one name for an object's versions (or for parts of it) has its bytes
    overstated, and the cache's memory, without a word."""
    found: list[tuple[str, int]] = []
    for point in points:
        if (spec := point.scenario.workload.trace) is not None and (n := resized_objects(spec)):
            trace = load_trace(spec)
            found.append(
                (
                    f"{n:,} of the {counted(trace.n_objects, 'object')} of "
                    f"{Path(spec.path).name} {'is' if n == 1 else 'are'} referenced with "
                    "several sizes: every reference to one replays at its largest (an object "
                    "has one size here: where a new version changes it, name each version an "
                    "object of its own)",
                    point.index,
                )
            )
    return warnings_by_text(found, of_points)
