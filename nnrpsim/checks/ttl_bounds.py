"""TTLs a scenario asks for that the server's floor or ceiling replaces: a sweep of them
draws the bound's flat stretch, not the workload's."""

from __future__ import annotations

from ..display_units import below_one, scenario_text
from ..model.workload_means import sessions_shorter_share
from ..scenario import Point
from ..scenario.schema import Sessions, Topology
from ..traces import load_trace
from .wording import span_text, warnings_by_text

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
            asked = f"the trace's one session asks for {span_text(hint)}"
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
    return warnings_by_text(found, of_points)


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
        (below, f"those shorter than {span_text(floor)}", "less", "ttl_floor")
        if below >= above
        else (above, f"those longer than {span_text(ceiling)}", "more", "ttl_ceiling")
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
