"""A host policy whose thresholds cache next to nothing of the workload is named before the
run and after it: best_practice in one-minute sessions of an operation every 50 s inlined every
body, its TTL sweep drew a flat line at a hit rate of 0, and the only word was that the TTL
"changes nothing" (another key fixes it, or the engine ignores it)."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.checks.caching import policy_reach_advice
from nnrpsim.display_units import percent
from nnrpsim.run_config import model_config
from nnrpsim.scenario import load_scenario
from nnrpsim.workload_facts import scenario_reach
from tests.conftest import MOONCAKE
from tests.study.advice import advice, run_numbers

STUDY = {
    "study": {"name": "reach", "seed": 3, "replications": 2, "duration": "20min", "warmup": "0s"},
    "engine": "vector",
    "workload": {"sessions": {"rate_per_s": 2, "duration": "60s"}},
}


def _closed_form(*overrides: str) -> float:
    scenario = load_scenario(STUDY, list(overrides))
    return scenario_reach(scenario, model_config(scenario)).cached_share


@pytest.mark.parametrize(
    "overrides",
    [
        ("workload.operations.rate_per_s=0.05",),
        ("workload.operations.rate_per_s=0.1", "workload.sessions.duration_cv=1"),
        ("workload.operations.rate_per_s=0.02",),
        ("workload.objects.size={median: 1KiB, sigma: 0.5}",),  # sizes about the least
        (  # fixed lengths: reuse exactly 3 does not pass "more than 3"
            "host_policy={name: threshold, min_reuse: 3}",
            "workload.operations.rate_per_s=0.2",
            "workload.sessions={rate_per_s: 2, duration: 30s, duration_cv: 0}",
        ),
        ("host_policy.name=connection_scope", "workload.operations.rate_per_s=0.05"),
        (
            "host_policy={name: threshold, min_reuse: 10, min_object_size: 20KiB}",
            "workload.operations.rate_per_s=0.3",
            "workload.sessions.duration_cv=2",
        ),
    ],
)
def test_the_closed_form_share_cached_is_what_the_hosts_cache(overrides):
    """The share of references whose object the policy caches, against the references the
    runs did not inline by policy (20 minutes of 2 sessions a second, two replications)."""
    (inlined,), _ = run_numbers(STUDY, ["inline_rate_policy"], *overrides)
    assert _closed_form(*overrides) == pytest.approx(1 - inlined, abs=0.025)


@pytest.mark.filterwarnings("error")
def test_objects_no_operation_references_pass_no_least_reuse():
    """No private references, a least reuse of 0: a private object is never used, so never
    more than 0 times (0 / 0 warned in numpy)."""
    none = "workload.operations={private_refs: 0}"
    assert _closed_form(
        none, "host_policy={name: threshold, min_reuse: 0, min_object_size: 0}"
    ) == pytest.approx(_closed_form(none, "host_policy={name: always}"))


@pytest.mark.parametrize(
    ("policy", "passes"),
    [("best_practice", "18 %"), ("connection_scope", "69 %"), ("always", None), ("never", None)],
)
def test_validate_says_how_much_of_the_workload_the_thresholds_pass(policy, passes):
    """Is the spec's rule one for this workload? (An operation every 20 s of a minute's
    session: 18 %; counting a connection's sessions, 69 %; ``always`` passes everything.)"""
    overrides = ["workload.operations.rate_per_s=0.05", f"host_policy.name={policy}"]
    (line,) = [line for line in nnrpsim.validate(STUDY, overrides).described if "at once" in line]
    told = f"; {policy}'s thresholds pass the objects of {passes} of the references"
    assert line.endswith(told) if passes else "thresholds" not in line
    if passes:
        assert passes == percent(_closed_form(*overrides))


RARE = "workload.operations.rate_per_s=0.02"
TOLD = (
    "host_policy.name is best_practice, which caches objects larger than 1 KiB expected to be "
    "used more than 2 times in their session: those of 0.51 % of the references here (99.7 % "
    "are to objects larger than 1 KiB; a session of the mean length, 60 s, uses a private "
    "object 0.6 times and the most popular shared one 0.45 times), so its TTL, renewal and "
    "memory keys have next to no say and its hit rate is near 0"
)


