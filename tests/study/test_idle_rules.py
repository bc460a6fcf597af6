"""A refusal back-off (``host_policy.refused_put_backoff``) acts only after a server refuses a
CACHE_PUT, an eviction rule (``topology.eviction``) only where the budget fills, an
in-flight limit (``workload.operations.max_in_flight``) only where a session's operations
fill it, and the inline-once rule (``host_policy.inline_after_invalidate``) only where a
lease ends under its host (an eviction, a content change, a restart it is told of);
whether they do the run decides: a budget with LRU eviction refuses nothing but objects
larger than itself, a large one never fills, and operations a second apart over fast links
never overlap. Set, not swept, where no run did what calls on it, each is named after
the run; where a setting gives it no say whatever the run (unlimited memory, the vector
engine's timing), before it (by the inert-key rule, not again here)."""

from __future__ import annotations

import pandas as pd
import pytest

import nnrpsim
from nnrpsim.checks.keys import idle_rule_warnings
from nnrpsim.scenario import parse_scenario, sweep_points

IDLE = "host_policy.refused_put_backoff is 5 s, but no server refused a CACHE_PUT"
UNFILLED = "topology.eviction is 'fifo', but no server evicted a lease"
IN_FLIGHT = "workload.operations.max_in_flight is 2, but no operation waited"


def _study(topology: dict, backoff="5s", sweep=None) -> dict:
    study = {
        "study": {"duration": "3min", "warmup": "2min", "replications": 2},
        "engine": "vector",
        "topology": topology,
        "host_policy": {"refused_put_backoff": backoff},
    }
    return {**study, "sweep": {"grid": sweep}} if sweep else study


def _told(tmp_path, scenario: dict, counted: str = "refused_puts") -> tuple[list[str], float]:
    result = nnrpsim.run(scenario, out=tmp_path / "out", jobs=1, progress=False)
    return result.warnings, float(result.runs[counted].sum())


def _des(topology: dict, operations: dict) -> dict:
    return {
        "study": {"duration": "60s", "warmup": "20s", "replications": 2},
        "topology": topology,
        "workload": {"sessions": {"duration": "20s"}, "operations": operations},
    }


NAMED = [
    (
        _study({"gpu_memory": "64MiB", "eviction": "lru"}),
        "refused_puts",
        f"{IDLE} after the warm-up in any run, so it had next to no say: a server refuses room "
        "only where reclaiming expired leases and evicting cannot make it (eviction: none, or "
        "an object larger than its whole budget)",
    ),
    (
        _study({"gpu_memory": "1GiB", "eviction": "fifo"}, "0s"),
        "evictions",
        f"{UNFILLED} or refused a CACHE_PUT after the warm-up in any run, so it had no say: the "
        "budget (topology.gpu_memory, max_cache_entries) never filled",
    ),
    (
        _des({}, {"max_in_flight": 2}),
        "operations_waited",
        f"{IN_FLIGHT} for an in-flight slot after the warm-up in any run, so it had no say: a "
        "larger limit gives the same numbers",
    ),
]


@pytest.mark.parametrize(("scenario", "counted", "said"), NAMED, ids=["backoff", "evict", "flight"])
def test_a_rule_that_nothing_in_the_runs_called_on_is_named(tmp_path, scenario, counted, said):
    told, count = _told(tmp_path, scenario, counted)
    assert count == 0
    assert [line for line in told if said[:40] in line] == [f"warning: all points: {said}"]


@pytest.mark.parametrize(
    "scenario",
    [
        _study({"gpu_memory": "4MiB", "eviction": "none"}),  # refusals: it has its say
        _study({"gpu_memory": "64MiB", "eviction": "lru"}, "0s"),  # none set
        _study({"gpu_memory": "64MiB"}, sweep={"host_policy.refused_put_backoff": ["1s", "5s"]}),
        _study({"gpu_memory": None}),  # the inert-key rule names it, before the run
    ],
    ids=["refused", "unset", "swept", "unlimited"],
)
def test_not_named_where_it_acts_or_is_named_otherwise(tmp_path, scenario):
    told, refused = _told(tmp_path, scenario)
    assert not [line for line in told if "no server refused a CACHE_PUT" in line]
    if scenario["topology"].get("eviction") == "none":
        assert refused > 0
    if scenario["topology"]["gpu_memory"] is None:
        assert any("host_policy.refused_put_backoff" in line for line in told)


def test_a_never_baseline_beside_it_does_not_hide_it(tmp_path):
    scenario = _study(
        {"gpu_memory": "64MiB", "eviction": "lru"},
        sweep={"host_policy.name": ["never", "best_practice"]},
    )
    told, _ = _told(tmp_path, scenario)
    assert [line for line in told if IDLE in line and line.startswith("warning: point 1: ")]


