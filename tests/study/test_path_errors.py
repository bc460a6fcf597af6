"""Paths the system refuses (a name longer than it allows), that name a folder or are empty,
wherever the command line takes a path: one line naming the field, exit status 2, nothing
written. pathlib's ``is_file`` raises for such a name where it answers False for a missing
file, which left each a traceback; it reads an empty one as the current folder."""

from __future__ import annotations

from pathlib import Path

import pytest

import nnrpsim
from nnrpsim import ScenarioError
from nnrpsim.cli import main
from nnrpsim.paths import NO_SUCH_FILE, check_folder_can_be_made, file_problem, make_folders
from nnrpsim.run_files import unreadable
from tests.conftest import write_yaml

TOO_LONG = "x" * 300  # (past NAME_MAX, 255 on Linux)


def test_file_problem_says_why_a_path_is_no_file(tmp_path):
    (tmp_path / "f").write_text("")
    assert file_problem(tmp_path / "f") is None
    assert file_problem(tmp_path / "gone") == NO_SUCH_FILE
    assert file_problem(tmp_path) == "a folder, not a file"
    assert file_problem(tmp_path / TOO_LONG) == "File name too long"
    assert file_problem(Path("/dev/zero")) == "not a regular file"


def test_a_results_file_that_cannot_be_read_is_named_in_one_line():
    """The reader's first line, or the kind of error where it says nothing."""
    path = Path("/results/runs/p0000-r000.arrow")
    said = f"{path}: not a readable results table"
    assert str(unreadable(path, ValueError("footer\n  at offset 8"))) == f"{said} (footer)"
    assert str(unreadable(path, OSError())) == f"{said} (OSError)"


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_an_out_folder_the_system_refuses(tmp_path, small_yaml, capsys):
    out = tmp_path / TOO_LONG
    assert main(["run", str(small_yaml), "--out", str(out), "--quiet"]) == 2
    assert _one_line(capsys).startswith(f"error: --out: cannot use {out}: File name too long")


@pytest.mark.parametrize("command", ["run", "records"])
def test_an_out_the_system_refuses_leaves_no_folder_it_made(
    tmp_path, small_yaml, capsys, monkeypatch, command
):
    """``--out kept/new/<a name too long>``: ``new`` was made before the system refused the
    name, and was left behind, empty; ``kept``, there before, stays. Found before the run:
    ``records`` ran its run first, since the name is refused only once ``new`` exists."""
    from nnrpsim import one_run

    def not_run(*args, **kwargs):
        raise AssertionError("a folder refused after the run")

    monkeypatch.setattr(one_run, "simulate", not_run)
    (tmp_path / "kept").mkdir()
    out = tmp_path / "kept" / "new" / TOO_LONG
    assert main([command, str(small_yaml), "--out", str(out), "--quiet"]) == 2
    assert _one_line(capsys) == f"error: --out: cannot use {out}: File name too long\n"
    assert list((tmp_path / "kept").iterdir()) == []


def test_check_folder_can_be_made_leaves_nothing_made(tmp_path):
    (tmp_path / "kept").mkdir()
    check_folder_can_be_made(tmp_path / "kept" / "a" / "b")
    assert list(tmp_path.rglob("*")) == [tmp_path / "kept"]
    with pytest.raises(OSError, match="File name too long"):
        check_folder_can_be_made(tmp_path / "kept" / "a" / TOO_LONG)
    assert list(tmp_path.rglob("*")) == [tmp_path / "kept"]


def test_make_folders_removes_the_folders_it_made_when_one_cannot_be_made(tmp_path):
    (tmp_path / "kept").mkdir()
    (tmp_path / "file").write_text("")
    folders = [tmp_path / "kept" / "a" / "b", tmp_path / "c" / "d", tmp_path / "file" / "e"]
    with pytest.raises(FileExistsError):
        make_folders(folders)
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["file", "kept"]
    made = [tmp_path / "kept" / "a", folders[0], tmp_path / "c", folders[1]]
    assert make_folders(folders[:2]) == made
    assert make_folders(folders[:2]) == []  # (there already: as mkdir(exist_ok=True))
    assert all(folder.is_dir() for folder in folders[:2])


@pytest.mark.plots
@pytest.mark.parametrize(
    ("name", "reason"),
    [(TOO_LONG, "cannot read {}: File name too long"), ("folder", "cannot read {}: a folder")],
)
def test_plot_of_a_summary_that_cannot_be_read(tmp_path, capsys, name, reason):
    results = tmp_path / name
    if name == "folder":
        (results / "summary.parquet").mkdir(parents=True)
    assert main(["plot", str(results)]) == 2
    expected = reason.format(results / "summary.parquet")
    assert _one_line(capsys).startswith(f"error: results: {expected}")


