"""A swept key whose values changed no number is named after the run: a TTL sweep under a
fixed ``ttl_hint`` gave five equal points, a flat curve that read as "the TTL does not
matter", with no word that the hint had replaced the fraction."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.checks.keys import unmoved_key_warnings
from nnrpsim.cli import main
from tests.conftest import SMALL_STUDY, write_yaml

TTL, RATE = "host_policy.ttl_fraction", "workload.invalidations.rate_per_s"


def _study(**sections) -> dict:
    """The small study (four points: two TTL fractions by two invalidation rates), one
    replication, with ``sections`` merged in."""
    study = {**SMALL_STUDY, "study": {**SMALL_STUDY["study"], "replications": 1}}
    for name, values in sections.items():
        study[name] = {**study.get(name, {}), **values}
    return study


def _told(study: dict) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        nnrpsim.sweep(study, progress=False)
    return [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]


def test_a_ttl_sweep_under_a_fixed_hint_is_named_with_the_reason():
    """A rule knows why (:mod:`nnrpsim.inert_keys`): its reason, not the numbers' guess."""
    told = _told(_study(host_policy={"ttl_hint": "10s"}))
    assert (
        f"all points: {TTL} is swept, but host_policy.ttl_hint is set, and a fixed hint "
        "replaces the fraction: its values change nothing there" in told
    )
    assert not [line for line in told if "same numbers" in line]


def test_a_budget_that_never_fills_is_named_by_its_numbers():
    """No rule knows a range that never binds: the runs' numbers tell."""
    study = _study()
    study["sweep"] = {"grid": {"topology.gpu_memory": ["1GiB", "2GiB"], RATE: [0, 0.02]}}
    told = [line for line in _told(study) if "same" in line]
    assert told == [
        "topology.gpu_memory: its values gave the same numbers wherever the other swept keys "
        "stood: nothing it sets reached the runs (another key fixes it, or the engine ignores "
        "it) or its range never binds (a GPU budget that never fills)"
    ]


OVERRULED = (
    f"{TTL}: its values gave the same numbers wherever the other swept keys stood: no "
    "reference found its lease run out in any run, and the servers evicted leases at every "
    "point (evictions): the budget (topology.gpu_memory, max_cache_entries) ended the leases "
    "before a TTL could; a larger one lets the TTL act"
)


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_ttl_a_budget_overrules_is_named_with_the_budget(engine):
    """One lease at a time: each PUT evicts the last before its TTL can end it. The generic
    reason ("a budget that never fills") said the opposite of what happened."""
    study = {**_study(topology={"max_cache_entries": 1}), "engine": engine}
    assert OVERRULED in _told(study)
    study["topology"]["max_cache_entries"] = 4  # leases run out: the TTL moves the numbers
    assert not [line for line in _told(study) if line.startswith(f"{TTL}: its values")]


def test_the_budget_is_named_only_where_every_point_evicted_and_no_lease_ran_out():
    rows = [(0, "best_practice", 0.25), (1, "best_practice", 0.75)]
    flat = {"hit_rate": [0.4, 0.4], "miss_rate_lease_expired": [0.0, 0.0]}
    assert unmoved_key_warnings(_summary(rows, {**flat, "evictions": [5.0, 5.0]})) == [
        f"warning: {OVERRULED}"
    ]
    # not where a point evicted nothing (a never baseline), where a lease ran out, or where
    # evictions were not counted (an earlier version's runs: NaN, or no column)
    baseline = {"hit_rate": [0.4, 0.4, 0.0, 0.0], "miss_rate_lease_expired": 0.0}
    for other in (
        _summary(POLICIES_BY_TTLS, {**baseline, "evictions": [5.0, 5.0, 0.0, 0.0]}),
        _summary(rows, {**flat, "miss_rate_lease_expired": 0.01, "evictions": 5.0}),
        _summary(rows, {**flat, "evictions": np.nan}),
        _summary(rows, flat),
    ):
        (line,) = unmoved_key_warnings(other)
        assert line.startswith(f"warning: {TTL}: its values")
        assert line.endswith("(a GPU budget that never fills)")
    # a key that sets no TTL gets the general reason, beside the TTL's own line
    both = pd.DataFrame(
        {"point": range(4), TTL: [0.25, 0.25, 0.75, 0.75], RATE: [0, 0.02, 0, 0.02]}
        | {"replications": 1, "failures": 0, "hit_rate": 0.4}
        | {"miss_rate_lease_expired": 0.0, "evictions": 5.0}
    )
    assert unmoved_key_warnings(both) == [
        f"warning: {RATE}: its values gave the same numbers wherever the other swept keys "
        "stood: nothing it sets reached the runs (another key fixes it, or the engine ignores "
        "it) or its range never binds (a GPU budget that never fills)",
        f"warning: {OVERRULED}",
    ]


