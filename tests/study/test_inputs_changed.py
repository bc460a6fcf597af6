"""A trace or arrival log that changes while a study runs: each run reads the file as it
starts, so the runs after the change read the new content while the manifest records the old.
The study says so at its end (run, and sweep in memory); so does ``records``, run again from a
study's folder after its trace changed."""

from __future__ import annotations

import warnings

import pytest

import nnrpsim
import nnrpsim.runner as runner
from nnrpsim.checks import StudyWarning
from nnrpsim.cli import main
from nnrpsim.study import changed_while_running
from tests.conftest import write_yaml

LINE = '{{"timestamp": {}, "input_length": 600, "hash_ids": [1, 2]}}\n'


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


def _changed_lines(lines, trace) -> list[str]:
    return [line for line in lines if f"{trace} changed " in line]


def test_run_says_a_trace_changed_while_it_ran(tmp_path, traced, monkeypatch):
    scenario, trace = traced
    steady = nnrpsim.run(scenario, out=tmp_path / "steady", jobs=1, progress=False)
    assert _changed_lines(steady.warnings, trace) == []
    _changed_after_the_first_run(monkeypatch, trace)
    changed = nnrpsim.run(scenario, out=tmp_path / "changed", jobs=1, progress=False)
    [line] = _changed_lines(changed.warnings, trace)
    assert line.startswith(f"warning: {trace} changed while the study ran (content ")
    assert line.endswith(
        " now): runs that began after the change read it as it then was; run the study "
        "again, into a new folder"
    )
    # (the runs after the change did read the longer trace: one reference more each)
    assert changed.runs["hit_rate"].nunique() > steady.runs["hit_rate"].nunique()


def test_sweep_says_a_trace_changed_while_it_ran(traced, monkeypatch):
    scenario, trace = traced
    _changed_after_the_first_run(monkeypatch, trace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nnrpsim.sweep(scenario, jobs=1, progress=False)
    told = [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]
    assert len(_changed_lines(told, trace)) == 1


def test_a_file_gone_by_the_end_is_named_as_changed(tmp_path):
    gone = tmp_path / "gone.jsonl"
    [line] = changed_while_running({str(gone): "0123456789abcdef"})
    assert line.startswith(
        f"warning: {gone} changed while the study ran (content 0123456789abcdef as it began, "
        "now it cannot be read: No such file or directory)"
    )


def test_records_of_a_study_whose_trace_changed_since_say_so(tmp_path, traced, capsys):
    """``nnrpsim records`` runs a study's run again from its folder: on a changed trace its
    numbers are not the run's of ``runs.parquet``, and the command says why."""
    scenario, trace = traced
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--set", "engine=des", "--quiet"]) == 0
    assert main(["records", str(out), "--quiet"]) == 0
    assert _changed_lines(capsys.readouterr().err.splitlines(), trace) == []
    trace.write_text(LINE.format(0) + trace.read_text())  # one request more
    assert main(["records", str(out), "--quiet"]) == 0
    [line] = _changed_lines(capsys.readouterr().err.splitlines(), trace)
    assert line.startswith(f"warning: {trace} changed since the study in {out} read it (content ")
    assert line.endswith(
        " now): this run reads it as it is now, so its numbers need not be the study's"
    )
