"""Which server each session goes to. ``least_sessions`` counted the sessions each server had
had so far, which in start order is round robin: on one host it gave the very assignment
``round_robin`` gives, whatever the sessions' lengths. It now counts the sessions open."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.model.routing import route_sessions
from nnrpsim.model.workload import SessionPlan


def _sessions(seed: int, n: int = 300) -> list[SessionPlan]:
    """Sessions of one host, in id order as a plan draws them: Poisson starts, lognormal
    lengths (some starts equal, some ending on another's start)."""
    rng = np.random.default_rng(seed)
    starts = np.sort(np.round(rng.exponential(200.0, n).cumsum() / 50) * 50)
    lengths = np.round(rng.lognormal(np.log(2_000.0), 0.8, n) / 50) * 50
    return [
        SessionPlan(i + 1, 0, float(start), float(start + length), float(length), [], {})
        for i, (start, length) in enumerate(zip(starts, lengths, strict=True))
    ]


@pytest.mark.parametrize("servers", [2, 3, 7])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_session_goes_to_a_server_with_the_fewest_open(seed, servers):
    sessions = _sessions(seed)
    routed = route_sessions(sessions, servers, "least_sessions")
    for session in sessions:  # (in start order: a plan's ids are)
        open_on = [
            sum(
                1
                for other in sessions
                if routed[other.session_id] == k
                and other.start_ms <= session.start_ms < other.end_ms
                and other.session_id < session.session_id
            )
            for k in range(servers)
        ]
        fewest = min(open_on)
        assert routed[session.session_id] == open_on.index(fewest), session.session_id


def test_least_sessions_is_not_round_robin_where_lengths_differ():
    sessions = _sessions(4)
    least = route_sessions(sessions, 3, "least_sessions")
    assert least != route_sessions(sessions, 3, "round_robin")

    # and it keeps the servers' open sessions closer to even than round robin does
    def widest(routed: dict[int, int]) -> int:
        spread = 0
        for session in sessions:
            counts = np.bincount(
                [
                    routed[o.session_id]
                    for o in sessions
                    if o.start_ms <= session.start_ms < o.end_ms
                ],
                minlength=3,
            )
            spread = max(spread, int(counts.max() - counts.min()))
        return spread

    assert widest(least) < widest(route_sessions(sessions, 3, "round_robin"))
