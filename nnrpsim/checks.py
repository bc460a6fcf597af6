"""What a study must tell its reader beside its figures: runs that failed, rules the model
broke or load it could not keep up with, a warm-up too short for its memory's climb, and
settings that change nothing or not what they say (a key another setting makes inert, a
fault out of sight, a TTL the server replaces, a policy whose thresholds cache next to
nothing, a size limit most objects exceed). ``nnrpsim run`` prints these lines on
stderr, and :class:`nnrpsim.study.StudyResult` keeps them; ``nnrpsim validate`` (and
``records``, for its point) gives those of a study's setup before anything runs."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
import pandas as pd

from .display_units import (
    below_one,
    counted,
    figures,
    key_scale,
    percent,
    points_text,
    scenario_text,
)
from .inert_keys import (
    INERT_KEYS,
    NEVER_IGNORES,
    NO_KIND_CACHED,
    WORKLOAD_KINDS,
    ends_leases_but_by_eviction,
    inert_in,
    inert_reason,
    unused_kind_sizes,
    within,
    workload_kinds,
)
from .metrics import METRICS
from .model.policies import CachePolicy, make_policy
from .model.policy_reach import PolicyReach, references_larger_share
from .model.workload_means import (
    LEVEL,
    least_warmup_ms,
    measured_ramp,
    sessions_shorter_share,
    workload_means,
)
from .protocol.packet import inline_object_bytes
from .results import swept_columns
from .runner import model_config
from .scenario import Point, Scenario
from .scenario.loader import dotted
from .scenario.schema import SHORT_KEYS, Arrivals, Sessions, Study, Topology, Trace, describe
from .traces import load_arrivals, load_trace, resized_objects, scenario_reach, sessions_per_s
from .warmup import climb_warning


class StudyWarning(UserWarning):
    """A line of :func:`study_warnings`, as ``nnrpsim.sweep`` gives it to a notebook."""


def study_warnings(
    points: list[Point], runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame
) -> list[str]:
    """Every warning the runs of a sweep's ``points`` call for. A warm-up is judged on the
    DES's samples of the memory held; the vector engine has none, and its points are judged
    by the closed form that ``nnrpsim validate`` applies."""
    vector = [point for point in points if point.scenario.engine == "vector"]
    # (a swept key a rule gives no say at every point is named with the rule's reason, not
    # found again by its numbers)
    explained = {
        key
        for key in (points[0].params if points else ())
        if all(inert_reason(point.scenario, key, point.params) for point in points)
    }
    # (nor a caching key swept where a policy caching next to nothing is named at every point)
    if points and all(_reach_warning(point) for point in points):
        explained |= set(NEVER_IGNORES) & set(points[0].params)
    return [
        *violation_warnings(summary),
        *uncached_kinds_advice(points, len(points)),
        *policy_reach_advice(points, len(points)),
        *size_limit_advice(points, len(points)),
        *ignored_key_advice(points, len(points)),
        *unmoved_key_warnings(summary, explained),
        *warmup_warnings(points, series),
        *warmup_advice(vector, len(points)),
        *inert_key_advice(points, len(points)),
        *kind_sizes_advice(points, len(points)),
        *fault_time_advice(points, len(points)),
        *ttl_bound_advice(points, len(points)),
        *log_span_advice(points, len(points)),
        *trace_sizes_advice(points, len(points)),
        *sample_advice(points, len(points)),
        *idle_rule_warnings(points, runs),
        *failure_warnings(runs),
    ]


def _by_text(found: list[tuple[str, int]], of_points: int) -> list[str]:
    """One warning for each text found, naming the points (of ``of_points``) it holds for."""
    points: dict[str, list[int]] = {}
    for text, index in found:
        points.setdefault(text, []).append(index)
    return [f"warning: {_whose(indices, of_points)}: {text}" for text, indices in points.items()]


def _whose(indices: list[int], of_points: int) -> str:
    return "all points" if len(indices) == of_points else points_text(indices)


def warmup_warnings(points: list[Point], series: pd.DataFrame) -> list[str]:
    """A warning for each set of DES points that share their timing (warm-up, duration, first
    fault) under a steady load, whose memory, averaged over their runs, settles after the
    warm-up (:func:`nnrpsim.warmup.climb_warning`)."""
    if series.empty:
        return []
    timings: dict[tuple[float, float, float | None], list[int]] = {}
    for point in points:
        study = point.scenario.study
        if point.scenario.engine == "des" and not point.scenario.workload.follows_a_log:
            until = model_config(point.scenario).faults.first_at_ms
            timings.setdefault((study.warmup, study.duration, until), []).append(point.index)
    warnings = []
    for (warmup, _, until), indices in timings.items():
        part = series[series["point"].isin(indices)]
        whose = _whose(indices, len(points))
        warning = None if part.empty else climb_warning(part, warmup, until, whose)
        if warning:
            warnings.append(warning)
    return warnings


def warmup_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run (or for runs without samples): a warning for each set of ``points`` (of
    ``of_points`` in the sweep) whose sessions at once, averaged over the measured time, are
    more than 1 % below their steady number in closed form
    (:func:`nnrpsim.model.workload_means.measured_ramp`), with the least warm-up that keeps
    them within it. Points whose sessions follow a log are not judged."""
    timings: dict[tuple[float, float, float, float], list[int]] = {}
    for point in points:
        study, sessions = point.scenario.study, point.scenario.workload.sessions
        if not point.scenario.workload.follows_a_log:
            key = (study.warmup, study.duration, sessions.duration, sessions.duration_cv)
            timings.setdefault(key, []).append(point.index)
    warnings = []
    for (warmup, duration, mean, cv), indices in timings.items():
        seen = measured_ramp(warmup, duration, mean, cv)
        if seen >= LEVEL:
            continue
        least = least_warmup_ms(duration, mean, cv)
        remedy = (
            f"a warm-up of {math.ceil(least / 1e3):.0f} s or more keeps that within 1 %"
            if least is not None
            else f"no warm-up within this {duration / 1e3:g} s run does: lengthen study.duration"
        )
        warnings.append(
            f"warning: {_whose(indices, of_points)}: from the {warmup / 1e3:g} s warm-up to "
            f"the run's end ({duration / 1e3:g} s), the sessions at once average "
            f"{(1 - seen) * 100:.1f} % below their steady number (closed form), and the memory "
            f"held with them; {remedy}"
        )
    return warnings


