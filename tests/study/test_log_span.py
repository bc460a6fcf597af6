"""A run that outlasts its trace or arrival log, or replays only part of its trace, is said so
by ``validate`` and by the study: an idle end takes ``mean_gpu_bytes`` down with it (the
Mooncake trace's, run an hour where it spans 17 minutes: 239 GB held on average against 840,
the hit rate unchanged) with no word of why."""

from __future__ import annotations

import warnings

import pytest

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.cli import main
from tests.conftest import write_yaml

REQUEST = '{{"timestamp": {}, "input_length": 600, "hash_ids": [1, 2]}}\n'


@pytest.fixture
def trace(tmp_path):
    """Eight requests, 500 ms apart: its last reference at 3.5 s."""
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(REQUEST.format(t) for t in range(0, 4000, 500)))
    return path


def _validate_warnings(
    tmp_path, capsys, workload: dict, duration: str, warmup: str = "0s"
) -> list[str]:
    raw = {"study": {"duration": duration, "warmup": warmup, "replications": 1}}
    raw["workload"] = workload
    assert main(["validate", str(write_yaml(tmp_path, raw))]) == 0
    # (no closed-form warm-up advice for a log)
    return capsys.readouterr().err.splitlines()


def test_a_run_past_its_traces_end_is_said_so(tmp_path, capsys, trace):
    (line,) = _validate_warnings(tmp_path, capsys, {"trace": {"path": str(trace)}}, "10s")
    assert line == (
        "warning: all points: the runs last 10 s, 6.5 s past the last reference of "
        "trace.jsonl, at 3.5 s: mean_gpu_bytes and the other averages over time take in the "
        "idle end; set study.duration to 3501ms"  # (4s would leave 499 ms idle, 12 %)
    )


def test_a_run_that_replays_part_of_its_trace_is_said_so(tmp_path, capsys, trace):
    (line,) = _validate_warnings(tmp_path, capsys, {"trace": {"path": str(trace)}}, "1200ms")
    assert line == (
        "warning: all points: the runs last 1.2 s and replay 6 of the 16 references of "
        "trace.jsonl (it spans 3.5 s); set study.duration to 3501ms to replay it all"
    )


@pytest.mark.parametrize("duration", ["3501ms", "3535ms"])  # (the end, and 1 % past it)
def test_a_run_that_ends_with_its_trace_is_not(tmp_path, capsys, trace, duration):
    assert _validate_warnings(tmp_path, capsys, {"trace": {"path": str(trace)}}, duration) == []


def test_a_warm_up_that_outlasts_the_trace_is_said_so(tmp_path, capsys, trace):
    """Its runs measure nothing (every rate NaN): lengthening the run would not help."""
    workload = {"trace": {"path": str(trace)}}
    (line,) = _validate_warnings(tmp_path, capsys, workload, "10s", warmup="5s")
    assert line == (
        "warning: all points: the 5 s warm-up outlasts the last reference of trace.jsonl, at "
        "3.5 s: the runs measure nothing; shorten study.warmup"
    )
    # the idle end is judged against the measured time: 0.1 s of 0.6 s
    assert (
        "past the last reference"
        in _validate_warnings(tmp_path, capsys, workload, "3.6s", warmup="3s")[0]
    )


def test_arrivals_are_said_to_end_only_when_their_sessions_have(tmp_path, capsys):
    """A long arrival log cut short is its ordinary use; its sessions last past its last
    arrival."""
    log = tmp_path / "arrivals.csv"
    log.write_text("TIMESTAMP\n0\n1000\n2000\n")
    workload = {"sessions": {"arrivals": {"path": str(log)}, "duration": "3s"}}
    assert _validate_warnings(tmp_path, capsys, workload, "1s") == []
    assert _validate_warnings(tmp_path, capsys, workload, "5s") == []
    (line,) = _validate_warnings(tmp_path, capsys, workload, "20s")
    assert line == (
        "warning: all points: the runs last 20 s, 15 s past the sessions of arrivals.csv "
        "(its last arrival at 2 s, and a 3 s session): mean_gpu_bytes and the other "
        "averages over time take in the idle end; set study.duration to 5s"
    )


def test_the_study_says_so_too(trace):
    raw = {
        "study": {"duration": "10s", "replications": 1},
        "engine": "vector",
        "workload": {"trace": {"path": str(trace)}},
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nnrpsim.sweep(raw)
    told = [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]
    assert any("6.5 s past the last reference of trace.jsonl" in line for line in told), told
