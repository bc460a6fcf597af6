"""Session arrivals from a trace (Azure's LLM inference trace): its times, in order, from zero,
scaled, dealt to the hosts in turn; the rest of the workload stays synthetic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nnrpsim.cli import main
from nnrpsim.model import ModelConfig, PolicyConfig, Simulation, WorkloadConfig, synthetic_plan
from nnrpsim.scenario.schema import Arrivals
from nnrpsim.traces import load_arrivals
from tests.conftest import write_yaml

AZURE = "data/traces/AzureLLMInferenceTrace_conv.csv"


def test_azure_timestamps_become_milliseconds_from_zero(shared):
    times = load_arrivals(Arrivals(path=str(shared / AZURE)))
    assert len(times) == 19_366
    assert times[:3].tolist() == pytest.approx([0.0, 4_314.579, 4_541.877])  # 18:15:46.6805900 on
    assert (np.diff(times) >= 0).all() and times[-1] / 60_000 == pytest.approx(58.36, abs=0.01)
    halved = load_arrivals(Arrivals(path=str(shared / AZURE), time_scale=0.5))
    np.testing.assert_allclose(halved, times * 0.5)


def test_numeric_columns_are_milliseconds_and_get_sorted(tmp_path):
    path = tmp_path / "a.parquet"
    pd.DataFrame({"t": [500, 100, 300]}).to_parquet(path)
    assert load_arrivals(Arrivals(path=str(path), column="t")).tolist() == [0.0, 200.0, 400.0]


def test_datetimes_with_time_zones_are_instants(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("TIMESTAMP\n2023-11-16 18:00:01+01:00\n2023-11-16 17:00:00Z\n")
    assert load_arrivals(Arrivals(path=str(path))).tolist() == [0.0, 1000.0]


def test_a_log_is_read_once_for_each_version_of_its_file(tmp_path):
    """The checks and every sweep point ask for the same log: it is read once, until the file
    changes (a notebook may rewrite it between runs)."""
    path = tmp_path / "a.csv"
    path.write_text("t\n0\n100\n")
    spec = Arrivals(path=str(path), column="t")
    first = load_arrivals(spec)
    assert load_arrivals(spec) is first and not first.flags.writeable
    path.write_text("t\n0\n100\n250\n")
    assert load_arrivals(spec).tolist() == [0.0, 100.0, 250.0]


def test_sessions_start_at_the_arrivals_and_hosts_take_them_in_turn():
    arrivals = np.array([0.0, 10.0, 25.0, 40.0, 90.0, 130.0])
    seed = np.random.SeedSequence(1)
    plan = synthetic_plan(WorkloadConfig(), 2, 100.0, seed, arrivals)
    starts = {(s.host, s.start_ms) for s in plan.sessions}
    assert starts == {(0, 0.0), (1, 10.0), (0, 25.0), (1, 40.0), (0, 90.0)}  # 130: after the end
    assert plan.sessions_per_ms == pytest.approx(5 / 2 / 100.0)


def test_connection_scope_counts_the_concurrent_sessions_the_arrivals_make():
    """Its expected reuse of shared objects rests on the arrival rate: a trace's mean rate
    gives what Poisson arrivals at that rate give."""
    config = ModelConfig(
        duration_ms=100_000.0,
        policy=PolicyConfig(name="connection_scope"),
        workload=WorkloadConfig(session_rate_per_s=0.5),
    )
    arrivals = np.arange(0.0, 100_000.0, 500.0)  # 2 a second
    poisson = Simulation(config, 1)
    traced = Simulation(
        config,
        1,
        synthetic_plan(config.workload, 1, 100_000.0, np.random.SeedSequence(1), arrivals),
    )
    session = traced.plan.sessions[0]
    assert traced.decisions.shared_reuse(0, session) == pytest.approx(
        4 * poisson.decisions.shared_reuse(0, session)
    )


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_scenario_with_arrivals_runs_and_finds_its_trace_beside_it(tmp_path, engine):
    (tmp_path / "traces").mkdir()
    stamps = pd.date_range("2023-11-16 18:15:46.6805900", periods=40, freq="750ms")
    pd.DataFrame({"TIMESTAMP": stamps.astype(str)}).to_csv(tmp_path / "traces/a.csv", index=False)
    path = write_yaml(
        tmp_path,
        {
            "study": {"name": "arr", "duration": "20s", "replications": 1},
            "engine": engine,
            "workload": {"sessions": {"duration": "5s", "arrivals": {"path": "traces/a.csv"}}},
        },
    )
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    assert runs["error"].isna().all() and runs["hit_rate"].iloc[0] > 0
    assert runs["memory_settled_s"].isna().all()  # (the load follows the log: no steady state)


BAD_ARRIVALS = [
    ("a.csv", "TIMESTAMP\n2023-11-16 18:15:46\nyesterday\n", "a.csv:TIMESTAMP: row 1: not a time"),
    ("a.csv", "when\n1\n", "a.csv: missing column 'TIMESTAMP' (workload.sessions.arrivals.column)"),
    ("a.csv", "TIMESTAMP\n", "the log has no rows"),
    ("a.json", "{}", "workload.sessions.arrivals.path: not a .csv or .parquet file: a.json"),
    ("a.csv", "TIMESTAMP\n1\ninf\n", "a.csv:TIMESTAMP: row 1: not a time"),
    ("a.csv", "TIMESTAMP,x\n10,a\n,b\n30,c\n", "a.csv:TIMESTAMP: row 1: not a time"),
    ("a.csv", "TIMESTAMP\ntrue\nfalse\n", "a.csv:TIMESTAMP: row 0: not a time"),
    ("a.csv", "TIMESTAMP,TIMESTAMP\n10,20\n", "a.csv: column 'TIMESTAMP' given twice"),
    (  # (times in ns, read as ms: the key that scales them named)
        "a.csv",
        "TIMESTAMP\n0\n1e19\n",
        "the arrivals span more milliseconds than an int64 holds, at time_scale 1 "
        "(workload.sessions.arrivals.time_scale scales its times)",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_ARRIVALS)
def test_bad_arrivals_are_one_line_before_anything_runs(tmp_path, capsys, name, content, message):
    (tmp_path / name).write_text(content)
    path = write_yaml(tmp_path, {"workload": {"sessions": {"arrivals": {"path": name}}}})
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_missing_arrivals_file(tmp_path, capsys):
    path = write_yaml(tmp_path, {"workload": {"sessions": {"arrivals": {"path": "gone.csv"}}}})
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.startswith(
        "error: workload.sessions.arrivals.path: no such file:"
    )
