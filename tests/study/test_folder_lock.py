"""One study at a time in a results folder: a second one started on a folder another study is
writing is refused (it would mix its runs in), whether the first runs in this process or
another, and the folder is free again once the first ends, however it ends."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.folder_lock import LOCK_FILE, folder_held
from nnrpsim.results import ResultStore
from nnrpsim.scenario import ScenarioError


def _busy(out) -> str:
    return (
        f"error: --out: {out} is being written by another nnrpsim run: wait for it to end, or "
        "choose another --out\n"
    )


def test_a_study_on_a_folder_another_is_writing_is_refused(tmp_path, small_yaml, capsys):
    out = tmp_path / "busy"
    out.mkdir()
    command = ["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]
    with folder_held(out):
        assert main(command) == 2
        assert capsys.readouterr().err == _busy(out)
        assert not (out / "manifest.json").exists() and not list(out.glob("runs/*"))
    assert main(command) == 0  # (free again)
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"


def test_a_lock_held_by_another_process_is_released_when_it_is_killed(tmp_path, small_yaml, capsys):
    out = tmp_path / "busy"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from nnrpsim.folder_lock import folder_held\n"
            f"with folder_held(Path({str(out)!r})):\n"
            "    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        command = ["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]
        assert main(command) == 2
        assert capsys.readouterr().err == _busy(out)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert main(command) == 0


def test_a_folder_another_study_wrote_after_this_one_checked_it_is_refused(tmp_path, small_yaml):
    """Between a study's checks of the folder and taking its lock, another study may have
    begun and ended there: what it checked no longer holds."""
    out = tmp_path / "raced"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    store = ResultStore(out, nnrpsim.load_scenario(small_yaml), resume=True)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "status": "complete again"}))
    with pytest.raises(ScenarioError, match="changed as this study started"), store.held():
        pass
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete again"


@pytest.mark.plots
def test_plot_waits_for_the_study_writing_its_folder_and_holds_it_as_it_draws(
    tmp_path, small_yaml, capsys, monkeypatch
):
    """A study still running draws the plots as it ends (without its summary, plot said the
    study "did not finish" and to resume it, which the lock refuses); a study started as plot
    redraws them would write the folder under it."""
    out = tmp_path / "done"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    with folder_held(out):
        assert main(["plot", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: results: {out} is being written by another nnrpsim run: wait for it to end: "
        "its study draws the plots as it ends\n"
    )
    held_as_drawn = []

    def draw_study(folder, executor):
        busy = pytest.raises(ScenarioError, match="being written by another nnrpsim run")
        with busy, folder_held(folder):
            pass
        held_as_drawn.append(folder)
        return []

    monkeypatch.setattr("nnrpsim.plots.draw_study", draw_study)
    assert main(["plot", str(out)]) == 0 and held_as_drawn == [out]


@pytest.mark.plots
def test_plot_leaves_no_lock_file_in_a_folder_an_older_study_wrote(tmp_path, small_yaml):
    out = tmp_path / "older"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    (out / LOCK_FILE).unlink()  # (written before studies took a lock)
    assert main(["plot", str(out)]) == 0
    assert not (out / LOCK_FILE).exists()
