"""``nnrpsim.validate``: what ``nnrpsim validate`` reports, for a notebook, which had only the
command (or a sweep that ran) to learn of a study's setup before running it."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.lines_alike import IN_RANGES
from tests.conftest import ROOT, SMALL_STUDY

QUICKSTART = ROOT / "scenarios/quickstart.yaml"
VECTOR_LINKS = ["engine=vector", "topology.link.latency=3ms"]


def test_the_report_and_warnings_are_the_command_s(capsys):
    assert main(["validate", str(QUICKSTART), *(f"--set={o}" for o in VECTOR_LINKS)]) == 0
    out, err = capsys.readouterr()
    validation = nnrpsim.validate(str(QUICKSTART), VECTOR_LINKS)
    assert f"{validation}\n" == out
    assert validation.warnings == err.splitlines()
    assert validation.warnings == [
        "warning: all points: topology.link.latency is 3 ms, but the vector engine has no "
        "network, processing or session timing: it changes nothing there"
    ]
    assert [point.index for point in validation.points] == list(range(10))


def test_a_notebook_shows_one_line_and_a_mapping_is_named_by_its_study():
    validation = nnrpsim.validate(SMALL_STUDY)  # (a 40 s run: its warm-up is too short)
    assert repr(validation) == "<Validation small: 4 sweep points, 1 warning>"
    assert "no warm-up within this 40 s run does" in validation.warnings[0]
    assert str(validation).startswith("small: valid (4 sweep points, 8 runs, engine des)\n  ")


def test_bad_input_is_a_scenario_error_naming_the_key():
    with pytest.raises(nnrpsim.ScenarioError, match=r"^study\.warmup: must be at least 0"):
        nnrpsim.validate(SMALL_STUDY, ["study.warmup=-1"])


def _lengths_swept(count: int) -> list[str]:
    lengths = ", ".join(f"{60 + 2 * i}s" for i in range(count))
    return ["study.duration=20min", f"sweep.grid={{workload.sessions.duration: [{lengths}]}}"]


def test_more_points_than_a_screenful_alike_but_for_their_numbers_are_described_in_one_line():
    """A sweep of 2,000 session lengths was described in 2,848 lines, two a point."""
    each = nnrpsim.validate(QUICKSTART, _lengths_swept(40)).described
    assert [line.split(":")[0] for line in each] == [f"point {i}" for i in range(40)] * 2
    merged = nnrpsim.validate(QUICKSTART, _lengths_swept(41)).described
    last = nnrpsim.validate(QUICKSTART, ["study.duration=20min", "workload.sessions.duration=140s"])
    sessions = [line.split("~")[1].split(" ")[0] for line in (each[0], last.described[0])]
    assert len(merged) == 2 and all(line.endswith(IN_RANGES) for line in merged)
    assert merged[0].startswith(
        f"points 0, 1, 2, 3, 4, 5 (and 35 more): ~{sessions[0]} to {sessions[1]} sessions at once"
    )
