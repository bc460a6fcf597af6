"""A worker process that dies ends its study with what it finished written, says so, and exits
1 (not 0: a script or CI job must see it); on Dask, the runs it was running fail and the
others go on. A script that calls nnrpsim.run outside the main guard is told so by each
worker, which starts no study of its own, and on Dask by the script's own error too."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from nnrpsim import plots
from nnrpsim.cli import main
from nnrpsim.plots import plot_study
from nnrpsim.runner import WORKERS_FAILED
from nnrpsim.study import PLOT_WORKER_DIED, WORKER_DIED
from tests.conftest import ROOT, SMALL_STUDY, write_yaml

LONGER = {**SMALL_STUDY, "study": {**SMALL_STUDY["study"], "duration": "300s"}}
"""Runs of about a second each: a worker is killed long before the last is written."""


def _kill_a_worker_once_a_run_is_written(runs: Path) -> threading.Thread:
    def kill() -> None:
        deadline = time.monotonic() + 120
        while not list(runs.glob("p*.arrow")) and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(multiprocessing.active_children()[0].pid, signal.SIGKILL)

    killer = threading.Thread(target=kill, daemon=True)
    killer.start()
    return killer


def test_a_dead_worker_stops_the_study_keeps_its_runs_and_exits_1(tmp_path, capsys):
    scenario, out = write_yaml(tmp_path, LONGER), tmp_path / "out"
    command = ["run", str(scenario), "--out", str(out), "--jobs", "2", "--quiet"]
    killer = _kill_a_worker_once_a_run_is_written(out / "runs")
    assert main(command) == 1
    killer.join()
    captured = capsys.readouterr()
    written = pd.read_parquet(out / "runs.parquet")
    assert 1 <= len(written) < 8
    died = [line for line in captured.err.splitlines() if "worker process died" in line]
    assert died == [
        f"warning: a worker process died, so the study stopped with {len(written)} of 8 runs "
        "written (rerun with --resume): the system kills one that runs out of memory, and a "
        "script's workers die as they start where it calls nnrpsim.run outside "
        '`if __name__ == "__main__":`'
    ]
    assert f"results: {out} ({WORKER_DIED})" in captured.out
    assert main([*command, "--resume"]) == 0
    assert len(pd.read_parquet(out / "runs.parquet")) == 8


def _dies_in_a_worker() -> list[Path]:
    """A figure whose drawing kills the worker process that draws it (as the OOM killer
    would), and draws nothing where the study's own process draws it."""
    if multiprocessing.parent_process() is not None:
        os._exit(1)
    return []


@pytest.mark.plots
def test_a_worker_that_dies_drawing_the_plots_leaves_them_drawn_by_the_study(
    tmp_path, capsys, monkeypatch
):
    figures = plots._figures
    monkeypatch.setattr(plots, "_figures", lambda *args: [(_dies_in_a_worker, ()), *figures(*args)])
    scenario, out = write_yaml(tmp_path, SMALL_STUDY), tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--jobs", "2", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert f"warning: {PLOT_WORKER_DIED}" in captured.err.splitlines()
    assert "Traceback" not in captured.err
    drawn = sorted(path.name for path in (out / "plots").glob("*.png"))
    assert drawn and f"{len(drawn)} plots" in captured.out
    monkeypatch.setattr(plots, "_figures", figures)
    assert sorted(path.name for path in plot_study(out) if path.suffix == ".png") == drawn


def _unguarded(tmp_path: Path, arguments: str, after: str = "") -> subprocess.CompletedProcess:
    """A script that calls ``nnrpsim.run`` on a small study with ``arguments``, outside the
    main guard, then runs ``after``: run in a process of its own."""
    scenario = write_yaml(tmp_path, SMALL_STUDY)
    script = tmp_path / "unguarded.py"
    script.write_text(
        f"import nnrpsim\nresult = nnrpsim.run({str(scenario)!r}, {arguments})\n{after}"
    )
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )


