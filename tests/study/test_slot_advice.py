"""Operations that reference two objects of a kind with one FRAME_SUBMIT slot are said so,
before a study runs and by it: NNRP/1 carries one of each such kind a frame, the model one
frame an operation, so its wire_bytes leave the further frames out."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.checks.slots import most_per_operation, slot_advice
from nnrpsim.scenario import load_scenario, sweep_points
from tests.study.advice import advice, run_numbers

SAID = (
    "warning: all points: an operation may reference up to {} objects, of kinds with one "
    "object_ref_mask slot: NNRP/1 carries one of each such kind a FRAME_SUBMIT, inline or by "
    "reference (spec section 13), and the model sends one frame an operation: wire_bytes "
    "leaves out the further frames (144 bytes each and more)"
)
SLOTTED = {
    "study": {"name": "slots", "duration": "2min", "warmup": "30s", "replications": 1},
    "workload": {
        "sessions": {"rate_per_s": 0.2},
        "objects": {
            "private_per_session": 8,
            "private_kinds": {"prompt_segment": 1, "tensor_section_table": 1},
            "shared_kinds": {"prompt_segment": 1, "camera_block": 1},
        },
        "operations": {"private_refs": 3},
    },
}


def test_a_workload_that_may_put_two_of_a_slotted_kind_in_a_frame_is_said_so():
    # 25 camera blocks of a namespace's 50, drawn twice an operation; 4 section tables of a
    # session's 8, drawn three times
    said = SAID.format("2 camera_block and 3 tensor_section_table")
    assert advice(slot_advice, SLOTTED) == [said]
    assert said in nnrpsim.validate(SLOTTED).warnings
    one_each = ["workload.operations.shared_refs=1", "workload.objects.private_per_session=2"]
    assert advice(slot_advice, SLOTTED, *one_each) == []  # (at most one of each)
    assert advice(slot_advice, SLOTTED, "workload.operations.private_refs=0") == [
        SAID.format("2 camera_block")
    ]


@pytest.mark.parametrize("scenario", ["quickstart", "object_kinds"])
def test_the_librarys_scenarios_are_not_named(scenario):
    """object_kinds gives a session one section table among its four private objects."""
    points = sweep_points(load_scenario(f"scenarios/{scenario}.yaml"))
    assert slot_advice(points, len(points)) == []


def test_a_logs_operations_are_counted_object_by_object(tmp_path):
    log = tmp_path / "log.csv"
    rows = [  # operation 1 names camera a twice and b once; operation 2 one camera, two tables
        "0,a,100,1,camera_block",
        "0,a,100,1,camera_block",
        "0,b,100,1,camera_block",
        "0,p,100,1,prompt_segment",
        "5,c,100,2,camera_block",
        "5,t,100,2,tensor_section_table",
        "5,u,100,2,tensor_section_table",
    ]
    log.write_text("time_ms,object,size_bytes,operation,kind\n" + "\n".join(rows) + "\n")
    study = {
        "study": {"name": "log", "duration": "10ms", "warmup": "0s", "replications": 1},
        "engine": "vector",
        "workload": {"trace": {"path": str(log), "format": "csv"}},
    }
    (point,) = sweep_points(load_scenario(study))
    assert most_per_operation(point.scenario) == {"camera_block": 2, "tensor_section_table": 2}
    said = SAID.format("2 camera_block and 2 tensor_section_table")
    assert advice(slot_advice, study) == [said]
    assert said.removeprefix("warning: ") in run_numbers(study, ["hit_rate"])[1]  # (as it ends)
