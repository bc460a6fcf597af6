"""A fault timed where a study cannot see it is named before the run and after it: one after
the runs' end never happens (it ran as if unset, and nothing said so), one at the end itself
reaches only its notices and the last memory sample, one within the warm-up leaves only its
tail measured."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.checks.timing import fault_time_advice
from tests.study.advice import advice, run_numbers

STUDY = {
    "study": {"name": "faults", "seed": 3, "replications": 1, "duration": "40s", "warmup": "10s"},
    "topology": {"gpu_memory": "2MiB"},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "20s"}, "operations": {"rate_per_s": 2}},
}
NUMBERS = ["hit_rate", "mean_gpu_bytes", "wire_bytes", "invalidations", "memory_settled_s"]
SHIFT = "; set it within study.duration"
FAULTS = [("restart_at", "restart"), ("memory_pressure_at", "budget cut")]


def _advice(*overrides: str) -> list[str]:
    return advice(fault_time_advice, STUDY, *overrides)


def _numbers(*overrides: str) -> tuple[list, list[str]]:
    return run_numbers(STUDY, NUMBERS, *overrides)


@pytest.mark.parametrize(("key", "fault"), FAULTS)
def test_a_fault_after_the_end_is_named_and_changes_nothing(key, fault):
    told = f"all points: faults.{key} is 40.1 s, after the runs' end (40 s): no {fault} happens"
    assert _advice(f"faults.{key}=40.1s") == [f"warning: {told}{SHIFT}"]
    late, said = _numbers(f"faults.{key}=40.1s")
    assert f"{told}{SHIFT}" in said
    assert late == _numbers()[0]


@pytest.mark.parametrize(("key", "fault"), FAULTS)
def test_a_fault_at_the_end_reaches_only_the_last_memory_sample(key, fault):
    assert _advice(f"faults.{key}=40s") == [
        f"warning: all points: faults.{key} is 40 s, the runs' end: of the {fault}, the runs "
        f"see only its notices, sent at once, and their last memory sample{SHIFT}"
    ]
    at_end, unset = _numbers(f"faults.{key}=40s")[0], _numbers()[0]
    # the hit rate and the memory held over the measured time alike (it ends as the fault
    # comes); the fault's notices counted
    assert at_end[:2] == unset[:2] and at_end[3] > unset[3]


def test_a_fault_within_the_warm_up_is_named_and_one_after_it_is_not():
    assert _advice("faults.restart_at=5s") == [
        "warning: all points: faults.restart_at is 5 s, within the 10 s warm-up: the runs measure "
        "only what follows the restart once the warm-up ends; set it after study.warmup"
    ]
    assert _advice("faults.restart_at=10s", "faults.memory_pressure_at=39s") == []
    # validate says it too
    (told,) = _advice("faults.restart_at=5s")
    assert told in nnrpsim.validate(STUDY, ["faults.restart_at=5s"]).warnings


def test_a_swept_fault_time_is_named_at_its_points():
    sweep = "sweep={grid: {faults.restart_at: [null, 5s, 20s, 1min], topology.hosts: [1, 2]}}"
    assert [line.split(": faults")[0] for line in _advice(sweep)] == [
        "warning: points 2, 3",
        "warning: points 6, 7",
    ]