def test_a_policy_that_caches_next_to_nothing_is_named_before_and_after_the_run():
    assert advice(policy_reach_advice, STUDY, RARE) == [f"warning: all points: {TOLD}"]
    assert f"warning: all points: {TOLD}" in nnrpsim.validate(STUDY, [RARE]).warnings
    (hit_rate, inlined), said = run_numbers(STUDY, ["hit_rate", "inline_rate_policy"], RARE)
    assert f"all points: {TOLD}" in said
    assert hit_rate < 0.01 and inlined > 0.99
    # sizes the cause: reused often enough, but few objects larger than 1 KiB
    small = advice(policy_reach_advice, STUDY, "workload.objects.size={median: 900, sigma: 0.05}")
    assert "(0.46 % are to objects larger than 1 KiB; " in small[0]
    assert "uses a private object 30 times and the most popular shared one 22 times" in small[0]
    # a connection's lease counts the reuse over the host's sessions of the namespace
    connection = "host_policy={name: threshold, min_reuse: 200, connection_ttl: 10s}"
    told = advice(policy_reach_advice, STUDY, connection)[0]
    assert "the most popular shared one 110 times while its connection lease lasts" in told


def test_a_swept_ttl_is_not_named_again_by_its_numbers():
    """Fixed one-minute sessions of an operation every 50 s: nothing passes, so the TTL's
    values give the same numbers; the cause is named once, not guessed at after the run."""
    sweep = "sweep={grid: {host_policy.ttl_fraction: [0.25, 0.75]}}"
    _, said = run_numbers(STUDY, ["hit_rate"], RARE, "workload.sessions.duration_cv=0", sweep)
    assert any("best_practice, which caches objects larger than 1 KiB" in line for line in said)
    assert not any("gave the same numbers" in line for line in said)


@pytest.mark.parametrize(
    "overrides",
    [
        (),  # an operation a second: most objects pass
        ("host_policy.name=always", RARE),
        ("host_policy.name=never", RARE),  # caches nothing by name, said by its rules
        ("sweep={grid: {workload.operations.rate_per_s: [0.02, 1]}}",),  # the grid's point
        (RARE, "sweep={grid: {host_policy.name: [best_practice, always]}}"),
        (RARE, "sweep={grid: {workload.sessions: [{duration: 60s}, {duration: 10min}]}}"),
        # a trace's objects are all expected to be reused: its blocks of 160 MiB pass
        (f"workload={{trace: {{path: {MOONCAKE}}}}}", "study.duration=60s"),
    ],
)
def test_not_named_where_the_policy_caches_or_the_grid_sweeps_its_reach(overrides):
    assert advice(policy_reach_advice, STUDY, *overrides) == []


def test_a_traces_objects_below_the_least_size_are_named(tmp_path):
    """A log whose sizes are KiB, not bytes: every object is 2-63 "bytes", none cached."""
    log = tmp_path / "log.csv"
    log.write_text(
        "time_ms,object,size_bytes\n"
        + "".join(f"{t},o{t % 97},{2 + t % 61}\n" for t in range(0, 60_000, 50))
    )
    overrides = [f"workload={{trace: {{path: {log}}}}}", "study.duration=60s"]
    told = (
        "all points: host_policy.name is best_practice, which caches objects larger than 1 KiB: "
        "those of 0 % of the trace's references in the run, so its TTL, renewal and memory "
        "keys have next to no say and its hit rate is near 0"
    )
    assert advice(policy_reach_advice, STUDY, *overrides) == [f"warning: {told}"]
    (hit_rate,), said = run_numbers(STUDY, ["hit_rate"], *overrides)
    assert told in said and hit_rate == 0
    assert advice(policy_reach_advice, STUDY, *overrides, "host_policy.name=always") == []