@pytest.mark.parametrize(
    "scenario",
    [
        _study({"gpu_memory": "4MiB", "eviction": "fifo"}, "0s"),  # evictions: it has its say
        _study({"gpu_memory": "1MiB", "eviction": "none"}, "0s"),  # refusals: its say
        _study({"gpu_memory": "1GiB"}, "0s"),  # the default
        _study({"gpu_memory": "1GiB"}, "0s", sweep={"topology.eviction": ["fifo", "size"]}),
        _study({"gpu_memory": None, "eviction": "fifo"}, "0s"),  # named before the run
    ],
    ids=["evicting", "refusing", "default", "swept", "unlimited"],
)
def test_an_eviction_rule_is_not_named_where_it_acts_or_is_named_otherwise(tmp_path, scenario):
    told, _ = _told(tmp_path, scenario)
    assert not [line for line in told if "no server evicted a lease" in line]
    runs = pd.read_parquet(tmp_path / "out/runs.parquet")
    rule = scenario["topology"].get("eviction")
    if rule == "fifo" and scenario["topology"]["gpu_memory"] == "4MiB":
        assert runs["evictions"].sum() > 0
    if rule == "none":
        assert runs["evictions"].sum() == 0 and runs["refused_puts"].sum() > 0
    if scenario["topology"]["gpu_memory"] is None:
        assert any("topology.eviction is 'fifo', but topology.gpu_memory" in line for line in told)


def test_runs_an_earlier_version_wrote_without_evictions_name_nothing():
    points = sweep_points(parse_scenario(_study({"gpu_memory": "1GiB", "eviction": "fifo"}, "0s")))
    runs = pd.DataFrame({"point": [0, 0], "error": [None, None], "refused_puts": [0.0, 0.0]})
    assert idle_rule_warnings(points, runs) == []
    named = idle_rule_warnings(points, runs.assign(evictions=[0.0, 0.0]))
    assert len(named) == 1 and UNFILLED in named[0]
    assert idle_rule_warnings(points, runs.assign(evictions=[0.0, float("nan")])) == []


@pytest.mark.parametrize(
    "scenario",
    [
        _des({"link": {"latency": "400ms"}}, {"max_in_flight": 2, "rate_per_s": 5}),  # it binds
        _des({}, {}),  # the default
        {**_des({}, {"max_in_flight": 2}), "engine": "vector"},  # named before the run
    ],
    ids=["binding", "default", "vector"],
)
def test_an_in_flight_limit_is_not_named_where_it_binds_or_is_named_otherwise(tmp_path, scenario):
    told, _ = _told(tmp_path, scenario)
    assert not [line for line in told if "no operation waited" in line]
    runs = pd.read_parquet(tmp_path / "out/runs.parquet")
    if scenario.get("engine") == "vector":
        assert runs["operations_waited"].isna().all()
        assert any("max_in_flight is 2, but the vector engine" in line for line in told)
    elif scenario["workload"]["operations"]:
        assert (runs["operations_waited"] > 0).all()


INLINE_ONCE = "host_policy.inline_after_invalidate is false, but no server evicted a lease"


def _inline_once(topology: dict, workload=None, faults=None) -> dict:
    return {
        "study": {"duration": "3min", "warmup": "2min", "replications": 2},
        "engine": "des" if faults else "vector",
        "topology": topology,
        "workload": workload or {},
        "faults": faults or {},
        "host_policy": {"name": "threshold", "inline_after_invalidate": False},
    }


def test_an_inline_once_rule_no_lease_ended_for_is_named(tmp_path):
    told, evictions = _told(tmp_path, _inline_once({"gpu_memory": "1GiB"}), "evictions")
    assert evictions == 0
    assert [line for line in told if INLINE_ONCE in line] == [
        f"warning: all points: {INLINE_ONCE} after the warm-up in any run, and nothing else ends "
        "one under its host (no content changes, no restart it is told of), so it had no say: "
        "the budget (topology.gpu_memory, max_cache_entries) never filled"
    ]


@pytest.mark.parametrize(
    "scenario",
    [
        _inline_once({"gpu_memory": "4MiB"}),  # evictions: it has its say
        _inline_once({"gpu_memory": "1GiB"}, {"invalidations": {"rate_per_s": 0.02}}),
        _inline_once({"gpu_memory": "1GiB"}, faults={"restart_at": "150s"}),  # told of it
        _inline_once({"gpu_memory": None}),  # the inert-key rule names it, before the run
    ],
    ids=["evicting", "changes", "restart", "unlimited"],
)
def test_an_inline_once_rule_is_not_named_where_leases_end(tmp_path, scenario):
    told, evictions = _told(tmp_path, scenario, "evictions")
    assert not [line for line in told if INLINE_ONCE in line]
    if scenario["topology"]["gpu_memory"] == "4MiB":
        assert evictions > 0
    if scenario["topology"]["gpu_memory"] is None:
        assert any("host_policy.inline_after_invalidate is false, but" in line for line in told)
