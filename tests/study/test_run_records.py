"""One run of a study with its records kept (``nnrpsim.run_records``): the very run the study
made, its references, operations and memory as frames whose counts give back its metrics."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.metrics import METRICS, OUTCOME_RATES
from tests.conftest import SMALL_STUDY

SWEPT = list(SMALL_STUDY["sweep"]["grid"])


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> nnrpsim.StudyResult:
    out = tmp_path_factory.mktemp("records") / "small"
    return nnrpsim.run(SMALL_STUDY, out=out, jobs=1, progress=False)


def test_each_run_is_the_study_run_its_point_and_replication_name(study):
    """Its seeds are the study's: the same metrics to the last bit, the same memory samples."""
    series = pd.read_parquet(study.path / "timeseries.parquet")
    assert len(study.runs) == 8
    for run in study.runs.itertuples(index=False):
        records = nnrpsim.run_records(SMALL_STUDY, run.point, run.replication, progress=False)
        assert (records.point, records.replication) == (run.point, run.replication)
        point = study.runs[study.runs["point"] == run.point].iloc[0]
        assert records.params == {key: point[key] for key in SWEPT}
        expected = {name: getattr(run, name) for name in METRICS}
        np.testing.assert_equal(records.metrics, expected)
        mine = (series["point"] == run.point) & (series["replication"] == run.replication)
        samples = series.loc[mine, records.memory.columns].reset_index(drop=True)
        pd.testing.assert_frame_equal(records.memory, samples, check_dtype=False)


def test_the_frames_give_back_the_runs_metrics():
    """The references after the warm-up, by outcome and cause, are the run's rates; its
    operations' latencies its percentiles; its kinds the study's shares by kind."""
    records = nnrpsim.run_records(SMALL_STUDY, point=3, replication=1)
    metrics, refs = records.metrics, records.references
    counted = refs[refs["after_warmup"]]
    assert 0 < len(counted) < len(refs)  # (the warm-up of 5 s leaves some out)
    shares = counted["outcome"].value_counts(normalize=True)
    assert shares["hit"] == pytest.approx(metrics["hit_rate"], abs=1e-12)
    assert shares["inlined_by_policy"] == pytest.approx(metrics["inline_rate_policy"], abs=1e-12)
    body_sent = counted["outcome"].isin(
        ["installed", "install_rejected", "inlined_after_invalidate"]
    )
    expired = body_sent & (counted["cause"] == "expired")
    assert expired.mean() == pytest.approx(metrics["miss_rate_lease_expired"], abs=1e-12)
    assert expired.sum() > 0 and (counted["cause"] == "invalidated").sum() > 0
    assert (body_sent & ~expired).mean() == pytest.approx(
        metrics["miss_rate_cache_miss"], abs=1e-12
    )
    assert sum(metrics[name] for name in OUTCOME_RATES) == pytest.approx(1.0)
    # every reference that was not a plain hit or inlined by policy names why its body went
    hits = refs["outcome"] == "hit"
    assert (refs.loc[hits, "cause"] == "none").all()
    assert (refs.loc[refs["outcome"] == "installed", "cause"] != "none").all()
    assert set(refs["kind"]) == {"prompt_segment", "tool_schema"}
    ops = records.operations
    latency = ops.loc[ops["after_warmup"], "latency_ms"]
    assert np.percentile(latency, 99) == metrics["p99_latency_ms"]
    assert not ops["fallback"].any() and records.audit["fallbacks"] == 0
    assert records.invalidations["content_changed"] > 0  # (point 3 changes content)
    assert records.invalidations.sum() >= metrics["invalidations"]  # (the whole run's)
    assert (records.accepted_ttl_ms > 0).all() and len(records.accepted_ttl_ms) > 0


def test_kind_shares_match_the_study(study):
    kinds = pd.read_parquet(study.path / "kinds.parquet")
    records = nnrpsim.run_records(SMALL_STUDY, point=0, replication=0)
    counted = records.references[records.references["after_warmup"]]
    shares = counted["kind"].value_counts(normalize=True)
    run = kinds[(kinds["point"] == 0) & (kinds["replication"] == 0)].set_index("kind")
    for kind, share in run["reference_share"].items():
        assert shares[kind] == pytest.approx(share, abs=1e-12)