@pytest.mark.parametrize(
    "command", [["validate"], ["run", "--quiet"], ["records", "--quiet"]], ids=lambda c: c[0]
)
def test_a_scenario_path_the_system_refuses(tmp_path, capsys, command):
    """Read first as a results folder's name, where ``is_dir`` raised."""
    scenario = tmp_path / TOO_LONG
    assert main([command[0], str(scenario), *command[1:]]) == 2
    assert _one_line(capsys) == f"error: {scenario}: File name too long\n"
    with pytest.raises(ScenarioError, match=r"File name too long$"):
        nnrpsim.validate(scenario)
    assert list(tmp_path.iterdir()) == []


WORKLOADS = {
    "workload.trace.path": lambda path: {"trace": {"path": path}},
    "workload.sessions.arrivals.path": lambda path: {"sessions": {"arrivals": {"path": path}}},
}


@pytest.mark.parametrize("field", WORKLOADS)
@pytest.mark.parametrize(
    ("name", "reason"),
    [(TOO_LONG, "File name too long"), (".", "a folder"), ("/dev/zero", "not a regular file")],
)
def test_a_trace_path_that_is_no_file(tmp_path, capsys, field, name, reason):
    scenario = write_yaml(tmp_path, {"workload": WORKLOADS[field](str(tmp_path / name))})
    assert main(["validate", str(scenario)]) == 2
    assert _one_line(capsys).startswith(f"error: {field}: {reason}")
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 2
    assert _one_line(capsys).startswith(f"error: {field}: {reason}") and not out.exists()


@pytest.mark.parametrize("field", WORKLOADS)
def test_an_empty_trace_path_is_refused(tmp_path, capsys, field):
    """Resolved against the scenario's folder, it was said to be "a folder, not a file"."""
    scenario = write_yaml(tmp_path, {"workload": WORKLOADS[field]("")})
    assert main(["validate", str(scenario)]) == 2
    assert _one_line(capsys) == f"error: {field}: must not be empty\n"
    with pytest.raises(ScenarioError, match=f"^{field}: must not be empty$"):
        nnrpsim.validate({"workload": WORKLOADS[field]("")})


def test_the_api_refuses_a_path_with_a_nul(tmp_path):
    """A command line cannot carry a NUL; the API can, and pathlib raised ``ValueError``."""
    with pytest.raises(ScenarioError, match=r"^'a\\x00b': must not contain a NUL character$"):
        nnrpsim.load_scenario("a\0b")
    with pytest.raises(ScenarioError, match=r"^--out: must not contain a NUL character$"):
        nnrpsim.run({"study": {"duration": "10s"}}, out=tmp_path / "a\0b", progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def in_a_study(small_study, monkeypatch):
    """The current folder holds a study's results: what an empty path was read as."""
    monkeypatch.chdir(small_study)


EMPTY_PATHS = [
    (["validate", ""], "scenario"),
    (["run", "", "--quiet"], "scenario"),
    (["records", "", "--quiet"], "scenario"),
    (["compare", ""], "results"),
    (["plot", ""], "results"),
    (["compare", ".", "--csv", ""], "--csv"),
]


@pytest.mark.plots
@pytest.mark.parametrize(
    ("args", "field"), EMPTY_PATHS, ids=[" ".join(arg or '""' for arg in a) for a, _ in EMPTY_PATHS]
)
def test_an_empty_path_is_refused_not_read_as_the_current_folder(in_a_study, capsys, args, field):
    """pathlib reads "" as ".": a study's folder where the command ran was validated, run
    again, compared or redrawn (``"$UNSET"``); ``--csv ""`` was passed over without a word."""
    assert main(args) == 2
    assert _one_line(capsys) == f"error: {field}: must not be empty\n"


@pytest.mark.parametrize("command", ["run", "records"])
def test_an_empty_out_is_refused_not_taken_as_the_current_folder(
    tmp_path, small_yaml, monkeypatch, capsys, command
):
    """``run --out ""`` wrote a study among the files where it ran; ``records --out ""``
    showed the records and wrote none."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main([command, str(small_yaml), "--out", "", "--quiet"]) == 2
    assert _one_line(capsys) == "error: --out: must not be empty\n"
    assert list(here.iterdir()) == []


@pytest.mark.plots
def test_the_api_refuses_an_empty_path(in_a_study, small_yaml):
    calls = [
        ("--out", lambda: nnrpsim.run(small_yaml, out="", progress=False)),
        ("--out", lambda: nnrpsim.run_records(small_yaml, out="", progress=False)),
        ("scenario", lambda: nnrpsim.validate("")),
        ("results", lambda: nnrpsim.compare("")),
        ("results", lambda: nnrpsim.plot_study("")),
    ]
    for field, call in calls:
        with pytest.raises(ScenarioError, match=f"^{field}: must not be empty$"):
            call()
