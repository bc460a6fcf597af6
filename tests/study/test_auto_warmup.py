"""``study.warmup: auto``: each point's least warm-up that keeps its sessions at once, averaged
over the measured time, within 1 % of their steady number. A sweep of session lengths needed
a warm-up zipped to each by hand (one fixed warm-up was too short for the long sessions, or
wasted the short ones' runs)."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.checks.timing import warmup_advice
from nnrpsim.cli import main
from nnrpsim.model.workload_means import LEVEL, measured_ramp
from nnrpsim.recorded import auto_warmups_ms, recorded_warmup_ms
from nnrpsim.scenario import ScenarioError, load_scenario, sweep_points
from nnrpsim.warmup import describe_warmups
from tests.conftest import write_yaml

STUDY = {
    "study": {"name": "auto", "seed": 8, "replications": 1, "duration": "2min", "warmup": "auto"},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "20s"}, "operations": {"rate_per_s": 1}},
}
LENGTHS = (
    "sweep={grid: {workload.sessions.duration: [5s, 20s, 40s], "
    "workload.sessions.duration_cv: [0, 0.5, 1]}}"
)


def _points(*overrides: str):
    return sweep_points(load_scenario(STUDY, list(overrides)))


def test_each_point_gets_the_least_whole_second_that_keeps_its_sessions_within_one_percent():
    points = _points(LENGTHS, "study.duration=10min")
    chosen = {point.scenario.study.warmup for point in points}
    assert len(chosen) >= 5  # (each length and spread its own)
    for point in points:
        study, sessions = point.scenario.study, point.scenario.workload.sessions
        warmup, timing = study.warmup, (sessions.duration, sessions.duration_cv)
        assert warmup % 1000 == 0 and 0 <= warmup < study.duration
        assert measured_ramp(warmup, study.duration, *timing) >= LEVEL
        assert warmup == 0 or measured_ramp(warmup - 1000, study.duration, *timing) < LEVEL
    # validate's warm-up check has nothing to say of them
    assert warmup_advice(points, len(points)) == []
    # where one fixed warm-up was too short for the long sessions
    fixed = _points(LENGTHS, "study.duration=10min", "study.warmup=20s")
    assert warmup_advice(fixed, len(fixed))


def test_a_run_with_auto_is_the_run_with_its_warmup_written_out():
    """Same seed, same numbers: auto only chooses the number."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)
        auto = nnrpsim.sweep(STUDY, progress=False)
        (point,) = _points()
        written = f"study.warmup={point.scenario.study.warmup / 1e3:g}s"
        fixed = nnrpsim.sweep(STUDY, [written], progress=False)
        longer = nnrpsim.sweep(STUDY, ["study.warmup=60s"], progress=False)
    assert point.scenario.study.warmup > 0
    pd.testing.assert_frame_equal(auto, fixed)
    assert auto["hit_rate"].iloc[0] != longer["hit_rate"].iloc[0]


def test_the_manifest_keeps_each_point_s_warmup_and_the_plots_shade_a_shared_one(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)
        result = nnrpsim.run(
            STUDY,
            out=tmp_path / "r",
            progress=False,
            overrides=["sweep={grid: {workload.sessions.duration: [5s, 20s]}}"],
        )
    manifest = json.loads((result.path / "manifest.json").read_text())
    assert manifest["scenario"]["study"]["warmup"] == "auto"
    expected = [
        point.scenario.study.warmup
        for point in _points("sweep={grid: {workload.sessions.duration: [5s, 20s]}}")
    ]
    assert manifest["point_warmups_ms"] == expected and len(set(expected)) == 2
    assert recorded_warmup_ms(result.path) == 0.0  # (theirs differ: none is shaded)
    assert auto_warmups_ms(result.path) == expected
    manifest["point_warmups_ms"] = [expected[1]] * 2
    (result.path / "manifest.json").write_text(json.dumps(manifest))
    assert recorded_warmup_ms(result.path) == expected[1]
    del manifest["point_warmups_ms"]  # a study written before auto: the study's one
    manifest["scenario"]["study"]["warmup"] = 7000.0
    (result.path / "manifest.json").write_text(json.dumps(manifest))
    assert recorded_warmup_ms(result.path) == 7000.0
    assert auto_warmups_ms(result.path) == []
    (result.path / "manifest.json").write_text('{"scenario": [], "point_warmups_ms": 3}')
    assert auto_warmups_ms(result.path) == [] and recorded_warmup_ms(result.path) == 0.0


