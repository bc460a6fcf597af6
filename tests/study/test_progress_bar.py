"""The progress bar of a study counts runs and parts of runs: a DES run tells its share done as
it goes, from a worker process too; a finished run of either engine counts 1."""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import sys
import time

import pytest

import nnrpsim
from nnrpsim import one_run, run_progress, study, validation
from nnrpsim.runner import _in_slot, execute, local_workers
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.tasks import tasks_for

BOTH_ENGINES = {
    "study": {"name": "bar", "seed": 1, "replications": 1, "duration": "60s", "warmup": "10s"},
    "workload": {"sessions": {"rate_per_s": 0.5, "duration": "20s"}},
    "sweep": {"grid": {"engine": ["des", "vector"]}},
}


def test_a_des_run_in_a_worker_tells_its_slot_and_each_finished_run_counts_one():
    tasks = tasks_for(sweep_points(parse_scenario(BOTH_ENGINES)))
    engines = [task.scenario.engine for task in tasks]
    shares = run_progress.RunShares(len(tasks))
    with local_workers(2, "local", len(tasks), shares) as pool:
        assert pool is not None
        for slot, task in enumerate(tasks):
            pool.submit(_in_slot, task, slot).result()
    # the DES run wrote its share as it went, up to all of it; a vector run tells nothing
    assert {engine: share for engine, share in zip(engines, shares.slots, strict=True)} == {
        "des": 1.0,
        "vector": 0.0,
    }
    for jobs in (1, 2):  # in this process, and on workers: a run counts 1 once it is back
        shares = run_progress.RunShares(len(tasks))
        assert len(list(execute(tasks, jobs, shares=shares))) == len(tasks)
        assert list(shares.slots) == [1.0, 1.0]


@pytest.fixture
def shown(monkeypatch) -> list[float]:
    """What the bar shows, each time it is drawn (every 5 ms)."""
    drawn: list[float] = []
    show = run_progress._show
    monkeypatch.setattr(run_progress, "REFRESH_S", 0.005)
    monkeypatch.setattr(
        run_progress, "_show", lambda bar, runs: drawn.append(runs) or show(bar, runs)
    )
    return drawn


LONG_RUN = {
    "study": {"name": "one", "seed": 2, "replications": 1, "duration": "10min", "warmup": "1min"},
    "workload": {"sessions": {"rate_per_s": 2, "duration": "60s"}},
}


def test_the_bar_of_one_long_run_moves_while_it_runs(tmp_path, shown):
    """A study of one run showed 0/1 until it ended; now the bar reads the run's share done."""
    result = nnrpsim.run(parse_scenario(LONG_RUN), out=tmp_path / "one", jobs=1, progress=True)
    assert result.status == "complete"
    assert any(0 < runs < 1 for runs in shown) and shown[-1] == 1.0
    assert shown == sorted(shown)


def test_a_notebooks_sweep_shows_the_bar_of_runs_on_workers(shown):
    """``sweep`` had no bar; its runs on two workers tell their shares done to it."""
    raw = {**LONG_RUN, "study": {**LONG_RUN["study"], "replications": 2}}
    summary = nnrpsim.sweep(raw, jobs=2)
    assert summary["replications"].tolist() == [2]
    assert any(not runs.is_integer() for runs in shown) and shown[-1] == 2.0
    assert shown == sorted(shown)
    shown.clear()
    nnrpsim.sweep(raw, jobs=2, progress=False)
    assert shown == []


@pytest.fixture
def setup_soon(monkeypatch) -> None:
    """The setup's line from 20 ms on (a second, as used), redrawn every 5 ms."""
    monkeypatch.setattr(run_progress, "SETUP_SHOWN_AFTER_S", 0.02)
    monkeypatch.setattr(run_progress, "REFRESH_S", 0.005)


def test_a_long_setup_says_it_goes_on_and_for_how_long_then_clears_its_line(setup_soon, capsys):
    with run_progress.setup_shown(True):
        time.sleep(0.3)
    drawn = capsys.readouterr().err
    assert f"\r{run_progress.SETUP} (0 s)" in drawn
    assert drawn.endswith("\r" + " " * len(f"{run_progress.SETUP} (0 s)") + "\r")  # (cleared)
    for show, seconds in ((True, 0.0), (False, 0.3)):  # (a short setup; none shown)
        with run_progress.setup_shown(show):
            time.sleep(seconds)
        assert capsys.readouterr().err == ""