def test_keys_that_move_the_numbers_are_not_named():
    """The small study's TTLs and invalidation rates each move its hit rate."""
    assert not [line for line in _told(_study()) if "same numbers" in line]


def _summary(rows: list[tuple], metrics: dict[str, list[float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["point", "host_policy.name", TTL])
    frame["replications"], frame["failures"] = 1, 0
    return frame.assign(**metrics)


POLICIES_BY_TTLS = [
    (0, "best_practice", 0.25),
    (1, "best_practice", 0.75),
    (2, "never", 0.25),
    (3, "never", 0.75),
]


def test_a_key_that_moves_the_numbers_somewhere_is_not_named():
    """Beside a ``never`` baseline (whose points the TTL cannot move) the TTL moves the
    caching policy's: not named. The policy moves every number: not named either."""
    moved = _summary(POLICIES_BY_TTLS, {"hit_rate": [0.4, 0.6, 0.0, 0.0]})
    assert unmoved_key_warnings(moved) == []
    flat = _summary(POLICIES_BY_TTLS, {"hit_rate": [0.4, 0.4, 0.0, 0.0]})
    assert unmoved_key_warnings(flat)[0].startswith(f"warning: {TTL}: its values")


def test_nan_is_alike_and_failed_points_are_left_out():
    """A vector run's latency is NaN at every point (equal, not different); a point whose
    runs all failed has no numbers to compare."""
    nan = np.nan
    summary = _summary(
        POLICIES_BY_TTLS, {"hit_rate": [0.4, 0.4, 0.0, nan], "p99_latency_ms": [nan] * 4}
    )
    assert unmoved_key_warnings(summary) == []  # point 3's NaN hit rate differs from 0
    summary.loc[3, "failures"] = 1
    (line,) = unmoved_key_warnings(summary)  # (the TTL alone: the policy moved the rest)
    assert line.startswith(f"warning: {TTL}: its values")


def test_a_key_swept_alone_is_judged_over_all_its_points():
    summary = _summary(POLICIES_BY_TTLS[:2], {"hit_rate": [0.4, 0.4]}).drop(
        columns="host_policy.name"
    )
    assert unmoved_key_warnings(summary)[0].startswith(f"warning: {TTL}: its values")
    summary.loc[1, "hit_rate"] = 0.5
    assert unmoved_key_warnings(summary) == []
    # a null among the values is one of them (no hint against a 5 s one)
    hints = summary.rename(columns={TTL: "host_policy.ttl_hint"})
    hints["host_policy.ttl_hint"], hints["hit_rate"] = [np.nan, 5000.0], 0.4
    assert unmoved_key_warnings(hints)[0].startswith("warning: host_policy.ttl_hint: its")


def test_a_key_that_moves_the_numbers_beside_a_null_is_not_named():
    """A TTL hint swept as [null, 5 s]: at null the fraction moves the numbers, at 5 s it
    cannot. The null points' group was dropped (pandas leaves missing keys out of a group
    by), and the fraction named as moving nothing."""
    nan = np.nan
    summary = pd.DataFrame(
        {
            "point": range(4),
            TTL: [0.25, 0.25, 0.75, 0.75],
            "host_policy.ttl_hint": [nan, 5000.0, nan, 5000.0],
            "replications": 1,
            "failures": 0,
            "hit_rate": [0.50, 0.49, 0.58, 0.49],
        }
    )
    assert unmoved_key_warnings(summary) == []


def test_keys_that_vary_together_are_not_judged():
    """A zip sweep's keys move together: neither is ever compared with the other still."""
    rows = [(0, "best_practice", 0.25), (1, "never", 0.75)]
    assert unmoved_key_warnings(_summary(rows, {"hit_rate": [0.0, 0.0]})) == []


def test_a_link_swept_on_the_vector_engine_is_named():
    """The vector engine has no network timing: its links' latencies move nothing."""
    study = {**_study(), "engine": "vector"}
    study["sweep"] = {"grid": {"topology.link.latency": ["1ms", "5ms"], RATE: [0, 0.02]}}
    told = _told(study)
    assert not [line for line in told if "same numbers" in line]  # (the rule said why)
    assert (
        "all points: topology.link.latency is swept, but the vector engine has no network, "
        "processing or session timing: its values change nothing there"
    ) in told


def _validate(tmp_path, capsys, study: dict, *overrides: str) -> list[str]:
    path = write_yaml(tmp_path, study)
    assert main(["validate", str(path), *(f"--set={o}" for o in overrides)]) == 0
    return [line for line in capsys.readouterr().err.splitlines() if "is swept" in line]


def test_validate_names_a_swept_key_the_points_give_no_say(tmp_path, capsys):
    """Before anything runs: a fixed hint replaces the fraction; the vector engine has no
    timing. A key with a say is not named, nor one whose say a swept key takes at some points
    (a hint swept as [null, 5 s] beside the fractions: the grid meant it, and the check after
    the run does not name the fraction either)."""
    assert _validate(tmp_path, capsys, _study()) == []
    assert _validate(tmp_path, capsys, _study(), "sweep.grid.host_policy.ttl_hint=[null, 5s]") == []
    told = _validate(tmp_path, capsys, _study(), "host_policy.ttl_hint=5s")
    assert told == [
        "warning: all points: host_policy.ttl_fraction is swept, but host_policy.ttl_hint is "
        "set, and a fixed hint replaces the fraction: its values change nothing there"
    ]
    vector = {**_study(), "engine": "vector"}
    told = _validate(tmp_path, capsys, vector, "sweep.grid.topology.server_workers=[1, 2]")
    assert told == [
        "warning: all points: topology.server_workers is swept, but the vector engine has no "
        "network, processing or session timing: its values change nothing there"
    ]


def test_a_timing_key_set_on_the_vector_engine_is_named_before_and_after_the_run(tmp_path, capsys):
    """Fixed, not swept (``invalidation_sweep``'s 5 ms links with ``--set engine=vector``):
    it changed nothing and nothing said so. The DES, or the default value, is not named."""
    vector = {**_study(topology={"link": {"latency": "5ms"}}), "engine": "vector"}
    said = (
        "topology.link.latency is 5 ms, but the vector engine has no network, processing or "
        "session timing: it changes nothing there"
    )
    assert main(["validate", str(write_yaml(tmp_path, vector))]) == 0
    assert f"warning: all points: {said}" in capsys.readouterr().err.splitlines()
    assert f"all points: {said}" in _told(vector)  # (what run and sweep warn of)
    for quiet in ({**vector, "engine": "des"}, {**_study(), "engine": "vector"}):
        assert main(["validate", str(write_yaml(tmp_path, quiet))]) == 0
        assert "changes nothing there" not in capsys.readouterr().err


TIMING_VALUES = {
    "topology.link.latency": ["1ms", "5ms"],
    "topology.link.bandwidth": ["1Gbit/s", "10Gbit/s"],
    "topology.link.retransmit_timeout": ["10ms", "50ms"],
    "topology.per_operation_cost": ["10us", "1ms"],
    "topology.per_inline_byte_cost": ["0ns", "5ns"],
    "topology.per_put_byte_cost": ["0ns", "5ns"],
    "topology.server_workers": [1, 4],
    "workload.operations.max_in_flight": [1, 4],
}


def test_every_key_validate_calls_untimed_moves_nothing_on_the_vector_engine():
    """The list ``validate`` warns by is the vector engine's: each key in it, swept there,
    gives the same numbers at every value (by the check after the run), on two servers."""
    from nnrpsim.inert_keys import UNTIMED_ON_VECTOR

    assert set(TIMING_VALUES) == set(UNTIMED_ON_VECTOR) - {"topology.link"}
    base = {**_study(), "engine": "vector"}
    for key, values in TIMING_VALUES.items():
        sweep = [f"sweep.grid.{key}=[{', '.join(map(str, values))}]", "topology.servers=2"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StudyWarning)
            summary = nnrpsim.sweep(base, sweep, progress=False)
        told = unmoved_key_warnings(summary)
        assert told and told[0].startswith(f"warning: {key}"), key


def test_numbers_that_differ_by_rounding_alone_are_the_same():
    """The vector engine replays ``renewal: extend`` on the lease table and ``touch`` beside
    it: where no lease renews, their mean memory differs in the last bit only."""
    held = 2003973.07084
    summary = _summary(POLICIES_BY_TTLS[:2], {"mean_gpu_bytes": [held, held * (1 + 2e-16)]})
    assert summary["mean_gpu_bytes"].iloc[0] != summary["mean_gpu_bytes"].iloc[1]
    assert unmoved_key_warnings(summary.drop(columns="host_policy.name"))[0].startswith(
        f"warning: {TTL}: its values"
    )
    summary.loc[1, "mean_gpu_bytes"] = held * (1 + 1e-9)  # a difference of its own
    assert unmoved_key_warnings(summary.drop(columns="host_policy.name")) == []
