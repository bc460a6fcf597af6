"""Which server each session goes to: the configured routing rule, decided for the whole plan
at once (it depends only on the sessions and the order they start in), so the DES hosts and
the vector engine's replay route alike."""

from __future__ import annotations

import heapq

from .workload import SessionPlan


def route_sessions(sessions: list[SessionPlan], servers: int, rule: str) -> dict[int, int]:
    """Session id -> server index. ``round_robin`` and ``hash`` go by the session id;
    ``least_sessions`` gives each session, in the order they start (the plan's order among
    equal starts), the server with the fewest sessions open then by the plan's times (one
    that ends as another starts is closed), the lowest index on a tie: a load balancer's
    least connections."""
    if rule == "round_robin":
        return {s.session_id: (s.session_id - 1) % servers for s in sessions}
    if rule == "hash":
        return {s.session_id: (s.session_id * 2_654_435_761 >> 7) % servers for s in sessions}
    counts, routed = [0] * servers, {}
    ends: list[tuple[float, int]] = []  # (end, server) of the open sessions, a heap
    for session in sorted(sessions, key=lambda s: s.start_ms):  # (stable: plan order on ties)
        while ends and ends[0][0] <= session.start_ms:
            counts[heapq.heappop(ends)[1]] -= 1
        server = min(range(servers), key=lambda k: (counts[k], k))
        counts[server] += 1
        heapq.heappush(ends, (session.end_ms, server))
        routed[session.session_id] = server
    return routed
