"""A resume whose sweep lists other values of the same keys: the runs there are found by their
points' values (a run is drawn from its point's values and its replication alone), moved to
their points' new numbers, and only the new points run; a sweep that drops a point with runs is
refused; a move stopped part way finishes on the next resume."""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest
from pyarrow import ipc

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.plots import DRAWN
from nnrpsim.recorded import recorded_scenario
from nnrpsim.renumbering import MOVING
from nnrpsim.results import ResultStore

TTL = "host_policy.ttl_fraction"
RATE = "workload.invalidations.rate_per_s"
FOLDERS = ("runs", "timeseries", "kinds")


def _ttls(*values: float) -> list[str]:
    return [f"sweep.grid.{TTL}={list(values)}"]


@pytest.fixture
def study(small_study, tmp_path):
    """A copy of the small study's folder, for a test to change."""
    return shutil.copytree(small_study, tmp_path / "study")


def _fresh(tmp_path, overrides: list[str]) -> pathlib.Path:
    """A study of the sweep ``overrides`` give, started afresh: its folder."""
    from tests.conftest import SMALL_STUDY

    out = tmp_path / "fresh"
    result = nnrpsim.run(SMALL_STUDY, out=out, overrides=overrides, jobs=2, progress=False)
    assert (result.kept_runs, result.moved_runs) == (0, 0)
    return result.path


def _records(folder) -> dict[tuple, dict]:
    """Each run's record in the folder's run files, by its point's values and replication."""
    records = {}
    for path in (folder / "runs").glob("p*"):
        if path.suffix == ".parquet":
            row = pq.read_table(path).to_pylist()[0]
        else:
            row = ipc.open_file(path.read_bytes()).read_all().to_pylist()[0]
        assert path.name.startswith(f"p{row['point']:04d}-r{row['replication']:03d}.")
        records[row[TTL], row[RATE], row["replication"]] = row
    return records


def _same_tables(folder, other, renumbered=lambda point: point, wall_times=True) -> None:
    """Every study table in ``folder`` is ``other``'s, rows in any order, ``other``'s points
    renumbered (and its runs' wall times too, unless they ran again)."""
    for table in ("summary", "runs", "timeseries", "kinds"):
        then, now = (pd.read_parquet(at / f"{table}.parquet") for at in (other, folder))
        then["point"] = then["point"].map(renumbered)
        if not wall_times:
            then, now = (frame.drop(columns="wall_s", errors="ignore") for frame in (then, now))
        then, now = (frame.sort_values(list(frame), ignore_index=True) for frame in (then, now))
        pd.testing.assert_frame_equal(now, then)


@pytest.mark.parametrize(
    "ttls, moved", [((0.1, 0.3, 0.5), True), ((0.1, 0.5, 0.9), False)], ids=["within", "after"]
)
def test_a_value_added_to_a_swept_list_runs_its_points_only(study, tmp_path, ttls, moved):
    """0.3 between 0.1 and 0.5 renumbers 0.5's points (2, 3 -> 4, 5); 0.9 after them, none."""
    before = _records(study)
    result = nnrpsim.run(study, resume=True, overrides=_ttls(*ttls), jobs=2, progress=False)
    after = _records(study)
    assert len(after) == 12 and set(before) < set(after)
    for run, record in before.items():  # the same runs (a run done again has its own wall_s)
        assert {**after[run], "point": record["point"]} == record
    assert (after[0.5, 0.02, 1]["point"] != before[0.5, 0.02, 1]["point"]) == moved
    _same_tables(study, _fresh(tmp_path, _ttls(*ttls)), wall_times=False)
    assert len(result.runs) == 12 and result.kept_runs == 8
    assert result.moved_runs == (4 if moved else 0)  # (0.5's runs)
    manifest = json.loads((study / "manifest.json").read_text())
    assert manifest["status"] == "complete" and MOVING not in manifest
    assert manifest["scenario"]["sweep"]["grid"][TTL] == list(ttls)


@pytest.mark.parametrize("written_by", ["this version", "an earlier version"])
def test_values_in_another_order_move_every_run_and_run_none(
    small_study, study, tmp_path, written_by
):
    """A cycle of moves (0 <-> 2, 1 <-> 3): each run keeps its record at its new number, in the
    format it was written in, with the number in its tables."""
    if written_by == "an earlier version":  # (Parquet files, as those versions wrote a run)
        for path in sorted(study.glob("*/p*.arrow")):
            pq.write_table(
                ipc.open_file(path.read_bytes()).read_all(), path.with_suffix(".parquet")
            )
            path.unlink()
    suffixes = {path.suffix for path in study.glob("*/p*")}
    before = _records(study)
    result = nnrpsim.run(study, resume=True, overrides=_ttls(0.5, 0.1), jobs=2, progress=False)
    assert {path.suffix for path in study.glob("*/p*")} == suffixes
    after = _records(study)
    assert set(after) == set(before)
    for run, record in before.items():
        assert {**after[run], "point": record["point"]} == record
        assert after[run]["point"] == (record["point"] + 2) % 4
    assert not list(study.glob("*/q*"))
    _same_tables(study, _fresh(tmp_path, _ttls(0.5, 0.1)), wall_times=False)
    _same_tables(study, small_study, lambda point: (point + 2) % 4)
    assert len(result.runs) == 8 and result.kept_runs == result.moved_runs == 8