_DEFAULTS = {key: default for key, default, _ in describe()}
"""Each scenario key's default (a trace's keys too)."""


def inert_key_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each key that ``points`` (of ``of_points``) set away from its default,
    without sweeping it, where another setting makes it change nothing
    (:func:`nnrpsim.inert_keys.inert_reason`): ``invalidation_sweep``'s 5 ms links run with
    ``--set engine=vector``, ``faults.announce_restart`` without a restart. A swept key,
    :func:`ignored_key_advice` names."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        values = point.scenario.model_dump()
        for key in INERT_KEYS:
            if key not in SHORT_KEYS:
                continue  # (a section: its keys are judged one by one)
            value = dotted(values, key)
            if within(key, point.params) or value == _DEFAULTS[key]:
                continue
            reason = inert_reason(point.scenario, key, point.params)
            if reason is not None:
                said = scenario_text(key, value)
                found.append(
                    (f"{key} is {said}, but {reason}: it changes nothing there", point.index)
                )
    return _by_text(found, of_points)


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
    return _by_text(found, of_points)


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
    found = [(text, point.index) for point in points if (text := _reach_warning(point))]
    return _by_text(found, of_points)


def _reach_warning(point: Point) -> str | None:
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
        f"a session of the mean length, {_duration(scenario.workload.sessions.duration)}, "
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
    return _by_text(found, of_points)


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
    return _by_text(found, of_points)


def _kinds_text(scenario: Scenario) -> str:
    """The kinds of a scenario's objects, as a warning lists them."""
    return ", ".join(sorted(workload_kinds(scenario))) or "none"