@pytest.mark.parametrize(
    ("point", "replication", "where", "says"),
    [
        (4, 0, "point", "4 is not one of the study's sweep points (0 to 3)"),
        (-1, 0, "point", "-1 is not one of the study's sweep points (0 to 3)"),
        (0, 2, "replication", "2 is not one of the study's replications (0 to 1)"),
        (True, 0, "point", "must be a whole number, got True"),
        (0, "1", "replication", "must be a whole number, got '1'"),
    ],
)
def test_a_run_the_study_does_not_have_is_refused(point, replication, where, says):
    with pytest.raises(nnrpsim.ScenarioError) as err:
        nnrpsim.run_records(SMALL_STUDY, point, replication)
    assert (err.value.where, err.value.reason) == (where, says)


def test_a_vector_engine_run_has_no_single_references_to_record():
    with pytest.raises(nnrpsim.ScenarioError, match=r"^engine: point 0 runs on the vector"):
        nnrpsim.run_records(SMALL_STUDY, overrides=["engine=vector"])
    one = nnrpsim.run_records(SMALL_STUDY, overrides=["study.replications=1", "sweep=null"])
    assert one.params == {} and len(one.references) > 0


def test_the_command_prints_the_outcomes_and_writes_the_records(small_yaml, tmp_path, capsys):
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")  # (what the folder held stays)
    argv = ["records", str(small_yaml), "--point", "3", "--replication", "1"]
    assert main([*argv, "--out", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    records = nnrpsim.run_records(small_yaml, 3, 1, progress=False)
    assert out[0] == (
        "point 3 (ttl_fraction = 0.5, invalidations.rate_per_s = 0.02), replication 1: "
        f"{len(records.operations):,} operations and {len(records.references):,} references; "
        "after the warm-up, by outcome and cause:"
    )
    table = records.outcomes()
    assert out[1].split() == ["outcome", "cause", "references", "share"]
    assert out[2].split() == [
        "hit",
        "none",
        str(table["references"][0]),
        f"{table['share'][0]:.4f}",
    ]
    metrics = records.metrics
    assert f"hit_rate {metrics['hit_rate']:.4f}," in out[-2]
    assert 1 < metrics["p50_latency_ms"] < metrics["p99_latency_ms"] < 1000  # (in ms, then)
    latency = f"{metrics['p50_latency_ms']:.3g}/{metrics['p99_latency_ms']:.3g} ms"
    assert f", p50/p99 latency {latency}, " in out[-2]
    mean, peak = metrics["mean_gpu_bytes"], metrics["peak_gpu_bytes"]
    assert 1 << 20 <= peak < 1 << 30  # (in MiB, then)
    memory = f"{mean / 2**20:.3g}/{peak / 2**20:.3g} MiB"
    assert f", GPU memory held {memory} (mean/peak), p50/p99 latency " in out[-2]
    assert out[-1] == (
        f"records: {folder}: references.parquet, operations.parquet, memory.parquet, "
        "memory_by_kind.parquet, accepted_ttl_ms.parquet, run.json"
    )
    assert (folder / "notes.txt").read_text() == "mine"
    pd.testing.assert_frame_equal(
        pd.read_parquet(folder / "references.parquet"), records.references
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(folder / "operations.parquet"), records.operations
    )
    about = json.loads((folder / "run.json").read_text())
    assert (about["point"], about["replication"]) == (3, 1)
    assert about["params"] == records.params and about["audit"] == records.audit
    assert about["wire_bytes"] == records.wire_bytes.to_dict()
    assert about["counters"] == records.counters
    assert about["metrics"] == {  # (NaN, which JSON has not, as null)
        name: None if math.isnan(value) else value for name, value in records.metrics.items()
    }
    assert about["metrics"]["memory_settled_s"] is not None  # (a steady load: it settles)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--point", "9"], "error: point: 9 is not one of the study's sweep points (0 to 3)"),
        (["--set", "engine=vector"], "error: engine: point 0 runs on the vector engine"),
        (["--out", "FILE"], "error: --out: FILE is a file, not a folder"),
        (  # (before the run: it ran, then found it could not write there)
            ["--out", "FILE/records"],
            "error: --out: cannot use FILE/records: FILE is not a folder",
        ),
    ],
)
def test_the_command_refuses_in_one_line(small_yaml, tmp_path, capsys, extra, says):
    file = tmp_path / "FILE"
    file.write_text("kept")
    extra = [part.replace("FILE", str(file)) for part in extra]
    assert main(["records", str(small_yaml), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(says.replace("FILE", str(file))) and err.count("\n") == 1
    assert file.read_text() == "kept"


def test_an_interrupted_command_says_so_and_offers_a_resume_only_to_a_study(
    small_yaml, monkeypatch, capsys
):
    """``nnrpsim records`` said "finished runs are saved; rerun with --resume", as a study
    does, with nothing saved and no --resume to take."""
    from nnrpsim import one_run, study

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(one_run, "run_records", interrupted)
    monkeypatch.setattr(study, "run", interrupted)
    assert main(["records", str(small_yaml)]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert main(["run", str(small_yaml)]) == 130
    assert capsys.readouterr().err == "interrupted: finished runs are saved; rerun with --resume\n"


def test_the_command_explains_violations_as_a_study_does(small_yaml, capsys):
    """Operations its sessions fell behind on, over a slow link, are named for what they are
    (a run of the study says the same), not left as bare invariant violations."""
    slow = ["--set", "topology.link.bandwidth=1Mbit/s", "--point", "3"]
    assert main(["records", str(small_yaml), *slow]) == 0
    out, err = capsys.readouterr()
    assert "invariant violations 0" not in out
    # what validate warns of (the short warm-up, the link), then what the run shows of it
    warmup, link, behind = err.splitlines()
    assert warmup.startswith("warning: point 3: from the 5 s warm-up to the run's end (40 s)")
    assert link.startswith("warning: point 3: inlining every body would send about ")
    assert behind.startswith("warning: point 3: sessions fell behind the offered load")
    assert main(["records", str(small_yaml), "--point", "3"]) == 0
    assert capsys.readouterr().err == f"{warmup}\n"


def test_the_command_says_what_validate_warns_of_its_point(small_yaml, capsys):
    """A restart after the run's end never happens: said before the records, as by validate
    and run, naming the point."""
    late = ["--set", "faults.restart_at=1h", "--point", "2"]
    assert main(["records", str(small_yaml), *late]) == 0
    _, said = capsys.readouterr().err.splitlines()  # (after the study's short warm-up)
    assert said.startswith("warning: point 2: faults.restart_at is 3600 s, after the runs' end")


def test_a_run_with_no_references_after_its_warm_up_says_none(small_yaml, tmp_path, capsys):
    """It printed pandas' "Empty DataFrame" and its columns."""
    idle = ["--set", "workload.sessions.rate_per_s=0.0001", "--out", str(tmp_path / "r")]
    assert main(["records", str(small_yaml), *idle]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("0 operations and 0 references; after the warm-up, none")
    assert out[1].startswith(
        "hit_rate nan, wire_saving nan, GPU memory held 0/0 bytes (mean/peak), p50/p99 latency "
        "n/a, "
    )
    assert pd.read_parquet(tmp_path / "r" / "references.parquet").empty
    assert pd.read_parquet(tmp_path / "r" / "memory_by_kind.parquet").empty
    assert json.loads((tmp_path / "r" / "run.json").read_text())["metrics"]["hit_rate"] is None


def test_a_results_folder_gives_its_studys_runs(study, tmp_path, capsys):
    """The scenario its manifest records: the run of that study, whatever the YAML file has
    become since."""
    run = study.runs.iloc[5]
    records = nnrpsim.run_records(study.path, run["point"], run["replication"], progress=False)
    np.testing.assert_equal(records.metrics, {name: run[name] for name in METRICS})
    assert main(["records", str(study.path), "--point", "2"]) == 0
    assert capsys.readouterr().out.startswith("point 2 (ttl_fraction = 0.5, ")
    manifest = tmp_path / "manifest.json"
    for text, says in (
        (None, "no such file: not a results folder?"),
        ('{"status": ', "cannot be read (Expecting value: line 1 column 12 (char 11))"),
        ('{"status": "complete"}', "records no scenario to run again"),
    ):
        if text is not None:
            manifest.write_text(text)
        assert main(["records", str(tmp_path)]) == 2
        assert capsys.readouterr().err == f"error: {manifest}: {says}\n"


def test_records_name_their_study_and_go_only_where_they_lose_nothing(
    study, tmp_path, capsys, monkeypatch
):
    """``records --out`` wrote into any folder: a study's own, or over another run's records
    (``--point 1`` over point 0's), with nothing left to say which run the files were."""
    from nnrpsim import one_run

    folder = tmp_path / "records"
    argv = ["records", str(study.path), "--point", "1", "--quiet"]
    assert main([*argv, "--out", str(folder)]) == 0
    about = json.loads((folder / "run.json").read_text())
    manifest = json.loads((study.path / "manifest.json").read_text())
    assert (about["scenario_hash"], about["point"]) == (manifest["scenario_hash"], 1)
    capsys.readouterr()
    assert main([*argv, "--out", str(folder)]) == 0  # (the same run: the same numbers again)
    assert json.loads((folder / "run.json").read_text()) == about
    written = {path.name: path.read_bytes() for path in folder.iterdir()}
    capsys.readouterr()

    def not_run(*args, **kwargs):
        raise AssertionError("a folder refused after the run")

    monkeypatch.setattr(one_run, "simulate", not_run)
    another = ["--set", "study.seed=7"]
    for out, extra, says in (
        (folder, ["--point", "2"], f"{folder} holds the records of point 1, replication 0: "),
        (folder, another, f"{folder} holds the records of point 1, replication 0 of another "),
        (study.path, [], f"{study.path} holds a study's results (runs.parquet): write the "),
    ):
        assert main([*argv, *extra, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out: {says}") and err.count("\n") == 1
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == written
    assert not (study.path / "run.json").exists()
    (folder / "run.json").unlink()
    assert main([*argv, "--out", str(folder)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out: {folder} holds references.parquet, and no run.json that names its run: "
        "write the records to a folder of their own\n"
    )
    monkeypatch.undo()
    records = nnrpsim.run_records(study.path, 1, progress=False)  # (its write: the same rules)
    with pytest.raises(nnrpsim.ScenarioError, match=r"and no run\.json that names its run"):
        records.write(folder)
    (folder / "references.parquet").unlink()  # (any file of a records' name)
    with pytest.raises(nnrpsim.ScenarioError, match=r"holds operations\.parquet, and no run"):
        records.write(folder)


@pytest.mark.parametrize("loss", [0.0, 0.05])
def test_the_bytes_by_class_are_the_runs_bytes_less_its_resends(loss):
    """Counted from the start (no warm-up), the classes add up to ``wire_bytes`` over a link
    that loses nothing; over a lossy one, ``wire_bytes`` has the resends too."""
    records = nnrpsim.run_records(
        SMALL_STUDY,
        3,
        overrides=[f"topology.link.loss={loss}", "study.warmup=0s"],
        progress=False,
    )
    resent = records.counters["retransmissions"]
    assert (resent > 0) == (loss > 0)
    sent = int(records.wire_bytes.sum())
    assert (sent == records.metrics["wire_bytes"]) == (loss == 0)
    assert sent <= records.metrics["wire_bytes"]
    assert records.wire_bytes["reference"] > 0 and records.wire_bytes["put_body"] > 0
    assert records.counters["installs"] >= records.metrics["installs"] > 0


def test_the_memory_by_kind_adds_up_to_the_memory_held():
    """At each sample and server, the kinds' bytes are the bytes held, then and on average
    since the sample before (a kind a server holds nothing of, then or meanwhile, has no
    row), and the kinds are the workload's, by name."""
    records = nnrpsim.run_records(SMALL_STUDY, 3, 1, progress=False)
    by_kind = records.memory_by_kind
    assert set(by_kind["kind"]) == {"prompt_segment", "tool_schema"}
    summed = by_kind.groupby(["time_ms", "server"])[["held_bytes", "mean_held_bytes"]].sum()
    held = records.memory.set_index(["time_ms", "server"])
    assert held["held_bytes"].sum() > 0
    assert not held["mean_held_bytes"].equals(held["held_bytes"].astype(float))
    pd.testing.assert_series_equal(
        summed["held_bytes"].reindex(held.index, fill_value=0), held["held_bytes"]
    )
    pd.testing.assert_series_equal(
        summed["mean_held_bytes"].reindex(held.index, fill_value=0.0),
        held["mean_held_bytes"],
        rtol=1e-12,
    )
    assert ((by_kind["held_bytes"] > 0) | (by_kind["mean_held_bytes"] > 0)).all()


def test_each_reference_and_operation_names_its_sessions_host():
    """With two hosts, each session's rows name the host its plan gives it, both hosts."""
    from nnrpsim.scenario import load_scenario, sweep_points
    from nnrpsim.tasks import Task, run_inputs

    two = ["topology.hosts=2", "topology.servers=2"]
    records = nnrpsim.run_records(SMALL_STUDY, 3, overrides=two, progress=False)
    point = sweep_points(load_scenario(SMALL_STUDY, two))[3]
    _, plan, _ = run_inputs(Task(3, 0, point.params, point.scenario))
    planned = {session.session_id: session.host for session in plan.sessions}
    assert set(planned.values()) == {0, 1}
    for frame in (records.references, records.operations):
        pairs = frame[["session", "host"]].drop_duplicates()
        assert len(pairs) == frame["session"].nunique() > 10
        assert all(planned[s] == h for s, h in pairs.itertuples(index=False))
        assert set(frame["host"]) == {0, 1}


def test_results_of_frames_compare_as_objects(study):
    """A field-wise ``==`` of two results raised pandas' "truth value of a DataFrame is
    ambiguous"; two results are two objects, whatever their frames hold."""
    first, again = (nnrpsim.run_records(SMALL_STUDY, progress=False) for _ in range(2))
    assert first != again and first == first
    assert dataclasses.replace(study) != study and study == study  # (the same frames)


def test_results_of_frames_show_as_one_line(study):
    """A notebook shows a result by its repr: the dataclass's printed every row of every
    frame; it is one line that says which study or run and what it holds."""
    assert repr(study) == (
        f"<StudyResult {study.path} (complete): 4 sweep points, 8 runs (0 failed), "
        f"{sum(path.suffix == '.png' for path in study.plots)} plots, "
        f"{len(study.warnings)} warning{'' if len(study.warnings) == 1 else 's'}>"
    )
    records = nnrpsim.run_records(study.path, 3, 1, progress=False)
    shown = repr(records)
    assert "\n" not in shown and shown.startswith("<RunRecords point 3 (ttl_fraction = ")
    assert shown.endswith(
        f", replication 1: {len(records.operations):,} operations and "
        f"{len(records.references):,} references; hit_rate {records.metrics['hit_rate']:.4f}>"
    )


def test_a_swept_list_is_named_as_the_summary_writes_it():
    """A point's raw value of a list key is a tuple: the title said ``('prompt_segment',
    'tool_schema')`` where the summary, the plots and compare write its JSON."""
    kinds = [["prompt_segment"], ["prompt_segment", "tool_schema"]]
    study = {**SMALL_STUDY, "sweep": {"grid": {"topology.object_kinds": kinds}}}
    records = nnrpsim.run_records(study, 1, 0, progress=False)
    assert records.title.startswith(
        'point 1 (object_kinds = ["prompt_segment", "tool_schema"]), replication 0: '
    )