def test_a_sweep_that_drops_a_point_with_runs_is_refused(study, capsys):
    """A resume keeps every run there: a sweep without 0.5 would leave runs the summary counts
    under no point; 0.5 with none of its runs there may go."""
    files = {path: path.read_bytes() for path in study.rglob("*") if path.is_file()}
    command = ["run", str(study), "--resume", "--jobs", "1", "--quiet"]
    assert main([*command, "--set", *_ttls(0.1, 0.3)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: --resume: {study} holds runs of point 2 (host_policy.ttl_fraction: 0.5, "
        "workload.invalidations.rate_per_s: 0), which this sweep does not list: a resume keeps "
        "every run there (list its values again, or choose another --out)\n"
    )
    # a key swept another way (in zip, not grid) is another sweep: refused as before
    zipped = [f"sweep.zip={{{TTL}: [0.1, 0.5]}}", f"sweep.grid={{{RATE}: [0, 0.02]}}"]
    assert main([*command, *(f"--set={change}" for change in zipped)]) == 2
    assert (
        "different scenario (sweep.zip.host_policy.ttl_fraction: absent there, [0.1, 0.5] here"
        in (capsys.readouterr().err)
    )
    assert {path: path.read_bytes() for path in study.rglob("*") if path.is_file()} == files
    for folder in FOLDERS:
        for path in (study / folder).glob("p000[23]-*"):
            path.unlink()
    assert main([*command, "--set", *_ttls(0.1, 0.3)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\nresumed: kept 4 runs the folder held\n")  # (none moved)
    assert sorted(pd.read_parquet(study / "summary.parquet")[TTL]) == [0.1, 0.1, 0.3, 0.3]


def test_the_base_value_of_a_swept_key_may_change(small_study, study):
    """A swept key's value outside the sweep is one no run reads (each point sets its own):
    edited, the runs there are kept and none runs again; a key beside it is still read."""
    from tests.conftest import SMALL_STUDY

    edited = {
        **SMALL_STUDY,
        "host_policy": {"ttl_fraction": 0.9},
        "workload": {**SMALL_STUDY["workload"], "invalidations": {"rate_per_s": 0.5}},
    }
    result = nnrpsim.run(edited, out=study, resume=True, jobs=1, progress=False)
    assert (len(result.runs), result.kept_runs, result.moved_runs) == (8, 8, 0)
    _same_tables(study, small_study)  # (wall times too: none ran again)
    assert recorded_scenario(study, "")["host_policy"]["ttl_fraction"] == 0.9
    beside = {**edited, "host_policy": {"ttl_fraction": 0.9, "renew_margin": 0.3}}
    with pytest.raises(
        nnrpsim.ScenarioError, match=r"host_policy\.renew_margin: \S+ there, 0\.3 here"
    ):
        nnrpsim.run(beside, out=study, resume=True, jobs=1, progress=False)


def test_the_base_values_within_a_section_swept_whole_may_change(tmp_path):
    """Each point sets the whole section: none of its base values reaches a run."""
    from tests.conftest import SMALL_STUDY

    swept = {"workload.invalidations": [{"rate_per_s": 0}, {"rate_per_s": 0.02}]}
    study = {**SMALL_STUDY, "study": {**SMALL_STUDY["study"], "replications": 1}}
    study["sweep"] = {"grid": swept}
    out = tmp_path / "study"
    nnrpsim.run(study, out=out, jobs=1, progress=False)
    study["workload"] = {**study["workload"], "invalidations": {"rate_per_s": 0.5}}
    result = nnrpsim.run(study, out=out, resume=True, jobs=1, progress=False)
    assert (len(result.runs), result.kept_runs) == (2, 2)


def test_a_damaged_run_file_moves_as_it_is_and_its_run_is_done_again(small_study, study):
    """A run whose file cannot be read is done again on a resume; moved, it is done at its new
    number, and the others are kept."""
    (study / "timeseries" / "p0002-r001.arrow").write_bytes(b"damaged")
    before = _records(study)
    nnrpsim.run(study, resume=True, overrides=_ttls(0.5, 0.1), jobs=1, progress=False)
    after = _records(study)
    assert after[0.5, 0, 1]["wall_s"] != before[0.5, 0, 1]["wall_s"]  # (done again)
    assert not list(study.glob("*/q*"))  # (the damaged file moved, then written over)
    for run, record in before.items():
        if run != (0.5, 0, 1):
            assert after[run] == {**record, "point": (record["point"] + 2) % 4}
    _same_tables(study, small_study, lambda point: (point + 2) % 4, wall_times=False)


@pytest.mark.parametrize(
    "journal",
    [
        {"phase": 3},
        {"phase": 3, "moves": [[0, 2]]},
        {"phase": 1, "moves": [[0, "2"]]},
        {"phase": 1, "moves": [[0, 2.0]]},
        {"phase": 1, "moves": [[True, 2]]},
        {"phase": 2, "moves": [[0, 2, 1]]},
        {"phase": 1, "moves": {"0": 2}},
    ],
)
def test_a_journal_nnrpsim_did_not_write_is_named(study, capsys, journal):
    """A manifest whose move is not one nnrpsim journalled (edited by hand): one line, and
    nothing moved."""
    manifest = json.loads((study / "manifest.json").read_text())
    (study / "manifest.json").write_text(json.dumps({**manifest, MOVING: journal}))
    files = {path: path.read_bytes() for path in study.rglob("*") if path.is_file()}
    assert main(["run", str(study), "--resume", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"error: --resume: {study / 'manifest.json'}: moving_runs is not a move nnrpsim wrote\n"
    )
    assert {path: path.read_bytes() for path in study.rglob("*") if path.is_file()} == files


def test_validate_says_what_a_resume_in_the_folder_would_do_and_writes_nothing(study, capsys):
    files = {path: path.read_bytes() for path in study.rglob("*") if path.is_file()}
    assert main(["validate", str(study)]) == 0
    assert f"\n  a resume in {study} keeps 8 runs there; none is left to run\n" in (
        capsys.readouterr().out
    )
    assert main(["validate", str(study), "--set", *_ttls(0.5, 0.3, 0.1)]) == 0
    assert (
        f"\n  a resume in {study} keeps 8 runs there (8 of them moved to their points' new "
        "numbers), and runs the other 4\n"
    ) in capsys.readouterr().out
    assert main(["validate", str(study), "--set", *_ttls(0.1)]) == 0  # (the scenario is valid)
    out, err = capsys.readouterr()
    assert f"warning: a resume in {study} is refused: {study} holds runs of point 2 " in err
    assert "a resume in" not in out
    manifest = json.loads((study / "manifest.json").read_text())
    journal = {"phase": 2, "moves": [[0, 2], [2, 0]]}
    (study / "manifest.json").write_text(json.dumps({**manifest, MOVING: journal}))
    files[study / "manifest.json"] = (study / "manifest.json").read_bytes()
    assert main(["validate", str(study)]) == 0
    assert f"a resume in {study} first finishes moving its runs, as a stopped one left them" in (
        capsys.readouterr().out
    )
    assert {path: path.read_bytes() for path in study.rglob("*") if path.is_file()} == files


class Crash(BaseException):
    """A study killed outright, as it moves its runs."""


@pytest.mark.parametrize("resumed_with", [(0.5, 0.1), (0.1, 0.5)], ids=["new sweep", "old sweep"])
@pytest.mark.parametrize("at", [0.0, 0.25, 0.49, 0.5, 0.51, 0.75, 1.0])
def test_a_move_stopped_part_way_finishes_on_the_next_resume(
    small_study, study, tmp_path, monkeypatch, at, resumed_with
):
    """Stopped at any file of a move (``at``: its share of the move's renames, writes and
    removals; the journal's three writes among them), the next resume finishes it, whatever
    its sweep: every run once, none run again, each at its point's number there."""
    scenario = nnrpsim.load_scenario(recorded_scenario(study, "to run"), _ttls(0.5, 0.1))
    calls, stop_at = [], []

    def counted(real):
        def call(*args, **kwargs):
            calls.append(args)
            if len(calls) in stop_at:
                raise Crash
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(os, "replace", counted(os.replace))
    monkeypatch.setattr(pathlib.Path, "unlink", counted(pathlib.Path.unlink))
    with ResultStore(shutil.copytree(study, tmp_path / "dry"), scenario, True).held():
        pass
    stop_at.append(max(1, round(at * len(calls))))
    calls.clear()
    before = _records(study)
    with pytest.raises(Crash), ResultStore(study, scenario, True).held():
        pass
    monkeypatch.undo()
    result = nnrpsim.run(study, resume=True, overrides=_ttls(*resumed_with), progress=False)
    after = _records(study)
    assert set(after) == set(before) and len(result.runs) == 8
    for run, record in before.items():
        point = record["point"] if resumed_with == (0.1, 0.5) else (record["point"] + 2) % 4
        assert after[run] == {**record, "point": point}
    hidden = [path for path in study.glob("*/.*") if path.name != DRAWN]  # (the plots' record)
    assert not list(study.glob("*/q*")) and not hidden
    if resumed_with == (0.5, 0.1):
        _same_tables(study, small_study, lambda point: (point + 2) % 4)
    else:
        _same_tables(study, small_study)