def ignored_key_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each swept key that some ``points`` (of ``of_points``) give no say,
    their own settings having fixed what it sets (:func:`nnrpsim.inert_keys.inert_reason`):
    before a run, and after it with the rule's reason where the numbers would say only that
    nothing moved (:func:`unmoved_key_warnings` finds the keys no rule knows)."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        for key in point.params:
            reason = inert_reason(point.scenario, key, point.params)
            if reason is not None:
                text = f"{key} is swept, but {reason}: its values change nothing there"
                found.append((text, point.index))
    return _by_text(found, of_points)


FAULTS = (("restart_at", "restart"), ("memory_pressure_at", "budget cut"))
"""The faults a scenario times (keys of ``faults``), and what each does."""


def fault_time_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each fault that ``points`` (of ``of_points``) time where a study cannot
    see it: after the runs' end, where it never happens (and the check after a run finds
    nothing moved only where it is swept beside null), at the end itself (the notices it sends
    at once and a run's last memory sample, at its end, are all that follows it), or within
    the warm-up, where
    what it does at first (the misses after a restart, the evictions of a budget cut) goes
    unmeasured and the measured time holds only its tail."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        study = point.scenario.study
        for name, fault in FAULTS:
            if (at := getattr(point.scenario.faults, name)) is None:
                continue
            said = f"faults.{name} is {scenario_text(f'faults.{name}', at)}"
            shift = "set it within study.duration"
            if at > study.duration:
                end = scenario_text("study.duration", study.duration)
                text = f"{said}, after the runs' end ({end}): no {fault} happens; {shift}"
            elif at == study.duration:
                seen = "the runs see only its notices, sent at once, and their last memory sample"
                text = f"{said}, the runs' end: of the {fault}, {seen}; {shift}"
            elif at < study.warmup:
                warmup = scenario_text("study.warmup", study.warmup)
                text = (
                    f"{said}, within the {warmup} warm-up: the runs measure only what follows "
                    f"the {fault} once the warm-up ends; set it after study.warmup"
                )
            else:
                continue
            found.append((text, point.index))
    return _by_text(found, of_points)


CLAMPED_SHARE = 0.5
"""The share of a point's sessions whose TTL hint the server's floor or ceiling replaces
before :func:`ttl_bound_advice` names it: most of them, so that the point runs mostly with
the bound's TTL, not the one its keys ask for."""


def ttl_bound_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each TTL that ``points`` (of ``of_points``) ask for where the server's
    ``ttl_floor`` or ``ttl_ceiling`` grants another: a fixed hint (or, for hint 0, the
    server's default) or ``connection_ttl`` beyond one, or a ``ttl_fraction`` whose hint lies
    beyond one for most sessions (:data:`CLAMPED_SHARE`; in closed form, a session's hint
    being the fraction of its length). Such a point runs with the bound's TTL, and a sweep of
    TTLs draws a flat stretch that is the bound's, not the workload's. A trace's one session
    asks for the fraction of the trace's window in the run. (Not judged: policy ``never``,
    which puts nothing.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        policy, topology = point.scenario.host_policy, point.scenario.topology
        if policy.name == "never":
            continue
        asks: list[tuple[str, float]] = []  # (what asks for a TTL, that TTL)
        if policy.connection_ttl is not None:
            asks.append(_asking("host_policy.connection_ttl", policy.connection_ttl))
        if policy.ttl_hint == 0:  # (none: the server's default)
            asks.append(_asking("topology.default_lease_ttl", topology.default_lease_ttl))
        elif policy.ttl_hint is not None:
            asks.append(_asking("host_policy.ttl_hint", policy.ttl_hint))
        elif (trace := point.scenario.workload.trace) is not None:
            # its one session's length: the trace's window in the run (as the runner cuts it)
            length = load_trace(trace).before(int(point.scenario.study.duration)).duration_ms
            hint = max(1, int(policy.ttl_fraction * length))
            asked = f"the trace's one session asks for {_duration(hint)}"
            asks.append((f"host_policy.ttl_fraction is {policy.ttl_fraction:g}: {asked}", hint))
        elif text := _fraction_beyond(
            policy.ttl_fraction, point.scenario.workload.sessions, topology
        ):
            found.append((text, point.index))
        for asked, ttl in asks:
            if not topology.ttl_floor <= ttl <= topology.ttl_ceiling:
                side, bound = (
                    ("below", "ttl_floor") if ttl < topology.ttl_floor else ("above", "ttl_ceiling")
                )
                found.append((f"{asked}, {side} {_granted(topology, bound)}", point.index))
    return _by_text(found, of_points)


def _asking(key: str, ttl: float) -> tuple[str, float]:
    """A key that asks for a fixed ``ttl``, as a warning names it, and that TTL."""
    return f"{key} is {scenario_text(key, ttl)}", ttl


def _fraction_beyond(fraction: float, sessions: Sessions, topology: Topology) -> str:
    """Where most sessions' hints, ``fraction`` of their lengths, lie below the server's TTL
    floor or above its ceiling: what the server grants them instead; "" where most lie
    within."""
    mean, cv = sessions.duration, sessions.duration_cv
    floor, ceiling = topology.ttl_floor / fraction, topology.ttl_ceiling / fraction  # lengths
    below = sessions_shorter_share(floor, mean, cv)
    above = 1.0 - sessions_shorter_share(ceiling, mean, cv)
    if max(below, above) < CLAMPED_SHARE:
        return ""
    share, which, less, bound = (
        (below, f"those shorter than {_duration(floor)}", "less", "ttl_floor")
        if below >= above
        else (above, f"those longer than {_duration(ceiling)}", "more", "ttl_ceiling")
    )
    asking = (
        "every session asks"
        if share == 1
        else f"{below_one(share)[1]} of the sessions ({which}) ask"
    )
    return (
        f"host_policy.ttl_fraction is {fraction:g}: {asking} for {less} than "
        f"{_granted(topology, bound)}"
    )


def _granted(topology: Topology, bound: str) -> str:
    """The server's TTL ``bound`` (``ttl_floor``, ``ttl_ceiling``) as what it grants."""
    value = scenario_text(f"topology.{bound}", getattr(topology, bound))
    return f"topology.{bound} ({value}), which the server grants instead"


def link_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run: a warning for each set of DES ``points`` (of ``of_points``) whose links
    could not carry every body inline: unless caching keeps enough of those bytes off, the
    links fall behind, and operations with them. A synthetic workload's bytes are its closed-
    form mean, spread evenly over the links from hosts to servers (as the routing spreads
    sessions); a trace's are those of its references within the run, over their span, on the
    one link its one session uses; a lossy link sends each again as often as it loses it, on
    average 1 / (1 - loss) times. (A frame's own bytes come on top: the load is at least
    this.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario = point.scenario
        if scenario.engine != "des":
            continue
        topology, trace = scenario.topology, scenario.workload.trace
        if trace is None:
            means = workload_means(model_config(scenario).workload, sessions_per_s(scenario))
            offered = means.inline_bytes_per_s / (topology.hosts * topology.servers)
            over = (
                f"each link from a host to a server ({topology.hosts} x {topology.servers}, "
                "sessions spread evenly)"
            )
        else:
            window = load_trace(trace).before(int(scenario.study.duration))
            span_s = (window.end_ms - window.start_ms) / 1e3
            offered = float(inline_object_bytes(window.size).sum()) / span_s
            over = "the link its session uses (one session replays the trace)"
        loss = topology.link.loss
        if loss:
            offered /= 1 - loss  # (the resends: on average 1 / (1 - loss) sends a frame)
            over += f" with the resends of its {percent(loss)} loss"
        times = offered / topology.link.bandwidth
        if times < 1:
            continue
        factor, unit = key_scale("topology.link.bandwidth", [offered, topology.link.bandwidth])
        saving, kept = below_one(1 - 1 / times)
        text = (
            f"inlining every body would send about {offered * factor:.3g} {unit} over {over}, "
            f"{figures(times)} times its {topology.link.bandwidth * factor:.3g} {unit}: "
            f"unless caching keeps more than {kept} of those bytes off the links (a "
            f"wire_saving above {saving}), they fall behind "
            "(peak_link_utilisation, operations_behind)"
        )
        found.append((text, point.index))
    return _by_text(found, of_points)


def inline_server_load(scenario: Scenario) -> tuple[float, float]:
    """The workers a server keeps busy on average if every body goes inline, a synthetic
    workload's sessions spread evenly over the servers: its frames' part (the per-operation
    cost) and its inline bytes' (in closed form, :mod:`nnrpsim.model.workload_means`)."""
    topology = scenario.topology
    means = workload_means(model_config(scenario).workload, sessions_per_s(scenario))
    frames = means.operations_per_s * topology.per_operation_cost / 1e3
    bodies = means.inline_bytes_per_s * topology.per_inline_byte_cost / 1e3
    return frames / topology.servers, bodies / topology.servers


def server_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run: a warning for each set of DES ``points`` (of ``of_points``) whose servers'
    workers could not process every body inline: each frame's per-operation cost and each
    inline byte's, at the workload's closed-form rates spread evenly over the servers, keep
    more workers busy than ``server_workers`` gives; frames then wait without end, and
    sessions fall behind. Caching takes the bytes' part off (its PUTs cost their bytes once),
    never the frames'. (A trace's one session is not judged: its frames are its requests.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario, topology = point.scenario, point.scenario.topology
        workers = topology.server_workers
        if scenario.engine != "des" or workers is None or scenario.workload.trace is not None:
            continue
        frames, bodies = inline_server_load(scenario)
        if frames + bodies < workers:
            continue
        busy = f"{figures(frames + bodies)} of a server's workers busy at once on average"
        spread = f"sessions spread evenly over {counted(topology.servers, 'server')}"
        if frames >= workers:
            remedy = (
                f"its frames alone keep {figures(frames)} busy, which no caching takes "
                "off: more server_workers or servers"
            )
        else:
            _, share = below_one((frames + bodies - workers) / bodies)
            remedy = f"unless caching keeps more than {share} of the bodies off the servers"
        text = (
            f"inlining every body would keep {busy} ({spread}), against its "
            f"{counted(workers, 'worker')}: "
            f"{remedy}, frames wait without end and sessions fall behind (peak_server_load, "
            "operations_behind)"
        )
        found.append((text, point.index))
    return _by_text(found, of_points)


IDLE_SHARE = 0.01
"""The share of a run's measured time past its log's end that :func:`log_span_advice` lets
pass: averages over time that count an idle end that short are within 1 % of the log's."""


def log_span_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose runs outlast their trace
    or arrival log by more than :data:`IDLE_SHARE` of their measured time, so that averages
    over time (``mean_gpu_bytes``, the loads) take in an idle end, whose warm-up outlasts it
    (nothing measured), or that replay only part of their trace. (An arrival log cut short is
    the ordinary use of a long one: not said.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        study, workload = point.scenario.study, point.scenario.workload
        if workload.trace is not None:
            text = _trace_span(workload.trace, study)
        elif workload.sessions.arrivals is not None:
            text = _arrivals_span(workload.sessions.arrivals, workload.sessions.duration, study)
        else:
            text = None
        if text:
            found.append((text, point.index))
    return _by_text(found, of_points)


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
    return _by_text(found, of_points)


FEW_SAMPLES = 30
"""Below so many memory samples after the warm-up, :func:`sample_advice` calls a DES run's
memory figures rough."""


def sample_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of DES ``points`` (of ``of_points``) whose runs sample the
    memory fewer than :data:`FEW_SAMPLES` times after the warm-up: their memory figures are
    those samples' mean and largest, and a run of a few seconds (a short trace's) has one or
    two. The interval is the model's (:func:`nnrpsim.runner.model_config`): the run's three
    hundredth, or the server's expiry sweep interval if longer (the bytes held include
    expired leases until a sweep)."""
    found: list[tuple[str, int]] = []
    for point in points:
        if point.scenario.engine != "des":
            continue
        study = point.scenario.study
        interval = model_config(point.scenario).sample_interval_ms
        samples = math.floor(study.duration / interval) - math.ceil(study.warmup / interval) + 1
        if samples < FEW_SAMPLES:
            more = (  # (a log's run should end with it: log_span_advice)
                "a shorter topology.sweep_interval samples more"
                if point.scenario.workload.follows_a_log
                else "a longer study.duration samples more"
            )
            found.append(
                (
                    f"the runs sample the memory every {_duration(interval)} (the larger of "
                    "study.duration / 300 and topology.sweep_interval), so the "
                    f"{_duration(study.duration - study.warmup)} after the warm-up hold "
                    f"{counted(samples, 'sample')}: mean_gpu_bytes, peak_gpu_bytes and "
                    f"memory_settled_s are rough; {more} (the vector engine integrates the "
                    "memory exactly)",
                    point.index,
                )
            )
    return _by_text(found, of_points)


def _duration(ms: float) -> str:
    """A span as a warning gives it: whole seconds from 100 s, three figures below."""
    seconds = ms / 1e3
    if seconds >= 100:
        return f"{seconds:,.0f} s"
    return f"{seconds:.3g} s" if seconds >= 1 else f"{ms:.3g} ms"


def _least_duration(end_ms: float, warmup_ms: float) -> str:
    """The duration to advise for a log that ends at ``end_ms``: whole seconds where rounding
    up to them adds no more than :data:`IDLE_SHARE` (an end a few seconds in: milliseconds)."""
    whole_s = math.ceil(end_ms / 1e3)
    if 1e3 * whole_s - end_ms <= IDLE_SHARE * (1e3 * whole_s - warmup_ms):
        return f"{whole_s}s"  # (as a scenario writes it)
    return f"{math.ceil(end_ms)}ms"


def _idle_end(end_ms: float, study: Study, what: str) -> str | None:
    if study.warmup >= end_ms:
        return (
            f"the {_duration(study.warmup)} warm-up outlasts {what}: the runs measure nothing; "
            "shorten study.warmup"
        )
    if study.duration - end_ms <= IDLE_SHARE * (study.duration - study.warmup):
        return None
    return (
        f"the runs last {_duration(study.duration)}, {_duration(study.duration - end_ms)} past "
        f"{what}: mean_gpu_bytes and the other averages over time take in the idle end; set "
        f"study.duration to {_least_duration(end_ms, study.warmup)}"
    )


def _trace_span(spec: Trace, study: Study) -> str | None:
    trace, name = load_trace(spec), Path(spec.path).name
    if study.duration < trace.end_ms:
        replayed = len(trace.before(int(study.duration)))
        return (
            f"the runs last {_duration(study.duration)} and replay {replayed:,} of the "
            f"{len(trace):,} references of {name} (it spans {_duration(trace.end_ms)}); set "
            f"study.duration to {_least_duration(trace.end_ms, study.warmup)} to replay it all"
        )
    what = f"the last reference of {name}, at {_duration(trace.end_ms - 1)}"
    return _idle_end(trace.end_ms, study, what)


def _arrivals_span(spec: Arrivals, session_ms: float, study: Study) -> str | None:
    last = float(load_arrivals(spec)[-1])
    what = (
        f"the sessions of {Path(spec.path).name} (its last arrival at {_duration(last)}, and a "
        f"{_duration(session_ms)} session)"
    )
    return _idle_end(last + session_ms, study, what)


BACKOFF = "host_policy.refused_put_backoff"
EVICTION = "topology.eviction"
IN_FLIGHT = "workload.operations.max_in_flight"
INLINE_ONCE = "host_policy.inline_after_invalidate"


def idle_rule_warnings(points: list[Point], runs: pd.DataFrame) -> list[str]:
    """Rules that act only on what the run does, set away from their defaults and not swept,
    where no run after the warm-up did it, at the points a rule leaves them a say: they drew
    numbers they had next to no say in, with no word. Whether a server refuses a CACHE_PUT or
    evicts a lease, the scenario's memory and eviction rules decide as the run goes (a budget
    with LRU eviction refuses nothing but objects larger than itself; one that never fills
    evicts nothing); whether a session's operations overlap enough to fill its in-flight
    window, its load and the network's delays; whether a lease ends under its host, for the
    inline-once rule, its evictions too where no content changes or told restart end any.
    The points where a rule gives them no say whatever the run (unlimited memory, the vector
    engine's timing, policy ``never``) are left out: :func:`inert_key_advice` names the
    first two before the run; the last is a baseline."""
    return [
        *_idle_rule(
            points,
            runs,
            BACKOFF,
            ("refused_puts",),
            "no server refused a CACHE_PUT after the warm-up in any run, so it had next to no "
            "say: a server refuses room only where reclaiming expired leases and evicting "
            "cannot make it (eviction: none, or an object larger than its whole budget)",
        ),
        *_idle_rule(
            points,
            runs,
            EVICTION,
            ("evictions", "refused_puts"),
            "no server evicted a lease or refused a CACHE_PUT after the warm-up in any run, so "
            "it had no say: the budget (topology.gpu_memory, max_cache_entries) never filled",
        ),
        *_idle_rule(
            points,
            runs,
            IN_FLIGHT,
            ("operations_waited",),
            "no operation waited for an in-flight slot after the warm-up in any run, so it had "
            "no say: a larger limit gives the same numbers",
        ),
        *_idle_rule(
            points,
            runs,
            INLINE_ONCE,
            ("evictions",),
            "no server evicted a lease after the warm-up in any run, and nothing else ends one "
            "under its host (no content changes, no restart it is told of), so it had no say: "
            "the budget (topology.gpu_memory, max_cache_entries) never filled",
            acts_anyway=ends_leases_but_by_eviction,
        ),
    ]


def _idle_rule(
    points: list[Point],
    runs: pd.DataFrame,
    key: str,
    acts: tuple[str, ...],
    why: str,
    acts_anyway: Callable[[Scenario], bool] | None = None,
) -> list[str]:
    """The warning of :func:`idle_rule_warnings` for ``key``, which has its say where a run
    counts any of ``acts``, or at a point ``acts_anyway`` holds for whatever the counts;
    none where a run's count is unknown (one an earlier version wrote has no ``evictions``
    or ``operations_waited``)."""
    if not points or within(key, points[0].params) or any(c not in runs for c in acts):
        return []
    value = dotted(points[0].scenario.model_dump(), key)
    live = [point for point in points if not inert_in(point.scenario, key)]
    if acts_anyway is not None and any(acts_anyway(point.scenario) for point in live):
        return []
    indices = [point.index for point in live]
    done = runs.loc[runs["point"].isin(indices) & runs["error"].isna(), list(acts)]
    if (
        value == _DEFAULTS[key]
        or done.empty
        or done.isna().any(axis=None)
        or (done > 0).any(axis=None)
    ):
        return []
    return [
        f"warning: {_whose(indices, len(points))}: {key} is {scenario_text(key, value)}, but {why}"
    ]


def failure_warnings(runs: pd.DataFrame) -> list[str]:
    """Runs that raised are recorded, not fatal to the study; say so, or the table's
    ``failures`` column would be the only sign."""
    if runs.empty or "error" not in runs:
        return []
    failed = runs[runs["error"].notna()]
    if failed.empty:
        return []
    points = points_text(sorted(failed["point"].unique()))
    return [
        f"warning: {points}: {len(failed)} of {len(runs)} runs failed, the first with "
        f"{failed['error'].iloc[0]!r}; manifest.json lists each, and --resume runs them again"
    ]


def unmoved_key_warnings(summary: pd.DataFrame, explained: Collection[str] = ()) -> list[str]:
    """A warning for each swept key whose values gave the same numbers wherever the other
    swept keys stood (their runs draw the same random numbers, so a key that changes the
    runs at all almost always changes some number): nothing it sets reached the runs, or its
    range never binds, or (a TTL's key) the budget evicted every lease before it ran out. Its
    flat curve would read as "it does not matter" where another key fixed it. A key that
    moves the numbers somewhere (a TTL beside a ``never`` baseline) is not named, nor one
    ``explained`` already (by :func:`ignored_key_advice`)."""
    done = summary[summary["failures"] == 0] if "failures" in summary else summary
    metrics = [metric for metric in METRICS if metric in done]
    if len(done) < 2 or not metrics:
        return []
    swept = swept_columns(summary)
    labels = done[swept].astype(str)  # (a swept list of kinds is no group key)
    # each point's numbers as one hash (a NaN as a NaN: a vector run's latency), to 12
    # figures: two paths may sum the same bytes in another order (the vector engine's replay
    # on the lease table, for renewal: extend, and beside it, for touch)
    numbers = _figures_kept(done[metrics].to_numpy(dtype=float), 12)
    labels["numbers"] = pd.util.hash_pandas_object(pd.DataFrame(numbers), index=False).to_numpy()
    unmoved = []
    for key in (key for key in swept if key not in explained):
        others = [other for other in swept if other != key]
        # (a null, swept as no budget or no hint, is a value: its group counts; alone, one group)
        groups = labels.groupby(others or (lambda _: 0), sort=False, dropna=False)
        varied = groups[key].nunique(dropna=False) > 1
        if varied.any() and (groups["numbers"].nunique()[varied] == 1).all():
            unmoved.append(key)
    # a TTL the budget overruled: every lease evicted before it could run out
    overruled = [key for key in unmoved if key in TTL_KEYS] if _evicted_before_expiry(done) else []
    found = []
    for keys, why in (
        (
            [key for key in unmoved if key not in overruled],
            "nothing it sets reached the runs (another key fixes it, or the engine ignores it) "
            "or its range never binds (a GPU budget that never fills)",
        ),
        (
            overruled,
            "no reference found its lease run out in any run, and the servers evicted leases "
            "at every point (evictions): the budget (topology.gpu_memory, max_cache_entries) "
            "ended the leases before a TTL could; a larger one lets the TTL act",
        ),
    ):
        if keys:
            whose = "its" if len(keys) == 1 else "each one's"
            found.append(
                f"warning: {', '.join(keys)}: {whose} values gave the same numbers wherever the "
                f"other swept keys stood: {why}"
            )
    return found


TTL_KEYS = (
    "host_policy.ttl_hint",
    "host_policy.ttl_fraction",
    "host_policy.connection_ttl",
    "topology.default_lease_ttl",
    "topology.ttl_floor",
    "topology.ttl_ceiling",
)
"""The keys that set the TTL a lease is granted."""


def _evicted_before_expiry(summary: pd.DataFrame) -> bool:
    """Whether at every point of ``summary`` no reference found its lease run out and the
    servers evicted leases (unknown, as in runs of an earlier version: no)."""
    if not {"miss_rate_lease_expired", "evictions"} <= set(summary):
        return False
    expired = summary["miss_rate_lease_expired"].to_numpy(dtype=float)
    evicted = summary["evictions"].to_numpy(dtype=float)
    return bool((expired == 0).all() and (evicted > 0).all())


def _figures_kept(values: np.ndarray, figures: int) -> np.ndarray:
    """``values`` rounded to so many significant figures (zeros, NaNs and infinities kept)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = 10.0 ** (figures - 1 - np.floor(np.log10(np.abs(values))))
        rounded = np.round(values * scale) / scale
    return np.where(np.isfinite(rounded), rounded, values)


def violation_warnings(summary: pd.DataFrame) -> list[str]:
    """Invariant violations mean a bug, except operations that sessions fell behind on: a link,
    a server's workers, or a session's own transfers (at most max_in_flight at a time), could
    not keep up."""
    if summary.empty or "invariant_violations" not in summary:
        return []
    flagged = summary[summary["invariant_violations"] > 0]
    behind = flagged["invariant_violations"] <= flagged["operations_behind"] + 1e-9
    warnings = []
    if behind.any():
        points = points_text(flagged["point"][behind].tolist())
        warnings.append(
            f"warning: {points}: sessions fell behind the offered load (a link, see "
            "peak_link_utilisation; the server's workers, see peak_server_load; or their own "
            "max_in_flight window), and operations not done 60 s after the end count as never "
            "completed (invariant_violations)"
        )
    if (~behind).any():
        points = points_text(flagged["point"][~behind].tolist())
        warnings.append(
            f"warning: {points}: invariant_violations beyond the operations sessions fell "
            "behind on: the model broke a rule (a bug); runs.parquet has each run's count"
        )
    return warnings