def test_run_says_what_auto_chose_and_a_written_warmup_says_nothing(tmp_path, capsys):
    path = write_yaml(tmp_path, STUDY)
    assert main(["run", str(path), "--out", str(tmp_path / "auto"), "--quiet"]) == 0
    (point,) = _points()
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        "warm-up (auto: the sessions at once within 1 % of their steady number, averaged over "
        f"the measured time): {point.scenario.study.warmup / 1e3:g} s"
    )
    written = ["--set", "study.warmup=10s", "--out", str(tmp_path / "fixed"), "--quiet"]
    assert main(["run", str(path), *written]) == 0
    assert "warm-up" not in capsys.readouterr().out


def test_validate_says_what_auto_chose(tmp_path, capsys):
    path = write_yaml(tmp_path, STUDY)
    assert main(["validate", str(path)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "warm-up" in line]
    (point,) = _points()
    assert line.strip().startswith("warm-up (auto: the sessions at once within 1 %")
    assert line.endswith(f"measured time): {point.scenario.study.warmup / 1e3:g} s")
    lengths = "sweep={grid: {workload.sessions.duration: [5s, 20s], topology.hosts: [1, 2, 3]}}"
    assert main(["validate", str(path), "--set", lengths]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "warm-up" in line]
    warmups = [p.scenario.study.warmup / 1e3 for p in _points(lengths)]
    assert warmups[0] != warmups[3]
    assert line.endswith(f"points 0, 1, 2: {warmups[0]:g} s; points 3, 4, 5: {warmups[3]:g} s")


def test_many_warm_ups_alike_are_said_as_their_range():
    """A sweep of 1,000 session lengths listed its warm-ups in a line of 17,100 characters."""
    lengths = ", ".join(f"{10 + i}s" for i in range(41))
    warmups = [
        p.scenario.study.warmup / 1e3
        for p in _points(f"sweep={{grid: {{workload.sessions.duration: [{lengths}]}}}}")
    ]
    assert len(set(warmups)) == 41
    assert describe_warmups([w * 1e3 for w in warmups]) == (
        "warm-ups (auto: the sessions at once within 1 % of their steady number, averaged over "
        f"the measured time): {min(warmups):g} to {max(warmups):g} s (each point by its own "
        "numbers, in these ranges)"
    )
    assert describe_warmups([w * 1e3 for w in warmups[:40]]).endswith(
        f"point 38: {warmups[38]:g} s; point 39: {warmups[39]:g} s"
    )


def test_where_auto_has_no_value_the_error_names_it(tmp_path, capsys):
    arrivals = tmp_path / "a.csv"
    arrivals.write_text("t\n0\n1000\n2000\n")
    log = f"workload.sessions.arrivals={{path: {arrivals}, column: t}}"
    with pytest.raises(ScenarioError, match=r"^study\.warmup: auto needs a synthetic workload"):
        _points(log)
    with pytest.raises(ScenarioError, match=r"^study\.warmup: auto needs"):  # (not the sweep's)
        _points(log, "sweep={grid: {host_policy.ttl_fraction: [0.5, 0.75]}}")
    with pytest.raises(
        ScenarioError, match=r"^study\.warmup: auto: no warm-up within this 2 s run"
    ):
        _points("study.duration=2s")
    # where the sweep is why, its point is named
    long = "sweep={grid: {workload.sessions.duration: [20s, 10min]}}"
    with pytest.raises(ScenarioError) as caught:
        _points(long)
    assert str(caught.value).startswith(
        "sweep point 1 (workload.sessions.duration: '10min'): study.warmup: auto: no warm-up "
        "within this 120 s run"
    )
    path = write_yaml(tmp_path, STUDY)
    assert main(["validate", str(path), "--set", long]) == 2
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith("error: sweep point 1")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("-5", "must be at least 0"),
        ("autumn", "malformed duration 'autumn'"),
        ("null", "must be a duration"),
    ],
)
def test_a_bad_warmup_is_one_line_naming_the_key(value, said):
    with pytest.raises(ScenarioError) as caught:
        load_scenario(STUDY, [f"study.warmup={value}"])
    assert str(caught.value).startswith(f"study.warmup: {said}")