def test_a_script_without_the_main_guard_is_told_and_its_workers_start_no_study(tmp_path):
    shown = "print(result.status)\nprint(*result.warnings, sep='\\n')\n"
    done = _unguarded(tmp_path, "out='out', jobs=2, progress=False", shown)
    told = (
        "RuntimeError: nnrpsim.run or nnrpsim.sweep was called as a worker process started: a "
        'script must call them under `if __name__ == "__main__":`'
    )
    assert done.returncode == 0 and told in done.stderr
    assert done.stdout.splitlines()[0] == WORKER_DIED
    assert "stopped with 0 of 8 runs written" in done.stdout
    assert not list((tmp_path / "out/runs").glob("*.arrow"))


def test_a_script_without_the_main_guard_on_dask_is_told_in_one_line(tmp_path):
    """Its cluster's workers each print the line above as they fail to start; distributed
    then raised a bare "Nanny failed to start." in the script, which now says what to do."""
    pytest.importorskip("dask.distributed")
    done = _unguarded(tmp_path, "out='out', jobs=2, executor='dask', progress=False")
    assert done.returncode == 1
    assert "nnrpsim.run or nnrpsim.sweep was called as a worker process started" in done.stderr
    last = done.stderr.splitlines()[-1]  # (distributed's own words in the parentheses)
    assert last.startswith(
        "nnrpsim.scenario.errors.ScenarioError: --executor: Dask's local cluster did not start ("
    )
    assert last.endswith(f"): {WORKERS_FAILED}")
    assert not (tmp_path / "out").exists()


def test_a_local_dask_cluster_that_does_not_start_is_one_line(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")

    def refused(**_):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", refused)
    scenario, out = write_yaml(tmp_path, SMALL_STUDY), tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--executor", "dask"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: --executor: Dask's local cluster did not start (Nanny failed to start.): "
        f"{WORKERS_FAILED}"
    ]
    assert not out.exists()


def test_a_run_whose_dask_worker_died_is_a_failed_run_and_the_others_go_on(tmp_path, capsys):
    """Dask starts a dead worker again and gives its runs to the others; one that was running
    on it, tried on as many workers as the scheduler allows, fails with KilledWorker."""
    pytest.importorskip("dask.distributed")  # (imported before the set below, which would
    import dask  # otherwise take its defaults away again as it ends)

    scenario, out = write_yaml(tmp_path, LONGER), tmp_path / "out"
    command = ["run", str(scenario), "--out", str(out), "--jobs", "2", "--quiet"]
    killer = _kill_a_worker_once_a_run_is_written(out / "runs")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        assert main([*command, "--executor", "dask"]) == 1
    killer.join()
    captured = capsys.readouterr()
    runs = pd.read_parquet(out / "runs.parquet")
    failed = runs["error"].dropna()
    assert len(runs) == 8 and 1 <= len(failed) < 8
    assert set(failed) == {"KilledWorker: the Dask worker running it died (out of memory?)"}
    assert "results: " in captured.out and "(complete)" in captured.out
    assert main([*command, "--resume"]) == 0
    assert pd.read_parquet(out / "runs.parquet")["error"].isna().all()


def _workers_of(pid: int) -> list[int]:
    """The spawned worker processes of process ``pid`` (Linux's /proc)."""
    workers = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):  # (gone in between)
            continue
        if int(fields[1]) == pid and b"spawn_main" in command:
            workers.append(int(stat.parent.name))
    return workers


def _running(pid: int) -> bool:
    """Whether process ``pid`` is there and not a zombie (one an init that does not reap,
    as in some containers, keeps in /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads Linux's /proc")
def test_the_workers_end_when_the_study_process_is_killed(tmp_path):
    """SIGTERM or the OOM killer ends the study's process at once: its workers, which would
    have waited on their queue for ever, end within seconds; the runs written are kept."""
    scenario, out = write_yaml(tmp_path, LONGER), tmp_path / "out"
    command = [sys.executable, "-m", "nnrpsim", "run", str(scenario), "--out", str(out)]
    study = subprocess.Popen([*command, "--jobs", "2", "--quiet"], cwd=ROOT)
    deadline = time.monotonic() + 120
    while not list((out / "runs").glob("p*.arrow")) and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = _workers_of(study.pid)
    assert len(workers) == 2
    study.kill()
    study.wait()
    deadline = time.monotonic() + 30
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_running, workers))
    written = len(list((out / "runs").glob("p*.arrow")))
    assert main(["run", str(scenario), "--out", str(out), "--resume", "--quiet"]) == 0
    assert written >= 1 and len(pd.read_parquet(out / "runs.parquet")) == 8