def test_validate_run_sweep_and_records_show_it_unless_told_not_to(
    setup_soon, capsys, monkeypatch, tmp_path
):
    """100,000 points took 18 s to validate, and 11 s to set up before the runs' bar, without
    a word."""
    raw = {**BOTH_ENGINES, "study": {**BOTH_ENGINES["study"], "duration": "5s", "warmup": "0s"}}
    for module in (study, validation, one_run):  # (a big sweep's setup, in small)
        expanded = module.sweep_points
        monkeypatch.setattr(module, "sweep_points", lambda s, e=expanded: time.sleep(0.1) or e(s))
    steps = {
        "validate": lambda progress: nnrpsim.validate(raw, progress=progress),
        "run": lambda progress: nnrpsim.run(raw, out=tmp_path / str(progress), progress=progress),
        "sweep": lambda progress: nnrpsim.sweep(raw, progress=progress),
        "records": lambda progress: nnrpsim.run_records(raw, progress=progress),
    }
    for name, step in steps.items():
        for progress in (True, False):
            step(progress)
            said = run_progress.SETUP in capsys.readouterr().err
            assert said == progress, (name, progress)


def test_the_setup_line_says_its_step_and_how_many_points_it_is_at(
    setup_soon, capsys, monkeypatch, tmp_path
):
    """Validating 100,000 points took 21 s, setting up their study 14 s, told as seconds
    alone: now with the step that takes them (sizing the runs, checking the points' settings,
    describing them) and the sweep's points."""
    raw = {**BOTH_ENGINES, "study": {**BOTH_ENGINES["study"], "duration": "5s", "warmup": "0s"}}
    for module in (study, validation):  # (a big sweep's steps, in small)
        sized = module.point_sizes
        monkeypatch.setattr(module, "point_sizes", lambda p, s=sized: time.sleep(0.1) or s(p))
    slow = validation.ADVICE[0]
    monkeypatch.setattr(validation, "ADVICE", (lambda p, n: time.sleep(0.1) or slow(p, n),))
    steps = {
        "validate": lambda: nnrpsim.validate(raw),
        "run": lambda: nnrpsim.run(raw, out=tmp_path / "run"),
        "sweep": lambda: nnrpsim.sweep(raw),
    }
    for name, step in steps.items():
        step()
        drawn = capsys.readouterr().err
        assert f"{run_progress.SETUP} (2 points: sizing their runs, 0 s)" in drawn, name
        assert ("2 points: checking their settings" in drawn) == (name == "validate"), name
    with run_progress.setup_shown(True) as told:
        told(1, "sizing their runs")
        time.sleep(0.1)
    assert f"{run_progress.SETUP} (1 point: sizing their runs, 0 s)" in capsys.readouterr().err


def test_a_terminal_of_no_rows_shows_the_bars():
    """tqdm took a terminal that says it has no rows (a pseudo-terminal given no size, as
    ``script`` makes without a terminal of its own) for one of -1 rows, and drew nothing: no
    study's bar, no run's, no setup line."""
    code = (
        "import time\n"
        "from nnrpsim import run_progress\n"
        "run_progress.SETUP_SHOWN_AFTER_S = 0.0\n"
        "bar, _ = run_progress.study_bar('a study', 2, True)\n"
        "with bar:\n"
        "    bar.update(1)\n"
        "with run_progress.setup_shown(True):\n"
        "    time.sleep(0.2)\n"
    )
    fcntl, termios = pytest.importorskip("fcntl"), pytest.importorskip("termios")  # (POSIX)
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 120, 0, 0))
    with os.fdopen(leader, "rb", buffering=0) as screen:
        done = subprocess.run([sys.executable, "-c", code], stderr=follower, timeout=60)
        os.close(follower)
        drawn = b""
        with contextlib.suppress(OSError):  # (Linux: EIO once it is read to its end)
            while chunk := screen.read(4096):
                drawn += chunk
    assert done.returncode == 0
    assert b"a study:  50%" in drawn and run_progress.SETUP.encode() in drawn
