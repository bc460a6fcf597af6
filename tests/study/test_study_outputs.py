"""No command writes over what a study wrote: ``compare --csv results/x/summary.csv`` replaced
the study's summary with the differences, and ``run``/``records --out results/x/plots/...``
wrote among its plots."""

from __future__ import annotations

import json

import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.results import study_mark, study_output
from tests.conftest import SMALL_STUDY


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> nnrpsim.StudyResult:
    out = tmp_path_factory.mktemp("outputs") / "study"
    return nnrpsim.run(SMALL_STUDY, out=out, jobs=1, progress=False)


def _contents(folder) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_no_command_writes_among_a_studys_outputs(study, small_yaml, capsys):
    folder = study.path
    before = _contents(folder)
    compare = ["compare", str(folder), "--baseline", "host_policy.ttl_fraction=0.5"]
    for target, output in (
        (folder / "summary.csv", "summary.csv"),
        (folder / "runs.parquet", "runs.parquet"),
        (folder / "plots" / "d.csv", "plots"),
        (folder / "runs" / ".." / "kinds.csv", "kinds.csv"),
    ):
        assert main([*compare, "--csv", str(target)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"error: --csv: {target} lies among a study's outputs ({output} in "
            f"{folder.resolve()}): choose another file\n"
        )
    for target, output in ((folder / "runs", "runs"), (folder / "plots" / "r", "plots")):
        says = f"lies among a study's outputs ({output} in {folder.resolve()}): "
        records = ["records", str(folder), "--quiet", "--out", str(target)]
        assert main(records) == 2
        assert capsys.readouterr().err.startswith(f"error: --out: {target} {says}write the ")
        run = ["run", str(small_yaml), "--quiet", "--jobs", "1", "--out", str(target)]
        assert main(run) == 2
        assert capsys.readouterr().err == f"error: --out: {target} {says}choose another --out\n"
    assert _contents(folder) == before
    assert main([*compare, "--csv", str(folder / "differences.csv")]) == 0  # (a name of its own)


def test_a_study_is_a_folder_with_its_runs_table_its_manifest_or_its_runs(tmp_path):
    """Not any folder holding a ``manifest.json`` (a web project's, say): its ``plots`` folder
    is no study's."""
    folder = tmp_path / "project"
    (folder / "plots").mkdir(parents=True)
    (folder / "manifest.json").write_text('{"name": "an extension"}')
    assert study_mark(folder) is None and study_output(folder / "plots" / "a.csv") is None
    (folder / "manifest.json").write_text(json.dumps({"scenario_hash": "0123", "status": "x"}))
    assert study_mark(folder) == "manifest.json"  # (a study under way: no tables yet)
    assert study_output(folder / "plots" / "a.csv") == (folder / "plots").resolve()
    assert study_output(folder / "notes" / "a.csv") is None  # (nothing a study writes)
    (folder / "manifest.json").unlink()
    (folder / "runs.parquet").write_bytes(b"")  # (an early version's study: no manifest)
    assert study_mark(folder) == "runs.parquet"
    assert study_output(folder / "timeseries.parquet") == (folder / "timeseries.parquet").resolve()
    assert study_output(folder) is None  # (the study's folder itself: a resume's --out)
    (folder / "runs.parquet").unlink()
    (folder / "runs").mkdir()
    (folder / "runs" / "p0000-r000.arrow").write_bytes(b"")  # (a finished run's file)
    assert study_mark(folder) == "runs"


def test_a_study_does_not_write_over_files_of_its_names_that_no_study_wrote(
    tmp_path, small_yaml, capsys
):
    """``run --out`` a folder holding a ``summary.csv`` of the user's wrote over it."""
    run = ["run", str(small_yaml), "--quiet", "--jobs", "1", "--out"]
    for name, text in (("summary.csv", "mine"), ("manifest.json", '{"name": "an extension"}')):
        folder = tmp_path / name
        folder.mkdir()
        (folder / name).write_text(text)
        assert main([*run, str(folder)]) == 2
        assert capsys.readouterr().err == (
            f"error: --out: {folder} holds {name}, not a study's: choose another --out\n"
        )
        assert [path.name for path in folder.iterdir()] == [name]
        assert (folder / name).read_text() == text
    killed = tmp_path / "killed"  # (a study killed as it began: its lock, no manifest)
    (killed / "runs").mkdir(parents=True)
    (killed / ".nnrpsim-lock").touch()
    assert main([*run, str(killed)]) == 0
    assert study_mark(killed) == "runs.parquet"


def test_a_studys_damaged_manifest_is_named_as_damaged(tmp_path, small_yaml, capsys):
    """A folder with finished runs is a study's, whatever its manifest has become: a resume
    says the manifest cannot be read (it said the folder held a manifest.json not a study's)."""
    out = tmp_path / "study"
    run = ["run", str(small_yaml), "--quiet", "--jobs", "1", "--out", str(out)]
    assert main(run) == 0
    capsys.readouterr()
    (out / "runs.parquet").unlink()  # (as a study stopped before its summary)
    (out / "manifest.json").write_text('{"status": ')
    assert main([*run, "--resume"]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: --resume: {out / 'manifest.json'} cannot be read ("
    )


def test_a_studys_warnings_are_kept_in_its_folder(study, monkeypatch, capsys):
    """What ``run`` printed stays beside the figures, for whoever opens the folder later, and
    the results line names it; a run of the folder that warns of nothing leaves no file of an
    earlier one's warnings."""
    kept = (study.path / "warnings.txt").read_text(encoding="utf-8")
    assert study.warnings and kept.splitlines() == study.warnings  # (its climb is too short)
    compare = ["compare", str(study.path), "--baseline", "host_policy.ttl_fraction=0.5"]
    assert main([*compare, "--csv", str(study.path / "warnings.txt")]) == 2
    assert "lies among a study's outputs (warnings.txt in " in capsys.readouterr().err
    assert main(["run", str(study.path), "--resume", "--quiet"]) == 0
    plots = "no plots (NNRPSIM_PLOT_FORMATS=none)"  # (the tests' setting)
    assert f"(complete): summary.csv, warnings.txt, {plots}\n" in capsys.readouterr().out
    assert (study.path / "warnings.txt").read_text(encoding="utf-8") == kept
    monkeypatch.setattr("nnrpsim.study.study_warnings", lambda *tables: [])
    assert main(["run", str(study.path), "--resume", "--quiet"]) == 0
    assert f"(complete): summary.csv, {plots}\n" in capsys.readouterr().out
    assert not (study.path / "warnings.txt").exists()


def test_a_pass_stopped_before_its_end_leaves_no_warnings_of_an_earlier_one(
    tmp_path, small_yaml, monkeypatch
):
    """An earlier pass's warnings spoke of its runs: a resume that adds runs and is stopped
    (Ctrl-C) before its warnings are told leaves none, as its manifest says it is unfinished."""
    out = tmp_path / "study"
    assert nnrpsim.run(small_yaml, out=out, jobs=1, progress=False).warnings
    assert (out / "warnings.txt").is_file()

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt
        yield  # (a generator, as execute is)

    monkeypatch.setattr("nnrpsim.study.execute", stopped)
    with pytest.raises(KeyboardInterrupt):
        nnrpsim.run(out, overrides=["study.replications=3"], resume=True, progress=False)
    assert '"status": "interrupted' in (out / "manifest.json").read_text(encoding="utf-8")
    assert not (out / "warnings.txt").exists()
