"""A TTL the hosts ask for that the server's floor or ceiling replaces is named before the
run and after it: a sweep of TTL fractions under a 20 s floor drew a flat stretch that was
the floor's, and nothing said so."""

from __future__ import annotations

import pytest

from nnrpsim.checks.ttl_bounds import ttl_bound_advice
from tests.study.advice import advice, run_numbers

STUDY = {
    "study": {"name": "bounds", "seed": 4, "replications": 1, "duration": "60s", "warmup": "20s"},
    "workload": {
        "sessions": {"rate_per_s": 1, "duration": "30s", "duration_cv": 0},
        "operations": {"rate_per_s": 1},
    },
    "host_policy": {"name": "always", "renew_margin": 0},
}
NUMBERS = ["hit_rate", "mean_gpu_bytes", "wire_bytes", "installs"]
GRANTED = "which the server grants instead"


def _advice(*overrides: str) -> list[str]:
    return advice(ttl_bound_advice, STUDY, *overrides)


def _run(*overrides: str) -> tuple[list, list[str]]:
    return run_numbers(STUDY, NUMBERS, *overrides)


def test_a_fixed_hint_beyond_a_bound_is_named_and_runs_with_the_bound():
    told = f"all points: host_policy.ttl_hint is 20 s, above topology.ttl_ceiling (5 s), {GRANTED}"
    assert _advice("host_policy.ttl_hint=20s", "topology.ttl_ceiling=5s") == [f"warning: {told}"]
    above, said = _run("host_policy.ttl_hint=20s", "topology.ttl_ceiling=5s")
    assert told in said
    assert above == _run("host_policy.ttl_hint=5s", "topology.ttl_ceiling=5s")[0]
    assert above != _run("host_policy.ttl_hint=20s")[0]  # (the ceiling moved them)
    assert _advice("host_policy.ttl_hint=1s", "topology.ttl_floor=3s") == [
        "warning: all points: host_policy.ttl_hint is 1 s, below topology.ttl_floor (3 s), "
        + GRANTED
    ]
    # within the bounds, or at one, nothing is said
    assert _advice("host_policy.ttl_hint=5s", "topology.ttl_ceiling=5s") == []
    # hint 0 asks for the server's default; a connection's TTL is bounded alike
    assert _advice("host_policy.ttl_hint=0s", "topology.ttl_floor=40s") == [
        "warning: all points: topology.default_lease_ttl is 30 s, below topology.ttl_floor "
        f"(40 s), {GRANTED}"
    ]
    assert _advice("host_policy.connection_ttl=2h") == [
        "warning: all points: host_policy.connection_ttl is 7200 s, above topology.ttl_ceiling "
        f"(3600 s), {GRANTED}"
    ]


def test_fractions_whose_hints_every_session_has_below_the_floor_run_alike():
    """Fixed 30 s sessions: fractions 0.1 and 0.3 ask 3 s and 9 s, under a 10 s floor both get
    10 s; 0.5 asks 15 s."""
    floor = "topology.ttl_floor=10s"
    sweep = "sweep={grid: {host_policy.ttl_fraction: [0.1, 0.3, 0.5]}}"
    assert _advice(floor, sweep) == [
        "warning: point 0: host_policy.ttl_fraction is 0.1: every session asks for less than "
        f"topology.ttl_floor (10 s), {GRANTED}",
        "warning: point 1: host_policy.ttl_fraction is 0.3: every session asks for less than "
        f"topology.ttl_floor (10 s), {GRANTED}",
    ]
    low, said = _run(floor, "host_policy.ttl_fraction=0.1")
    assert any("every session asks for less" in line for line in said)
    assert low == _run(floor, "host_policy.ttl_fraction=0.3")[0]
    assert low != _run(floor, "host_policy.ttl_fraction=0.5")[0]


@pytest.mark.parametrize(
    ("overrides", "share"),
    [
        # one-minute sessions of CV 0.5 under a 20 s floor: a fraction of 0.25 asks less for
        # those shorter than 80 s (80 %); 0.5, those shorter than 40 s (27 %: not named); under
        # a 30 s ceiling, 0.75 asks more for those longer than 40 s (73 %)
        (["topology.ttl_floor=20s", "host_policy.ttl_fraction=0.25"], "80 %"),
        (["topology.ttl_floor=20s", "host_policy.ttl_fraction=0.5"], None),
        (["topology.ttl_ceiling=30s", "host_policy.ttl_fraction=0.75"], "73 %"),
    ],
)
def test_a_fraction_is_named_where_most_sessions_ask_beyond_a_bound(overrides, share):
    lengths = ["workload.sessions.duration=60s", "workload.sessions.duration_cv=0.5"]
    told = _advice(*lengths, *overrides)
    if share is None:
        assert told == []
    else:
        (line,) = told
        assert f": {share} of the sessions (those " in line


def test_policy_never_which_puts_nothing_is_not_judged():
    never = ["host_policy.name=never", "host_policy.ttl_hint=1h", "topology.ttl_ceiling=1s"]
    assert _advice(*never) == []


def test_a_traces_one_session_asks_for_its_fraction_of_the_traces_window(tmp_path):
    """A log of 29 s (each object every 3 s) under a 5 s ceiling: 0.75 of it asks 21.8 s,
    and runs as a 5 s hint does; cut to a 6 s run, it asks less than 5 s."""
    rows = "".join(f"{t},{'abc'[t // 1000 % 3]},4096\n" for t in range(0, 30_000, 1000))
    (tmp_path / "log.csv").write_text("time_ms,object,size_bytes\n" + rows)
    trace = {
        "study": {"name": "t", "duration": "30s", "replications": 1},
        "workload": {"trace": {"path": str(tmp_path / "log.csv")}},
        "topology": {"ttl_ceiling": "5s"},
        "host_policy": {"name": "always"},
    }
    assert advice(ttl_bound_advice, trace) == [
        "warning: all points: host_policy.ttl_fraction is 0.75: the trace's one session asks for "
        f"21.8 s, above topology.ttl_ceiling (5 s), {GRANTED}"
    ]
    asked, _ = run_numbers(trace, NUMBERS)
    assert asked == run_numbers(trace, NUMBERS, "host_policy.ttl_hint=5s")[0]
    assert asked != run_numbers(trace, NUMBERS, "host_policy.ttl_hint=2s")[0]
    assert advice(ttl_bound_advice, trace, "study.duration=6s") == []
