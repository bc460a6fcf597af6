"""The files a study's runs read (traces, arrival logs): each run reads them as it starts, in
whichever process or machine runs it. A run that finds other content than the study read as
it began (the file changed since, or a cluster worker's copy differs) fails, saying so,
where it read the other content silently; ``records``, run again from a study's folder after
its trace changed, says so."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import nnrpsim
import nnrpsim.runner as runner
from nnrpsim.checks import StudyWarning
from nnrpsim.cli import main
from nnrpsim.scenario import load_scenario, sweep_points
from nnrpsim.tasks import tasks_for
from nnrpsim.workload_facts import input_digests
from tests.conftest import write_yaml

LINE = '{{"timestamp": {}, "input_length": 600, "hash_ids": [1, 2]}}\n'
OTHER = "holds other content than the study read as it began"


@pytest.fixture
def traced(tmp_path):
    """A two-point vector study over a small Mooncake trace, and the trace."""
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(LINE.format(t) for t in range(0, 4000, 500)))
    scenario = {
        "study": {"replications": 2, "duration": "3501ms"},
        "engine": "vector",
        "workload": {"trace": {"path": str(trace), "block_tokens": 512}},
        "sweep": {"grid": {"host_policy.ttl_fraction": [0.2, 0.5]}},
    }
    return write_yaml(tmp_path, scenario), trace


def _changed_after_the_first_run(monkeypatch, trace):
    real = runner.run_task

    def then_changed(task, progress=None):
        result = real(task, progress)
        if task.point == 0 and task.replication == 0:
            trace.write_text(LINE.format(0) + trace.read_text())  # one request more
        return result

    monkeypatch.setattr(runner, "run_task", then_changed)


def test_runs_after_a_trace_changed_fail_saying_why(tmp_path, traced, monkeypatch):
    scenario, trace = traced
    steady = nnrpsim.run(scenario, out=tmp_path / "steady", jobs=1, progress=False)
    assert steady.runs["error"].isna().all()
    digest = input_digests(sweep_points(load_scenario(scenario)))[str(trace)]
    _changed_after_the_first_run(monkeypatch, trace)
    changed = nnrpsim.run(scenario, out=tmp_path / "changed", jobs=1, progress=False)
    runs = changed.runs.set_index(["point", "replication"])["error"]
    assert pd.isna(runs.loc[(0, 0)])  # (read before the change)
    [error] = set(runs.drop((0, 0)))
    assert error.startswith(f"nnrpsim.scenario.errors.ScenarioError: {trace}: {OTHER} (content ")
    assert error.endswith("here): it changed since, or this worker's copy differs")
    assert f"(content {digest} then, " in error
    assert any(OTHER in line for line in changed.warnings)  # (the failed runs' warning)


def test_sweep_in_memory_says_so_too(traced, monkeypatch):
    scenario, trace = traced
    _changed_after_the_first_run(monkeypatch, trace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nnrpsim.sweep(scenario, jobs=1, progress=False)
    told = [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]
    assert any(OTHER in line for line in told)


def test_a_worker_whose_copy_differs_fails_its_run(traced):
    """On a cluster a worker reads the file at the same path on its own machine."""
    scenario, trace = traced
    points = sweep_points(load_scenario(scenario))
    (task, *_) = tasks_for(points, {str(trace): "0123456789abcdef"})
    assert OTHER in runner.run_task(task)["record"]["error"]
    (task, *_) = tasks_for(points, input_digests(points))
    assert runner.run_task(task)["record"]["error"] is None


def test_records_of_a_study_whose_trace_changed_since_say_so(tmp_path, traced, capsys):
    """``nnrpsim records`` runs a study's run again from its folder: on a changed trace its
    numbers are not the run's of ``runs.parquet``, and the command says why."""
    scenario, trace = traced
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--set", "engine=des", "--quiet"]) == 0
    assert main(["records", str(out), "--quiet"]) == 0
    assert f"{trace} changed" not in capsys.readouterr().err
    trace.write_text(LINE.format(0) + trace.read_text())  # one request more
    assert main(["records", str(out), "--quiet"]) == 0
    [line] = [line for line in capsys.readouterr().err.splitlines() if f"{trace} changed" in line]
    assert line.startswith(f"warning: {trace} changed since the study in {out} read it (content ")
    assert line.endswith(
        " now): this run reads it as it is now, so its numbers need not be the study's"
    )
