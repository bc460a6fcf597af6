"""Which server each session goes to: the configured routing rule, decided for the whole plan
at once (it depends only on the sessions and the order they start in), so the DES hosts and
the vector engine's replay route alike."""

from __future__ import annotations

from .workload import SessionPlan


def route_sessions(sessions: list[SessionPlan], servers: int, rule: str) -> dict[int, int]:
    """Session id -> server index. ``round_robin`` and ``hash`` go by the session id;
    ``least_sessions`` gives each session, in the order they start (the plan's order among
    equal starts), the server that has had the fewest sessions so far, the lowest index on
    a tie."""
    if rule == "round_robin":
        return {s.session_id: (s.session_id - 1) % servers for s in sessions}
    if rule == "hash":
        return {s.session_id: (s.session_id * 2_654_435_761 >> 7) % servers for s in sessions}
    counts, routed = [0] * servers, {}
    for session in sorted(sessions, key=lambda s: s.start_ms):  # (stable: plan order on ties)
        server = min(range(servers), key=lambda k: (counts[k], k))
        counts[server] += 1
        routed[session.session_id] = server
    return routed
