"""Studies end to end: results on disk, resume, failures, executors, plots, the scenario library."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib.image
import matplotlib.pyplot
import numpy as np
import pandas as pd
import pytest
import yaml

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.metrics import METRICS, OUTCOME_RATES
from nnrpsim.model.run_size import run_size
from nnrpsim.printed_tables import summary_table
from nnrpsim.results import ResultStore
from nnrpsim.run_config import model_config
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.summaries import swept_columns
from nnrpsim.tasks import run_inputs, tasks_for
from nnrpsim.workload_facts import sessions_per_s
from tests.conftest import ROOT, SMALL_STUDY, write_yaml

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def _metric_frame(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[["point", *METRICS]].reset_index(drop=True)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_in_the_library_validates(path, capsys):
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "valid" in out and err == ""  # (no warm-up too short for its sessions' climb)
    assert path.read_text().startswith("#")  # each opens with the question it answers


@pytest.mark.all_plot_formats
def test_quickstart_runs_end_to_end_shortened(tmp_path):
    raw = yaml.safe_load((ROOT / "scenarios/quickstart.yaml").read_text())
    raw["study"].update(duration="60s", warmup="10s", replications=1)
    raw["sweep"]["grid"]["host_policy.ttl_fraction"] = [0.05, 0.5]
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "qs", jobs=1, progress=False)
    summary = result.summary
    assert len(summary) == 4 and (summary["failures"] == 0).all()
    assert set(METRICS) <= set(summary.columns) and {f"{m}_ci95" for m in METRICS} <= set(
        summary.columns
    )
    assert (summary["invariant_violations"] == 0).all()
    no_changes = summary[summary["workload.invalidations.rate_per_s"] == 0].sort_values(
        "host_policy.ttl_fraction"
    )
    assert no_changes["hit_rate"].is_monotonic_increasing  # a longer lease hits more
    for name in (
        "summary.csv",
        "summary.parquet",
        "runs.parquet",
        "timeseries.parquet",
        "manifest.json",
    ):
        assert (tmp_path / "qs" / name).is_file()
    manifest = json.loads((tmp_path / "qs/manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["runs"] == 4 and manifest["failures"] == []
    assert manifest["nnrpsim_version"] == nnrpsim.__version__ and len(manifest["seeds"]) == 4
    names = {p.name for p in result.plots}
    assert {
        "hit_rate_vs_ttl.png",
        "hit_rate_vs_ttl.svg",
        "wire_saving_vs_ttl.png",  # (where the TTL's savings stop growing)
        "fallback_vs_invalidation.png",
        "wire_saving_vs_invalidation.png",
        "gpu_memory_over_time.png",
        "hit_rate_vs_gpu_memory.svg",
    } <= names
    for plot in result.plots:
        assert plot.stat().st_size > 1000
        if plot.suffix == ".png":
            assert matplotlib.image.imread(plot).shape[0] > 100


@pytest.mark.plots
def test_server_load_study_shortened_shows_where_inlining_saturates_one_worker(tmp_path):
    raw = yaml.safe_load((ROOT / "scenarios/server_load.yaml").read_text())
    raw["study"].update(duration="50s", warmup="20s", replications=1)
    raw["sweep"]["grid"] = {
        "workload.sessions.rate_per_s": [1, 8],
        "host_policy.name": ["never", "best_practice"],
    }
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "sl", jobs=1, progress=False)
    p99 = result.summary.set_index(["workload.sessions.rate_per_s", "host_policy.name"])[
        "p99_latency_ms"
    ]
    # Inline bodies load the worker (about 0.35 ms a frame): queueing shows at the higher load.
    assert p99[(8, "never")] > 1.5 * p99[(1, "never")]
    # References cost it 0.05 ms a frame: the latency does not move.
    assert p99[(8, "best_practice")] == pytest.approx(p99[(1, "best_practice")], rel=0.05)
    load = result.summary.set_index(["workload.sessions.rate_per_s", "host_policy.name"])[
        "peak_server_load"
    ]
    assert load[(8, "never")] > 0.5 > 0.2 > load[(8, "best_practice")]
    series = pd.read_parquet(tmp_path / "sl/timeseries.parquet")
    measured = series[series["time_ms"] > 20_000].groupby("point")["server_load"].mean()
    points = result.summary.set_index("point")["peak_server_load"]
    assert measured.to_numpy() == pytest.approx(points[measured.index].to_numpy(), rel=0.05)
    assert (tmp_path / "sl/plots/server_load_over_time.png").stat().st_size > 1000
    plot = tmp_path / "sl/plots/p99_latency_vs_workload_sessions_rate_per_s.png"
    assert matplotlib.image.imread(plot).shape[0] > 100


@pytest.mark.plots
def test_refused_puts_study_shortened_a_back_off_saves_the_bodies_refused_puts_waste(tmp_path):
    raw = yaml.safe_load((ROOT / "scenarios/refused_puts.yaml").read_text())
    raw["study"].update(duration="2min", warmup="1min", replications=1)
    raw["sweep"]["grid"] = {
        "host_policy.refused_put_backoff": ["0s", "60s"],
        "topology.eviction": ["none", "lru"],
        "topology.gpu_memory": ["64MiB"],
    }
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "rp", jobs=1, progress=False)
    rows = result.summary.set_index(["topology.eviction", "host_policy.refused_put_backoff"])
    plain, patient = rows.loc[("none", 0.0)], rows.loc[("none", 60_000.0)]
    # A server that never evicts refuses most PUTs: a plain host sends each body twice.
    assert patient["wire_bytes"] < 0.8 * plain["wire_bytes"]
    assert patient["hit_rate"] == pytest.approx(plain["hit_rate"], abs=0.05)
    # A server that evicts never refuses for room: the back-off changes nothing.
    for metric in ("wire_bytes", "hit_rate", "installs"):
        assert rows.loc[("lru", 0.0), metric] == rows.loc[("lru", 60_000.0), metric]


@pytest.mark.plots
def test_object_kinds_study_shortened_ranks_kinds_by_bytes_not_hit_rate(tmp_path):
    raw = yaml.safe_load((ROOT / "scenarios/object_kinds.yaml").read_text())
    raw["study"].update(duration="3min", replications=1)
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "ok", jobs=1, progress=False)
    kinds = result.summary["topology.object_kinds"].map(lambda value: "+".join(json.loads(value)))
    rows = result.summary.set_index(kinds)
    tables, small = rows.loc["tensor_section_table"], rows.loc["prompt_segment+tool_schema"]
    everything = rows.loc["prompt_segment+tool_schema+tensor_section_table"]
    # The 1 MiB tables are few references but most of the bytes; the small kinds the reverse.
    assert tables["hit_rate"] < 0.5 * small["hit_rate"]
    assert tables["wire_bytes_saved"] > 10 * small["wire_bytes_saved"]
    assert tables["mean_gpu_bytes"] > 10 * small["mean_gpu_bytes"]
    assert everything["hit_rate"] > small["hit_rate"] > tables["hit_rate"]
    # A kind the server does not negotiate is inlined: caching fewer kinds inlines more.
    assert everything["inline_rate_policy"] < small["inline_rate_policy"]
    assert (tmp_path / "ok/plots/wire_saving_vs_gpu_memory.png").stat().st_size > 1000
    assert matplotlib.image.imread(tmp_path / "ok/plots/bytes_by_kind.png").shape[0] > 100


@pytest.mark.plots
def test_same_numbers_and_plots_whatever_the_job_count(tmp_path, small_yaml, monkeypatch):
    """Two workers, spawned once, draw the plots too (a second's drawing that a sweep on
    one worker takes a tenth of its time for): the same files, pixel for pixel."""
    import nnrpsim.study

    pools = []

    def plot_recording_its_pool(path, pool):
        pools.append(pool)
        return nnrpsim.plots.draw_study(path, pool)

    monkeypatch.setattr(nnrpsim.study, "draw_study", plot_recording_its_pool)
    one = nnrpsim.run(small_yaml, out=tmp_path / "one", jobs=1, progress=False)
    two = nnrpsim.run(small_yaml, out=tmp_path / "two", jobs=2, progress=False)
    assert pools[0] is None and isinstance(pools[1], ProcessPoolExecutor)
    pd.testing.assert_frame_equal(_metric_frame(one.summary), _metric_frame(two.summary))
    assert len(one.plots) > 5 and [p.relative_to(two.path) for p in two.plots] == [
        p.relative_to(one.path) for p in one.plots
    ]
    for here, apart in zip(one.plots, two.plots, strict=True):
        if here.suffix == ".png":
            np.testing.assert_array_equal(
                matplotlib.image.imread(here), matplotlib.image.imread(apart)
            )
    in_memory = nnrpsim.sweep(small_yaml)
    pd.testing.assert_frame_equal(_metric_frame(one.summary), _metric_frame(in_memory))
    from_a_mapping = nnrpsim.sweep(SMALL_STUDY)  # a notebook's dict, as the file reads
    pd.testing.assert_frame_equal(_metric_frame(one.summary), _metric_frame(from_a_mapping))


def test_plots_are_drawn_in_processes_not_threads(tmp_path, small_yaml):
    """pyplot draws one figure at a time in a process: a pool of threads would mix them."""
    from concurrent.futures import ThreadPoolExecutor

    result = nnrpsim.run(small_yaml, out=tmp_path / "t", jobs=1, progress=False)
    with ThreadPoolExecutor(2) as threads, pytest.raises(TypeError, match=r"^pool: a Process"):
        nnrpsim.plot_study(result.path, threads)


def test_the_api_takes_a_scenario_in_each_form_and_refuses_what_is_none(small_yaml):
    """A path, a mapping as the file reads and a Scenario are one scenario; a lone override
    string is one override (iterated, it was one bad override a character); anything else, or
    a job count that is no whole number, is refused before anything runs."""
    from_file = nnrpsim.load_scenario(small_yaml, "study.replications=5")
    assert from_file.study.replications == 5
    from_a_mapping = nnrpsim.load_scenario(yaml.safe_load(small_yaml.read_text()))
    assert from_a_mapping.model_dump() == nnrpsim.load_scenario(small_yaml).model_dump()
    assert nnrpsim.load_scenario(from_file) is from_file
    assert nnrpsim.load_scenario(from_file, ["study.replications=1"]).study.replications == 1
    for wrong in (42, None, [small_yaml]):
        with pytest.raises(TypeError, match=f"^a scenario is a .*, not {type(wrong).__name__}$"):
            nnrpsim.sweep(wrong)
    for jobs in ("2", 1.5, True):
        with pytest.raises(
            nnrpsim.ScenarioError, match=f"^--jobs: must be a whole number, got {jobs!r}"
        ):
            nnrpsim.sweep(small_yaml, jobs=jobs)


@pytest.mark.parametrize("wrong", [b"study.seed=3", [1, 2], {"study.seed=3"}, {"a": 1}, 5])
def test_overrides_of_another_type_are_refused_by_what_they_are(small_yaml, wrong):
    """Bytes and a list of numbers were iterated into an ``AttributeError`` from the parser
    (``'int' object has no attribute 'partition'``); a set has no order for its overrides."""
    with pytest.raises(TypeError, match=r"^overrides are KEY=VALUE text, or a list of it, not "):
        nnrpsim.load_scenario(small_yaml, wrong)


def test_no_overrides_may_be_none(small_yaml):
    assert nnrpsim.load_scenario(small_yaml, None) == nnrpsim.load_scenario(small_yaml)
    assert nnrpsim.load_scenario(SMALL_STUDY, None) == nnrpsim.load_scenario(SMALL_STUDY)


BACKING_OFF = [
    "topology.eviction=none",
    "topology.gpu_memory=2MiB",
    "host_policy.refused_put_backoff=5s",
]


@pytest.mark.parametrize(
    "policy",
    [[], ["host_policy.name=connection_scope", "host_policy.connection_ttl=5s"], BACKING_OFF],
)
def test_the_vector_engine_agrees_with_the_des_on_a_study(small_yaml, policy):
    """A study (0.5 ms links, sessions of several operations, TTL fractions, content
    changes, a warm-up) on both engines: the vector run's hosts act as the DES's, so each
    point agrees to the DES's timing (a lease near its end while a frame is in flight). With
    a connection TTL, shared objects' leases ask for it and outlive the sessions. A server
    that never evicts refuses PUTs, and the hosts back off after each refusal. The memory
    is the bytes held on both, which keep a lease run out until the sweep (every second)
    frees it: 12 % more than the live leases' at the shorter TTL."""
    des = nnrpsim.sweep(small_yaml, policy)
    vector = nnrpsim.sweep(small_yaml, ["engine=vector", *policy])
    assert vector["p99_latency_ms"].isna().all() and des["p99_latency_ms"].notna().all()
    assert (des["refused_puts"] > 0).all() == (policy == BACKING_OFF)
    np.testing.assert_allclose(vector["hit_rate"], des["hit_rate"], atol=1e-3)
    for metric in ("wire_bytes_saved", "installs", "renewals", "refused_puts", "mean_gpu_bytes"):
        np.testing.assert_allclose(vector[metric], des[metric], rtol=2e-2)


def test_dask_local_cluster_gives_the_same_summary(tmp_path, small_yaml):
    pytest.importorskip("dask.distributed")
    local = nnrpsim.run(small_yaml, out=tmp_path / "local", jobs=1, progress=False)
    dask = nnrpsim.run(small_yaml, out=tmp_path / "dask", jobs=2, executor="dask", progress=False)
    pd.testing.assert_frame_equal(_metric_frame(local.summary), _metric_frame(dask.summary))
    # the runner called with no client of its own connects one for its runs
    from nnrpsim import runner

    tasks = tasks_for(sweep_points(nnrpsim.load_scenario(small_yaml)))[:2]
    records = [result["record"] for result in runner.execute(tasks, 2, executor="dask")]
    by_run = local.runs.set_index(["point", "replication"])["hit_rate"]
    assert len(records) == 2
    for record in records:
        assert record["hit_rate"] == by_run[record["point"], record["replication"]]


def test_a_dask_study_beside_another_cluster_says_nothing_of_ports(tmp_path, small_yaml):
    """The local cluster's scheduler serves HTTP whatever the dashboard: on port 8787 it was,
    and with another cluster there (a second study at once, a notebook's) distributed warned
    that the port was in use. It takes a free loopback port now."""
    pytest.importorskip("dask.distributed")
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 8787))
        taken.listen()
    except OSError:  # (in use already: as the test wants it)
        pass
    try:
        with warnings.catch_warnings(record=True) as told:
            warnings.simplefilter("always")
            nnrpsim.run(small_yaml, out=tmp_path / "d", jobs=1, executor="dask", progress=False)
    finally:
        taken.close()
    assert not [str(w.message) for w in told if "already in use" in str(w.message)]


@pytest.mark.all_plot_formats
def test_the_printed_summary_names_swept_keys_alone_and_skips_unmeasured_metrics(
    tmp_path, small_yaml, capsys, monkeypatch
):
    """``rate_per_s`` alone would not say whose: sessions', operations' or invalidations'. A
    metric no run measured is left out."""
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    header = printed[0].split()
    assert header[:3] == ["point", "ttl_fraction", "invalidations.rate_per_s"]
    assert "p99_latency_ms" in header
    # where to look next: the table's file, the warnings printed above (its climb is too short
    # for its 40 s) and how many plots (each a PNG and an SVG)
    pngs = len(list((tmp_path / "out/plots").glob("*.png")))
    assert pngs > 5 and printed[-1] == (
        f"results: {tmp_path / 'out'} (complete): summary.csv, warnings.txt, {pngs} plots in "
        "plots/ (PNG and SVG)"
    )
    vector = ["--set", "engine=vector"]  # it measures no latency: no column of NaN
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", "none")  # (its table alone)
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "v"), "--quiet", *vector]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert "hit_rate" in header and "p99_latency_ms" not in header


def test_run_prints_its_summary_as_wide_as_the_terminal(tmp_path, small_yaml, capsys, monkeypatch):
    """On a terminal the table's columns go on in blocks as wide as it is; piped (the test
    above), a row a line."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "t"), "--quiet"]) == 0
    *table, results = capsys.readouterr().out.splitlines()
    assert results.startswith("results: ") and "" in table
    assert max(map(len, table)) <= 60


def test_a_swept_key_without_a_dot_is_shown_and_drawn_as_swept(drawn):
    """``engine`` is a swept key like any other: the table showed only dotted keys, so the
    points of an engine sweep could not be told apart; the plots' lines part by it too."""
    from nnrpsim import plots

    summary = pd.DataFrame(
        {
            "point": [0, 1],
            "host_policy.ttl_fraction": [0.5, 0.5],
            "engine": ["des", "vector"],
            "replications": [1, 1],
            "failures": [0, 0],
            "hit_rate": [0.66, 0.65],
            "hit_rate_ci95": [np.nan, np.nan],
        }
    )
    header, *rows = summary_table(summary).splitlines()
    assert header.split()[:3] == ["point", "ttl_fraction", "engine"]
    assert [row.split()[2] for row in rows] == ["des", "vector"]
    plots._metric_vs(
        summary, "host_policy.ttl_fraction", "hit_rate", swept_columns(summary), None, "x"
    )
    labels = [line.get_label() for line in drawn[0].axes[0].get_lines()]
    assert labels == ["engine = des", "engine = vector"]


def test_the_printed_summary_gives_values_and_byte_metrics_in_units():
    """Budgets as ``32 MiB`` (no budget: ``unlimited``), durations in seconds, and each byte
    metric scaled to the binary unit its largest magnitude reaches, named in the header."""
    summary = pd.DataFrame(
        {
            "point": [0, 1],
            "topology.gpu_memory": [32 * 2**20, np.nan],
            "host_policy.ttl_hint": [30_000.0, 90_000.0],
            "replications": [2, 2],
            "failures": [0, 0],
            "hit_rate": [0.5, 0.75],
            "mean_gpu_bytes": [3 * 2**20, 512 * 2**10],
            "wire_bytes_saved": [-1.5 * 2**30, 2**29],
            "wire_saving": [-0.25, 0.5],
        }
    )
    header, *rows = summary_table(summary).splitlines()
    assert header.split() == [
        "point",
        "gpu_memory",
        "ttl_hint",
        "replications",
        "failures",
        "hit_rate",
        "mean_gpu_bytes[MiB]",
        "wire_bytes_saved[GiB]",
        "wire_saving",  # (a fraction: as it is)
    ]
    assert rows[0].split() == ["0", "32", "MiB", "30", "s", "2", "0", "0.5", "3", "-1.5", "-0.25"]
    assert rows[1].split() == ["1", "unlimited", "90", "s", "2", "0", "0.75", "0.5", "0.5", "0.5"]


def test_the_printed_summary_writes_big_numbers_without_an_exponent():
    """Terabytes in TiB, and thousands (a trace's seconds-long latencies in ms, an interval)
    in full: the Mooncake study's saving read ``1.123e+04`` GiB."""
    from nnrpsim.printed_tables import differences_table

    summary = pd.DataFrame(
        {
            "point": [0, 1],
            "replications": [2, 2],
            "failures": [0, 0],
            "wire_bytes_saved": [11.88 * 2**40, 0.4435 * 2**40],
            "p99_latency_ms": [38_812.0, 2.5],
        }
    )
    header, *rows = summary_table(summary).splitlines()
    assert header.split()[3:] == ["wire_bytes_saved[TiB]", "p99_latency_ms"]
    assert rows[0].split()[3:] == ["11.88", "38,810"]
    assert rows[1].split()[3:] == ["0.4435", "2.5"]
    differences = pd.DataFrame(
        {
            "point": [0, 1],
            "baseline_point": [2, 2],
            "pairs": [2, 2],
            "p99_latency_ms": [38_812.0, -2.5],
            "p99_latency_ms_ci95": [12_345.0, 0.25],
        }
    )
    _, *rows = differences_table(differences).splitlines()
    shown = [row.split()[3:] for row in rows]
    assert shown == [["+38,810", "±", "12,000"], ["-2.5", "±", "0.25"]]


def test_the_printed_summary_of_a_big_sweep_shows_its_ends_and_says_how_many_more():
    """A sweep of 10,000 points printed 10,000 rows; beyond MAX_SUMMARY_ROWS the table gives
    the first and last half of them, then how many it left out."""
    from nnrpsim.printed_tables import MAX_SUMMARY_ROWS

    for points in (MAX_SUMMARY_ROWS, MAX_SUMMARY_ROWS + 1, 1000):
        summary = pd.DataFrame(
            {
                "point": range(points),
                "host_policy.ttl_hint": np.arange(points) * 1000.0 + 1000.0,
                "replications": 1,
                "failures": 0,
                "hit_rate": 0.5,
            }
        )
        _, *rows = summary_table(summary).splitlines()
        if points == MAX_SUMMARY_ROWS:
            assert [int(row.split()[0]) for row in rows] == list(range(points))
            continue
        half = MAX_SUMMARY_ROWS // 2
        shown = [*range(half), *range(points - half, points)]
        assert [int(row.split()[0]) for row in rows[:half] + rows[half + 1 : -1]] == shown
        assert rows[half].split()[0] == "..." and rows[-1] == (
            f"({points - MAX_SUMMARY_ROWS:,} of {points:,} points not shown: "
            "summary.csv has them all)"
        )


def test_the_printed_summary_fits_a_terminal_in_blocks_each_led_by_the_point():
    """A summary of three swept keys printed 175 characters a row, and an 80-column terminal
    broke every row in two. On a terminal the columns that do not fit go on in blocks
    below, each led by the point; piped, the table stays one block, a row a line."""
    points = 45  # (beyond MAX_SUMMARY_ROWS: each block leaves out the same rows)
    summary = pd.DataFrame(
        {
            "point": range(points),
            "workload.objects.size.median": np.arange(points) * 1024.0 + 256.0,
            "workload.operations.rate_per_s": 0.02,
            "host_policy.name": "connection_scope",
            "replications": 2,
            "failures": 0,
            **{m: np.linspace(0.1, 0.9, points) for m in ("hit_rate", "fallback_rate")},
            "mean_gpu_bytes": np.arange(points) * 2.0**20,
            "wire_bytes_saved": np.arange(points) * 2.0**30,
            "wire_saving": np.linspace(-0.2, 0.9, points),
            "p99_latency_ms": 2.5,
        }
    )
    whole = summary_table(summary)
    assert max(map(len, whole.splitlines())) > 150
    for width in (80, 100):
        text = summary_table(summary, width)
        assert all(len(line) <= width for line in text.splitlines())
        tables, note = text.rsplit("\n", 1)
        assert note == whole.splitlines()[-1]  # (how many points are not shown)
        blocks = [block.splitlines() for block in tables.split("\n\n")]
        assert len(blocks) > 1 and all(block[0].split()[0] == "point" for block in blocks)
        names = [name for block in blocks for name in block[0].split()[1:]]
        assert names == whole.splitlines()[0].split()[1:]
        for block in blocks:  # every block's rows are the same points, in order
            assert [row.split()[0] for row in block[1:]] == [
                row.split()[0] for row in whole.splitlines()[1:-1]
            ]


def test_each_sweep_point_holds_its_own_values_and_the_scenario_keeps_its_own():
    """A point is the scenario with its swept values written in: two swept keys of one
    section, and a zip beside a grid, give each point its own combination (the points are
    written into one dict in turn, each validated before the next is written)."""
    import itertools

    raw = {
        "sweep": {
            "grid": {"topology.gpu_memory": ["1MiB", "2MiB"], "topology.eviction": ["lru", "fifo"]},
            "zip": {"host_policy.ttl_fraction": [0.1, 0.2], "workload.sessions.rate_per_s": [1, 3]},
        }
    }
    scenario = parse_scenario(raw)
    points = sweep_points(scenario)
    held = [
        (
            s.topology.gpu_memory,
            s.topology.eviction,
            s.host_policy.ttl_fraction,
            s.workload.sessions.rate_per_s,
        )
        for s in (point.scenario for point in points)
    ]
    grid = itertools.product([2**20, 2**21], ["lru", "fifo"])
    assert held == [(*g, *z) for g, z in itertools.product(grid, [(0.1, 1), (0.2, 3)])]
    assert [point.params["topology.gpu_memory"] for point in points] == [2**20] * 4 + [2**21] * 4
    default = parse_scenario({})
    assert scenario.topology == default.topology and scenario.host_policy == default.host_policy


def test_a_scenarios_sweep_and_configs_are_worked_out_once_while_it_lives(
    tmp_path, small_yaml, monkeypatch
):
    """A study checked its sweep as it loaded the scenario, then expanded it again to run it
    (1.2 s for 10,000 points), and built each point's model config to size its runs, again to
    describe its workload and again to run it; now both are kept with the scenario."""
    import gc
    import weakref

    from nnrpsim import run_config
    from nnrpsim.scenario import sweep

    made: dict[str, int] = {"points": 0, "configs": 0}

    def counting(name: str, cls: type) -> type:
        def counted(*args, **kwargs):
            made[name] += 1
            return cls(*args, **kwargs)

        return counted

    monkeypatch.setattr(sweep, "Point", counting("points", sweep.Point))
    monkeypatch.setattr(run_config, "ModelConfig", counting("configs", run_config.ModelConfig))
    scenario = nnrpsim.load_scenario(small_yaml)
    first, again = sweep_points(scenario), sweep_points(scenario)
    n = len(first)
    assert made["points"] == n and first == again and first is not again
    assert sweep_points(nnrpsim.load_scenario(small_yaml)) == first and made["points"] == 2 * n
    nnrpsim.run(scenario, out=tmp_path / "s", jobs=1, progress=False)
    assert made == {"points": 2 * n, "configs": n}
    assert main(["validate", str(small_yaml)]) == 0
    assert made == {"points": 3 * n, "configs": 2 * n}
    kept = weakref.ref(first[0])
    del scenario, first, again
    gc.collect()
    assert kept() is None


def test_results_are_never_overwritten_without_resume(tmp_path, small_yaml, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    before = sorted(p.stat().st_mtime_ns for p in (out / "runs").iterdir())
    assert main(["run", str(small_yaml), "--out", str(out), "--quiet"]) == 2
    assert "pass --resume" in capsys.readouterr().err
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", "--quiet"]) == 0
    assert sorted(p.stat().st_mtime_ns for p in (out / "runs").iterdir()) == before  # nothing rerun
    assert (
        main(["run", str(small_yaml), "--out", str(out), "--resume", "--set", "study.seed=9"]) == 2
    )
    # which keys changed, as a scenario writes them (it gave two hashes, which said nothing)
    assert "holds a different scenario (study.seed: 4 there, 9 here; the file" in (
        capsys.readouterr().err
    )
    changed = ["study.duration=1min", "topology.gpu_memory=2GiB", "sweep.grid.engine=[vector]"]
    changed += ["workload.objects.shared_kinds={tool_schema: 1}"]
    sets = [f"--set={change}" for change in changed]
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", *sets]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "holds a different scenario (study.duration: 40 s there, 60 s here; topology.gpu_memory: "
        "8 GiB there, 2 GiB here; sweep.grid.engine: absent there, [vector] here; and 1 more; "
    ) in err
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", *sets[:3]]) == 2
    assert "sweep.grid.engine: absent there, [vector] here; the file, --set" in (
        capsys.readouterr().err
    )  # (three named: none more)
    # a manifest that recorded no scenario: its digest, all there is to go by
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["scenario"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", sets[0]]) == 2
    assert f"different scenario ({manifest['scenario_hash']} != " in capsys.readouterr().err
    # (the scenario of that digest resumes: nothing to run)
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", "--quiet"]) == 0


def test_resume_with_more_replications_adds_them_as_a_study_of_that_many_makes_them(
    tmp_path, small_yaml, capsys
):
    """Replication r is seeded by r alone, so the runs of a study of one replication are the
    first runs of a study of two: a resume with more (and nothing else a run reads changed)
    adds the rest, and fewer, or more with another change, are refused."""
    out = tmp_path / "grown"
    command = ["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]
    assert main([*command, "--set", "study.replications=1"]) == 0
    first = {path.name: path.read_bytes() for path in (out / "runs").iterdir()}
    assert len(first) == 4
    assert main([*command, "--resume"]) == 0  # (the file's two replications)
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(zip(runs["point"], runs["replication"], strict=True)) == [
        (point, replication) for point in range(4) for replication in range(2)
    ]
    for name, content in first.items():  # the first replication's runs kept as they were
        assert (out / "runs" / name).read_bytes() == content
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"]["study"]["replications"] == 2 and manifest["runs"] == 8
    fresh = nnrpsim.run(small_yaml, out=tmp_path / "fresh", jobs=1, progress=False)
    pd.testing.assert_frame_equal(
        _metric_frame(pd.read_parquet(out / "summary.parquet")), _metric_frame(fresh.summary)
    )
    capsys.readouterr()
    assert main([*command, "--resume", "--set", "study.replications=1"]) == 2
    assert "different scenario (study.replications: 2 there, 1 here;" in capsys.readouterr().err
    more_and_another = ["--set", "study.replications=3", "--set", "study.seed=9"]
    assert main([*command, "--resume", *more_and_another]) == 2
    err = capsys.readouterr().err
    assert "study.seed: 4 there, 9 here" in err and "study.replications: 2 there, 3 here" in err
    assert len(list((out / "runs").iterdir())) == 8  # (nothing run for either)
    # a description no run reads may change: the runs stay, the manifest takes it
    written = {path.name: path.read_bytes() for path in (out / "runs").iterdir()}
    assert main([*command, "--resume", "--set", "study.description=Another question"]) == 0
    assert {path.name: path.read_bytes() for path in (out / "runs").iterdir()} == written
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"]["study"]["description"] == "Another question"


def test_a_results_folder_runs_the_study_its_manifest_records_there(tmp_path, small_yaml, capsys):
    """``nnrpsim run FOLDER --resume --set study.replications=N`` grows the study in FOLDER
    whatever its file has become since (here another seed): the scenario is the manifest's,
    and the runs go to the folder. ``validate FOLDER`` checks that scenario."""
    out = tmp_path / "study"
    command = ["--jobs", "1", "--quiet"]
    assert main(["run", str(small_yaml), "--out", str(out), *command]) == 0
    small_yaml.write_text(small_yaml.read_text().replace("seed: 4", "seed: 5"))
    assert nnrpsim.load_scenario(small_yaml).study.seed == 5
    assert main(["run", str(out), *command]) == 2  # (a finished study: --resume, as ever)
    assert "already holds results; pass --resume" in capsys.readouterr().err
    grown = ["--resume", "--set", "study.replications=3"]
    assert main(["run", str(out), *grown, *command]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 12 and set(runs["replication"]) == {0, 1, 2}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"]["study"]["seed"] == 4
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0  # (its three replications; the file has two)
    assert capsys.readouterr().out.startswith(f"{out}: valid (4 sweep points, 12 runs, ")
    assert main(["run", str(tmp_path), "--resume"]) == 2  # no manifest: not a results folder
    assert "manifest.json: no such file: not a results folder?" in capsys.readouterr().err


def test_resume_refuses_runs_of_a_trace_that_has_changed_since(tmp_path, capsys):
    """The scenario names a file, not what it holds: a trace rewritten between a study and its
    --resume had the new runs averaged with the old ones'. A manifest of a version that did
    not record the files' content is taken at its word."""
    trace = tmp_path / "trace.jsonl"
    line = '{{"timestamp": {}, "input_length": 600, "hash_ids": [1, 2]}}\n'
    trace.write_text("".join(line.format(t) for t in range(0, 4000, 500)))
    raw = {"study": {"replications": 2, "duration": "3501ms"}, "engine": "vector"}  # (the trace's)
    scenario = write_yaml(tmp_path, {**raw, "workload": {"trace": {"path": "trace.jsonl"}}})
    out = tmp_path / "out"
    command = ["run", str(scenario), "--out", str(out), "--jobs", "1", "--quiet"]
    assert main(command) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["inputs"]) == [str(trace)]
    (out / "runs/p0000-r001.arrow").unlink()
    trace.write_text(line.format(0) + trace.read_text())  # one request more
    assert main([*command, "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --resume: {trace} changed since the runs in {out} read it")
    assert err.count("\n") == 1 and not (out / "runs/p0000-r001.arrow").exists()
    # a version that recorded other files' content but not this one's: taken at its word too
    (out / "manifest.json").write_text(json.dumps({**manifest, "inputs": {}}))
    assert main([*command, "--resume"]) == 0
    del manifest["inputs"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main([*command, "--resume"]) == 0


def test_resume_after_a_killed_run_loses_and_duplicates_nothing(tmp_path, small_yaml):
    out = tmp_path / "killed"
    command = [
        sys.executable,
        "-m",
        "nnrpsim",
        "run",
        str(small_yaml),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--quiet",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list((out / "runs").glob("p*.arrow"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.read_bytes() for p in (out / "runs").glob("p*.arrow")}
    assert 3 <= len(finished) < 8
    assert main(["run", str(small_yaml), "--out", str(out), "--resume", "--quiet"]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 8 and not runs.duplicated(["point", "replication"]).any()
    for name, content in finished.items():  # what was finished before the kill was kept as is
        assert (out / "runs" / name).read_bytes() == content
    fresh = nnrpsim.run(small_yaml, out=tmp_path / "fresh", jobs=1, progress=False)
    pd.testing.assert_frame_equal(
        _metric_frame(pd.read_parquet(out / "summary.parquet")), _metric_frame(fresh.summary)
    )


def test_a_study_killed_before_its_summary_is_checked_on_resume_as_any_other(
    tmp_path, small_yaml, monkeypatch, capsys
):
    """The manifest is written as a study starts: a study killed before its summary (SIGKILL,
    the OOM killer: its last block never runs) had none, and a resume with another seed kept
    its runs, mixing them with the new seed's. Its folder names its study to resume, too."""

    class Killed(BaseException):
        pass

    def killed(store, meta):
        raise Killed

    out = tmp_path / "killed"
    monkeypatch.setattr(ResultStore, "finalize", killed)
    with pytest.raises(Killed):
        nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    monkeypatch.undo()
    assert len(list((out / "runs").iterdir())) == 8 and not (out / "summary.csv").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted (rerun with --resume)"
    assert manifest["scenario"]["study"]["seed"] == 4
    command = ["run", str(small_yaml), "--out", str(out), "--resume", "--quiet"]
    assert main([*command, "--set", "study.seed=9"]) == 2
    assert "holds a different scenario (study.seed: 4 there, 9 here;" in capsys.readouterr().err
    assert main(["run", str(out), "--resume", "--quiet"]) == 0
    assert "\nresumed: kept 8 runs the folder held\n" in capsys.readouterr().out
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"


def test_a_failing_point_is_recorded_while_the_others_complete(
    tmp_path, small_yaml, flaky_last_point
):
    result = nnrpsim.run(small_yaml, out=tmp_path / "flaky", jobs=1, progress=False)
    assert result.summary["failures"].tolist() == [0, 0, 0, 2]
    assert (
        np.isnan(result.summary["hit_rate"].iloc[3])
        and result.summary["hit_rate"].iloc[:3].notna().all()
    )
    manifest = json.loads((tmp_path / "flaky/manifest.json").read_text())
    assert len(manifest["failures"]) == 2 and "injected failure" in manifest["failures"][0]["error"]
    flaky_last_point()  # resume retries exactly the failed runs
    again = nnrpsim.run(small_yaml, out=tmp_path / "flaky", resume=True, jobs=1, progress=False)
    assert (again.summary["failures"] == 0).all() and len(again.runs) == 8


def test_a_study_whose_every_run_failed_writes_no_table_by_kind(tmp_path, small_yaml, monkeypatch):
    """Nothing finished, so there is nothing by kind: no ``kinds.csv``, where an empty file
    would read as a table of no kinds; the summary counts each point's failures."""
    from nnrpsim import tasks

    def failing(config, seed, plan=None, progress=None):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(tasks, "simulate", failing)
    out = tmp_path / "failed"
    assert main(["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]) == 1
    summary = pd.read_csv(out / "summary.csv")
    assert summary["failures"].tolist() == [2] * 4 and summary["replications"].tolist() == [0] * 4
    assert summary["hit_rate"].isna().all()
    assert not (out / "kinds.csv").exists() and pd.read_parquet(out / "kinds.parquet").empty


def test_the_command_says_which_runs_failed_and_exits_1(
    tmp_path, small_yaml, flaky_last_point, capsys
):
    """The study is written all the same; without the warning, a ``failures`` column would be
    the only sign. Resumed, the runs succeed and the command exits 0."""
    command = ["run", str(small_yaml), "--out", str(tmp_path / "f"), "--quiet", "--jobs", "1"]
    assert main(command) == 1
    # (the small study's 5 s warm-up draws its own warning, before this one)
    failed = [line for line in capsys.readouterr().err.splitlines() if "failed" in line]
    assert len(failed) == 1 and "injected failure" in failed[0]
    assert failed[0].startswith("warning: point 3: 2 of 8 runs failed, the first with 'Runtime")
    flaky_last_point()
    assert main([*command, "--resume"]) == 0 and "failed" not in capsys.readouterr().err


def test_plot_command_redraws_from_saved_results(tmp_path, small_yaml, capsys, monkeypatch):
    out = tmp_path / "p"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)  # (it draws none: tests/conftest.py)
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", "png")
    assert main(["plot", str(out)]) == 0
    assert (out / "plots/hit_rate_vs_ttl.png").stat().st_size > 1000
    assert capsys.readouterr().err == ""  # a complete study's plots: nothing to warn of
    with warnings.catch_warnings():
        warnings.simplefilter("error", nnrpsim.StudyWarning)
        nnrpsim.plot_study(out)  # (the API neither)
    # a study interrupted after its summary: the plots of its finished runs, said to be so
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted (x)"}))
    assert main(["plot", str(out)]) == 0
    said = f"{out}: study interrupted (x); the plots show its finished runs only"
    assert capsys.readouterr().err == f"warning: {said}\n"  # (once, as one line)
    with pytest.warns(nnrpsim.StudyWarning) as told:  # a notebook's redraw is told too
        assert nnrpsim.plot_study(out)
    assert [str(warning.message) for warning in told] == [said]
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "holds no summary.parquet" in capsys.readouterr().err
    (out / "summary.parquet").write_bytes(b"damaged")
    assert main(["plot", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out / 'summary.parquet'}: not a readable results table (")
    assert err.count("\n") == 1
    with pytest.raises(
        nnrpsim.ScenarioError, match=r"summary\.parquet: no such file \(run a study"
    ):
        nnrpsim.plot_study(tmp_path / "empty")  # the API, which no command checked first
    # an interrupted study: its finished runs, no summary yet (a third Ctrl-C stops that), and
    # the manifest written as it started, which names its study
    (out / "summary.parquet").unlink()
    assert main(["plot", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: results: {out} holds 8 finished runs but no summary.parquet: its study did not "
        f"finish; nnrpsim run {out} --resume runs the rest and draws the plots\n"
    )
    (out / "manifest.json").unlink()  # (an earlier version's killed study: its file, then)
    assert main(["plot", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: results: {out} holds 8 finished runs but no summary.parquet: its study did not "
        f"finish; run its scenario again with --out {out} --resume, which runs the rest and "
        "draws the plots\n"
    )


def test_the_command_line_draws_its_files_whatever_backend_the_shell_names(tmp_path, small_yaml):
    """It writes files only: a misspelt MPLBACKEND failed matplotlib's import, a traceback."""
    out = tmp_path / "backend"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)  # (it draws none: tests/conftest.py)
    env = {**os.environ, "MPLBACKEND": "bogus", "NNRPSIM_PLOT_FORMATS": "png"}
    command = [sys.executable, "-m", "nnrpsim", "plot", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert str(out / "plots" / "hit_rate_vs_ttl.png") in done.stdout.splitlines()


@pytest.mark.parametrize("table", ["summary", "timeseries", "kinds"])
def test_plot_refuses_a_table_another_tool_wrote_in_one_line(
    tmp_path, small_yaml, capsys, monkeypatch, table
):
    """A readable Parquet file without the columns a study writes was a ``KeyError``
    traceback from deep in the plots; an empty one (a study stopped before its first run)
    still plots nothing."""
    out = tmp_path / "other"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)  # (it draws none: tests/conftest.py)
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", "png")
    path = out / f"{table}.parquet"
    pd.DataFrame({"point": [0, 1], "unrelated": [1.0, 2.0]}).to_parquet(path)
    assert main(["plot", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: no column ") and err.count("\n") == 1
    assert "not a table this version of nnrpsim wrote" in err
    pd.DataFrame().to_parquet(path)
    assert main(["plot", str(out)]) == 0


def test_plots_over_time_shade_the_warm_up_no_metric_counts(tmp_path, small_yaml, drawn):
    """The study's 5 s warm-up, from its manifest; swept, it differs by point: no shade."""
    from nnrpsim import plots

    out = tmp_path / "w"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)

    def shades() -> list[tuple[str, tuple[float, float]]]:
        drawn.clear()
        plots.plot_study(out)
        (ax,) = next(f for f in drawn if f.get_label() == "gpu_memory_over_time").axes
        spans = []
        for patch in ax.patches:  # (a Rectangle or, before matplotlib 3.9, a Polygon)
            x = patch.get_path().transformed(patch.get_patch_transform()).vertices[:, 0]
            spans.append((patch.get_label(), (float(x.min()), float(x.max()))))
        return spans

    assert shades() == [("warm-up (not measured)", (0.0, 5.0))]
    summary = pd.read_parquet(out / "summary.parquet")
    summary.insert(1, "study.warmup", [5_000.0, 5_000.0, 10_000.0, 10_000.0])
    summary.to_parquet(out / "summary.parquet")
    assert shades() == []


def test_plots_with_intervals_say_over_how_many_replications(tmp_path, small_yaml, drawn):
    """A band of two replications is a wide t interval: the plot says what it is, and says
    there is none with one replication."""
    from nnrpsim import plots

    out = tmp_path / "n"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)

    def notes() -> dict[str, str]:
        drawn.clear()
        plots.plot_study(out)
        titles = {fig.get_label(): fig.axes[0].get_title(loc="left") for fig in drawn}
        return {name: title for name, title in titles.items() if title}

    mean = "each point: the mean of 2 replications; {}: its 95 % confidence interval"
    labelled = "\nbeside each point: its ttl_fraction"  # (the trade-off's lines follow the TTL)
    tradeoffs = ["hit_rate_vs_gpu_memory", "wire_saving_vs_gpu_memory"]
    assert notes() == {
        **dict.fromkeys(
            [
                "hit_rate_vs_ttl",
                "wire_saving_vs_ttl",
                "hit_rate_vs_invalidation",
                "wire_saving_vs_invalidation",
                "fallback_vs_invalidation",
            ],
            mean.format("shaded"),
        ),
        **dict.fromkeys(tradeoffs, mean.format("bars") + labelled),
        "bytes_by_kind": "each bar: the mean of 2 replications, stacked by object kind",
    }
    summary = pd.read_parquet(out / "summary.parquet")
    summary["replications"] = [1, 2, 1, 2]  # (a failed run leaves fewer)
    summary.to_parquet(out / "summary.parquet")
    assert notes()["hit_rate_vs_ttl"].startswith("each point: the mean of 1-2 replications;")
    summary["replications"] = 1
    summary.to_parquet(out / "summary.parquet")
    one = "each point: one replication (no confidence interval)"
    one_bar = "each bar: one replication, stacked by object kind"
    assert set(notes().values()) == {one, one + labelled, one_bar}


@pytest.mark.parametrize("damaged", ["runs", "timeseries", "kinds", "no error column"])
def test_resume_redoes_a_run_whose_file_was_damaged(tmp_path, small_yaml, damaged):
    """A record without its ``error`` column is readable, but says of no run that it
    finished."""
    from nnrpsim.run_files import read_run_file, write_run_file

    out = tmp_path / "d"
    first = nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    record = out / "runs/p0002-r001.arrow"
    if damaged == "no error column":
        write_run_file(record, read_run_file(record).drop_columns(["error"]))
    else:
        (out / damaged / record.name).write_bytes(b"damaged")
    untouched = (out / "runs/p0001-r000.arrow").stat().st_mtime_ns
    damaged_at = record.stat().st_mtime_ns
    again = nnrpsim.run(small_yaml, out=out, resume=True, jobs=1, progress=False)
    assert (out / "runs/p0001-r000.arrow").stat().st_mtime_ns == untouched
    assert record.stat().st_mtime_ns != damaged_at  # (its run done again)
    assert "error" in read_run_file(record).column_names
    pd.testing.assert_frame_equal(_metric_frame(again.summary), _metric_frame(first.summary))
    assert len(again.timeseries) == len(first.timeseries)
    pd.testing.assert_frame_equal(again.kinds, first.kinds)


def test_resume_keeps_the_parquet_runs_of_an_earlier_version(tmp_path, small_yaml):
    """Runs were Parquet files before they were Arrow files: a folder an earlier version wrote
    resumes with its runs kept as they are, the one missing run done, and a run that has both
    (an earlier version's failure, done again) read from this version's file."""
    import pyarrow.parquet as pq
    from pyarrow import ipc

    out = tmp_path / "older"
    first = nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    for path in sorted(out.glob("*/p*.arrow")):  # as an earlier version wrote them
        pq.write_table(ipc.open_file(path.read_bytes()).read_all(), path.with_suffix(".parquet"))
        if path.stem != "p0000-r000":
            path.unlink()
    stale = pd.read_parquet(out / "runs/p0000-r000.parquet").assign(hit_rate=0.0123)
    stale.to_parquet(out / "runs/p0000-r000.parquet")
    for folder in ("runs", "timeseries", "kinds"):
        (out / folder / "p0001-r001.parquet").unlink()
    kept = {p: p.stat().st_mtime_ns for p in out.glob("*/p*.parquet")}
    again = nnrpsim.run(small_yaml, out=out, resume=True, jobs=1, progress=False)
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/p*.parquet")} == kept
    assert sorted(p.name for p in out.glob("runs/p*.arrow")) == [
        "p0000-r000.arrow",
        "p0001-r001.arrow",
    ]
    pd.testing.assert_frame_equal(_metric_frame(again.summary), _metric_frame(first.summary))
    assert len(again.runs) == len(first.runs) and len(again.timeseries) == len(first.timeseries)
    pd.testing.assert_frame_equal(again.kinds, first.kinds)


def test_mooncake_trace_unlimited_hit_rate_matches_provenance(shared):
    from nnrpsim.engine.replay import replay
    from nnrpsim.scenario.schema import Trace
    from nnrpsim.traces import load_trace

    stream = load_trace(Trace(path=str(shared / "data/traces/mooncake_synthetic_trace.jsonl")))
    assert len(stream) == 121_877 and int(stream.object_id.max()) + 1 == 43_924
    assert replay(stream, [2**32 - 1]).hit_rate[0] == pytest.approx(0.640, abs=0.0005)


def test_swept_trace_paths_are_relative_to_the_scenario_file(tmp_path, monkeypatch, capsys):
    """As the base's path is: a swept path, or the path in a swept section, from the file's
    folder; one given with --set, from the current folder, even where the base has no trace."""
    (tmp_path / "traces").mkdir()
    for name, block in (("a", 1), ("b", 2)):
        line = f'{{"timestamp": 0, "input_length": 10, "hash_ids": [{block}]}}\n'
        (tmp_path / f"traces/{name}.jsonl").write_text(line * block)
    study = {"study": {"name": "t", "replications": 1, "duration": "1s"}, "engine": "vector"}
    sweeps = [
        {"grid": {"workload.trace.path": ["traces/a.jsonl", "traces/b.jsonl"]}},
        {"zip": {"workload.trace": [{"path": "traces/a.jsonl"}, {"path": "traces/b.jsonl"}]}},
    ]
    paths = [
        write_yaml(tmp_path, {**study, "sweep": sweep}, f"s{i}.yaml")
        for i, sweep in enumerate(sweeps)
    ]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    described = [
        "  trace a.jsonl (time_scale 1): 1 reference in 1 operation to 1 object over 0.0 s",
        "  trace b.jsonl (time_scale 1): 2 references in 2 operations to 1 object over 0.0 s",
        "  point 0: one run replays 1 reference of the trace; a worker needs about 129.5 MiB "
        "of memory for it",
        "  point 1: one run replays 2 references of the trace; a worker needs about 129.5 MiB "
        "of memory for it",
    ]
    for path in paths:
        assert main(["validate", str(path)]) == 0
        assert capsys.readouterr().out.splitlines()[1:] == described
    plain = write_yaml(tmp_path, study, "plain.yaml")
    swept = "sweep.grid.workload.trace.path=[../traces/a.jsonl, ../traces/b.jsonl]"
    assert main(["validate", str(plain), "--set", swept]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == described


def test_validate_describes_the_traces(capsys):
    assert main(["validate", str(ROOT / "scenarios/mooncake_trace.yaml")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  trace mooncake_synthetic_trace.jsonl (time_scale 1): 121,877 references in 3,993 "
        "operations to 43,924 objects over 1,022.0 s",
        "  points 0, 1, 2, 3, 4, 5 (and 22 more): one run replays 121,877 references of the "
        "trace; a worker needs about 175.7 MiB of memory for it",
    ]
    assert main(["validate", str(ROOT / "scenarios/azure_arrivals.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert (
        lines[0]
        == "  arrivals AzureLLMInferenceTrace_conv.csv (time_scale 1): 19,366 over 3,501.7 s, "
        "5.53/s"
    )
    # one per swept time_scale each
    arrivals, workloads, sizes = lines[:3], lines[3:6], lines[6:]
    assert all(line.startswith("  arrivals ") for line in arrivals)
    assert all("sessions at once" in line for line in workloads)
    assert len(sizes) == 3 and all("one run draws" in line for line in sizes)
    # The sessions starting in the run's five minutes, at the trace's pace, last 60 s each.
    log = pd.read_csv(ROOT.parent / "shared/data/traces/AzureLLMInferenceTrace_conv.csv")
    since = pd.to_datetime(log["TIMESTAMP"]) - pd.to_datetime(log["TIMESTAMP"]).min()
    started = (since.dt.total_seconds() < 300).sum()
    assert any(f"~{started / 300 * 60:,.0f} sessions at once" in line for line in workloads)
    assert any(f"one run draws ~{started:,} sessions" in line for line in sizes)


def test_validate_gives_each_synthetic_workloads_means_once(capsys):
    assert main(["validate", str(ROOT / "scenarios/capacity_planning.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    means, sizes = lines[:3], lines[3:]
    # Three session rates (0.5, 1, 2 a second, 60 s sessions), each at five GPU budgets.
    groups = ["  points 0, 3, 6, 9, 12", "  points 1, 4, 7, 10, 13", "  points 2, 5, 8, 11, 14"]
    assert [line.split(":")[0] for line in means] == groups
    assert [line.split(": ")[1].split(" (")[0] for line in means] == [
        "~30 sessions at once",
        "~60 sessions at once",
        "~120 sessions at once",
    ]
    assert all("(within 1 % of that 141 s after the start)" in line for line in means)
    # and what one run of each draws: the sessions starting in its 5.5 minutes
    assert [line.split(":")[0] for line in sizes] == groups
    assert [line.split(": ")[1].split(",")[0] for line in sizes] == [
        "one run draws ~165 sessions",
        "one run draws ~330 sessions",
        "one run draws ~660 sessions",
    ]
    # their operations a mean, to three figures (8,775, 17,550 and 35,100 worked out)
    assert [line.split(", ")[-1].split(";")[0] for line in sizes] == [
        "~8,780 operations",
        "~17,600 operations",
        "~35,100 operations",
    ]


def test_validate_counts_the_content_changes_a_run_draws(capsys):
    """Where objects change content, the run-size line says how often, as a drawn plan has
    them: a mean, to three figures."""
    assert main(["validate", str(ROOT / "scenarios/quickstart.yaml")]) == 0
    sizes = [line for line in capsys.readouterr().out.splitlines() if "one run draws" in line]
    assert [line.split(":")[0] for line in sizes] == [
        "  points 0, 2, 4, 6, 8",
        "  points 1, 3, 5, 7, 9",
    ]
    assert "content changes" not in sizes[0]
    said = int(sizes[1].split(", ~")[-1].split(" content changes;")[0].replace(",", ""))
    scenario = nnrpsim.load_scenario(ROOT / "scenarios/quickstart.yaml")
    point = sweep_points(scenario)[1]
    expected = run_size(model_config(point.scenario), sessions_per_s(point.scenario))
    assert said == float(f"{expected.content_changes:.3g}") > 0
    # (each run's count varies with its sessions' too: about 6 % for its 300)
    drawn = [len(run_inputs(t)[1].change_times_ms) for t in tasks_for([point])]
    assert len(drawn) == 2 and np.mean(drawn) == pytest.approx(said, rel=0.08)


def test_a_trace_is_read_once_for_each_version_of_its_file(tmp_path):
    """The check before a study and its runs in one process share what was read, until the
    file changes (a notebook may rewrite it between runs)."""
    from nnrpsim.scenario.schema import Trace
    from nnrpsim.traces import load_trace

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 512, "hash_ids": [1]}\n')
    spec = Trace(path=str(trace))
    first = load_trace(spec)
    assert load_trace(spec) is first and first.n_objects == 1
    trace.write_text(
        '{"timestamp": 0, "input_length": 512, "hash_ids": [1]}\n'
        '{"timestamp": 10, "input_length": 1024, "hash_ids": [1, 2]}\n'
    )
    assert load_trace(spec).n_objects == 2


def test_a_mooncake_request_is_one_operation_on_the_des(tmp_path):
    """One FRAME_SUBMIT per request, its blocks installed in one burst; the next request
    reuses the shared prefix by reference."""
    from nnrpsim.model import ModelConfig, PolicyConfig, RefOutcome, simulate, stream_plan
    from nnrpsim.scenario.schema import Trace
    from nnrpsim.traces import load_trace

    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"timestamp": 0, "input_length": 1536, "hash_ids": [1, 2, 3]}\n'
        '{"timestamp": 5000, "input_length": 2048, "hash_ids": [1, 2, 3, 4]}\n'
        '{"timestamp": 9000, "input_length": 512, "hash_ids": [9]}\n'
    )
    stream = load_trace(Trace(path=str(trace), kv_bytes_per_token=16))
    config = ModelConfig(duration_ms=10_000.0, policy=PolicyConfig(name="always"))
    result = simulate(config, 1, stream_plan(stream))
    assert result.violations == 0
    assert result.counters["hot_path_frames"] == 3 and len(result.operations["start_ms"]) == 3
    refs = result.references
    order = np.lexsort((refs["object"], refs["time_ms"]))
    installed, hit = RefOutcome.INSTALLED, RefOutcome.HIT
    assert refs["outcome"][order].tolist() == [*[installed] * 3, *[hit] * 3, installed, installed]


def test_generic_reference_logs(tmp_path):
    from nnrpsim.scenario.schema import Trace
    from nnrpsim.traces import load_trace

    log = pd.DataFrame(
        {"time_ms": [0, 5, 9, 12], "object": ["a", "b", "a", "a"], "size_bytes": [10, 20, 10, 10]}
    )
    log.to_csv(tmp_path / "log.csv", index=False)
    log.to_parquet(tmp_path / "log.parquet")
    for name in ("log.csv", "log.parquet"):
        stream = load_trace(Trace(path=str(tmp_path / name)))
        assert stream.object_id.tolist() == [0, 1, 0, 0] and stream.size.tolist() == [
            10,
            20,
            10,
            10,
        ]


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_reference_logs_kind_column_gives_its_objects_kinds(tmp_path, engine):
    # Tool schemas by name, tensor section tables by code; the server negotiates only the
    # tables, so the schemas go inline and the tables hit once installed.
    rows = [(20 * i, *(("schema", 4096) if i % 2 else ("table", 65_536))) for i in range(40)]
    log = pd.DataFrame(rows, columns=["time_ms", "object", "size_bytes"])
    log["kind"] = np.where(log["object"] == "schema", "tool_schema", "3")
    log.to_csv(tmp_path / "log.csv", index=False)
    raw = {
        "study": {"name": "kinds", "duration": "1s", "replications": 1},
        "engine": engine,
        "topology": {"object_kinds": ["tensor_section_table"]},
        "workload": {"trace": {"path": str(tmp_path / "log.csv")}},
        "host_policy": {"ttl_hint": "10s"},
    }
    from nnrpsim.workload_facts import check_traces

    (described,) = check_traces(sweep_points(parse_scenario(raw)))
    assert described.endswith("to 2 objects over 0.8 s (1 tensor_section_table, 1 tool_schema)")
    nnrpsim.run(parse_scenario(raw), out=tmp_path / "out", jobs=1, progress=False)
    kinds = pd.read_csv(tmp_path / "out/kinds.csv").set_index("kind")
    assert sorted(kinds.index) == ["tensor_section_table", "tool_schema"]
    assert kinds.loc["tool_schema", "inline_rate_policy"] == 1.0
    assert kinds.loc["tensor_section_table", "hit_rate"] == pytest.approx(19 / 20)
    assert kinds["reference_share"].tolist() == [0.5, 0.5]


def test_swept_values_are_recorded_resolved_in_base_units(tmp_path):
    raw = {
        "study": {"name": "units", "replications": 1, "duration": "20s"},
        "workload": {"sessions": {"duration": "10s"}},
        "sweep": {
            "grid": {
                "workload.objects.size.median": [512, "2KiB"],
                "host_policy.ttl_hint": ["1s", 2000],
            }
        },
    }
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "u", jobs=1, progress=False)
    assert sorted(result.summary["workload.objects.size.median"].unique()) == [512, 2048]
    assert sorted(result.summary["host_policy.ttl_hint"].unique()) == [1000.0, 2000.0]


def test_server_keys_reach_the_model():
    raw = {
        "study": {"name": "costs"},
        "topology": {
            "per_operation_cost": "2ms",
            "per_inline_byte_cost": "3ns",
            "per_put_byte_cost": "4ns",
            "server_workers": 5,
            "renewal": "extend",
            "dependency_cascade": False,
        },
        "workload": {"objects": {"private_dependency_share": 0.25}},
    }
    config = model_config(parse_scenario(raw))
    server = config.server
    assert server.per_operation_ms == 2.0 and server.workers == 5
    assert server.limits.renewal == "extend" and not server.cascade_dependencies
    assert config.workload.private_dependency_share == 0.25
    assert server.per_inline_byte_ms == pytest.approx(3e-6)
    assert server.per_put_byte_ms == pytest.approx(4e-6)


def test_unreachable_scheduler_is_one_line_and_writes_nothing(
    tmp_path, small_yaml, capsys, monkeypatch
):
    """The scheduler is reached before the folder is made: a new study's folder is not made
    (it was, with an empty study in it), and a resumed one's files stay as they were."""
    pytest.importorskip("dask.distributed")
    import nnrpsim.runner as runner

    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 1)
    out = tmp_path / "sched"
    on_dask = ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9", "--quiet"]
    argv = ["run", str(small_yaml), "--out", str(out)]
    assert main([*argv, *on_dask]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: --scheduler: cannot reach tcp://127.0.0.1:9")
        and err.count("\n") == 1
    )
    assert not out.exists()
    # a study with a run left to do: resumed on the unreachable scheduler, it stays as it was
    assert main([*argv, "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()  # (the small study's warm-up warning)
    for table in ("runs", "timeseries", "kinds"):
        (out / table / "p0003-r001.arrow").unlink(missing_ok=True)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert main([*argv, "--resume", *on_dask]) == 2
    assert capsys.readouterr().err.startswith("error: --scheduler: cannot reach")
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert main([*argv, "--resume", "--jobs", "1", "--quiet"]) == 0
    assert (out / "runs" / "p0003-r001.arrow").is_file()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("notanaddress", "not a scheduler address: missing port number"),
        ("foo://host:1", "not a scheduler address: unknown address scheme 'foo'"),
        ("", "is empty"),
        # (at once, where the connection waited out its timeout first)
        ("tcp://127.0.0.1:99999", "port 99999 of tcp://127.0.0.1:99999 is not in 1-65535"),
        ("127.0.0.1:0", "port 0 of 127.0.0.1:0 is not in 1-65535"),
    ],
)
def test_a_malformed_scheduler_address_is_one_line(tmp_path, small_yaml, capsys, address, reason):
    """distributed's ``ValueError`` for an address it cannot parse was a traceback; an empty
    one (a script's unset variable) started a default LocalCluster of its own size."""
    pytest.importorskip("dask.distributed")
    argv = ["run", str(small_yaml), "--out", str(tmp_path / "s"), "--executor", "dask"]
    assert main([*argv, "--scheduler", address, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --scheduler: {reason}") and err.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_the_dask_executor_without_its_extra_is_one_line_and_writes_nothing(
    tmp_path, small_yaml, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "distributed", None)  # an import of it now fails
    out = tmp_path / "nodask"
    assert main(["run", str(small_yaml), "--out", str(out), "--executor", "dask", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "error: --executor: dask needs the extra: pip install 'nnrpsim[dask]'\n"
    )
    assert not out.exists()


def test_a_swept_replication_count_is_each_points_own(tmp_path, capsys):
    """It was read from the base alone: both points ran the base's count. Its column is named
    in full, not ``replications`` beside the count of each point's runs."""
    raw = {
        "study": {"name": "reps", "replications": 2, "duration": "5s"},
        "sweep": {"grid": {"study.replications": [1, 3]}},
    }
    assert main(["validate", str(write_yaml(tmp_path, raw))]) == 0
    assert "(2 sweep points, 4 runs, engine des)" in capsys.readouterr().out
    summary = nnrpsim.sweep(raw)
    assert summary["replications"].tolist() == [1, 3]
    assert summary_table(summary).split("\n")[0].split()[:3] == [
        "point",
        "study.replications",
        "replications",
    ]


def test_no_more_workers_than_runs_and_none_for_no_run(small_yaml, monkeypatch):
    """A pool of eight for two runs starts two; a finished study resumed on a scheduler
    that cannot be reached reaches for none."""
    import nnrpsim.runner as runner

    tasks = tasks_for(sweep_points(parse_scenario(SMALL_STUDY)))[:2]
    pools = []

    class RecordedPool:
        def __init__(self, max_workers, mp_context, initializer=None, initargs=()):
            pools.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *raised):
            return False

    monkeypatch.setattr(runner, "ProcessPoolExecutor", RecordedPool)
    monkeypatch.setattr(runner, "_on", lambda pool, tasks, shares: [])
    assert list(runner.execute(tasks, jobs=8)) == [] and pools == [2]
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 1)
    assert list(runner.execute([], executor="dask", scheduler="tcp://127.0.0.1:9")) == []


def test_an_output_folder_that_cannot_be_made_is_bad_input(tmp_path, small_yaml, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["run", str(small_yaml), "--out", str(blocker / "out"), "--quiet"]) == 2
    said = capsys.readouterr().err
    assert said == f"error: --out: cannot use {blocker / 'out'}: {blocker} is not a folder\n"
    assert main(["run", str(small_yaml), "--out", str(blocker), "--quiet"]) == 2
    assert capsys.readouterr().err == f"error: --out: {blocker} is a file, not a folder\n"
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_output_folder_the_system_refuses_is_bad_input(small_yaml, capsys, monkeypatch):
    """A folder the system refuses to make (nothing can be made in /proc, even by root): one
    line, naming the folder and the system's reason; found by the checks, which make it and
    remove it again, or, where it became one the system refuses only after them, as the
    study makes its folders."""
    argv = ["run", str(small_yaml), "--out", "/proc/nnrpsim-out", "--quiet"]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert said == "error: --out: cannot use /proc/nnrpsim-out: No such file or directory\n"
    monkeypatch.setattr("nnrpsim.results.check_folder_can_be_made", lambda folder: None)
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert said == "error: --out: cannot create /proc/nnrpsim-out: No such file or directory\n"


@pytest.mark.plots
def test_run_warns_when_a_saturated_link_leaves_operations_unfinished(tmp_path, capsys):
    path = tmp_path / "sat.yaml"
    path.write_text(
        "study: {name: sat, duration: 90s, warmup: 60s, replications: 1}\n"
        "sweep: {grid: {topology.link.bandwidth: [10Gbit/s, 1Mbit/s]}}\n"
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet", "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert err == (
        "warning: point 1: sessions fell behind the offered load (a link, see "
        "peak_link_utilisation; the server's workers, see peak_server_load; or their own "
        "max_in_flight window), and operations not done 60 s after the end count as never "
        "completed (invariant_violations)\n"
    )
    summary = pd.read_parquet(tmp_path / "out/summary.parquet")
    fast, slow = summary["peak_link_utilisation"].tolist()
    assert fast < 0.01 and slow >= 1
    series = pd.read_parquet(tmp_path / "out/timeseries.parquet")
    fast_load, slow_load = series.groupby("point")["link_load"].max().tolist()
    assert fast_load < 0.01 and slow_load > 1  # the intervals in which it saturates
    assert (tmp_path / "out/plots/link_load_over_time.png").stat().st_size > 1000


def test_both_engines_take_the_ttl_hint_from_the_trace_length(tmp_path):
    """A trace is one session spanning it: a TTL of 0.75 x 900 ms lets b expire before 900 ms
    on either engine (with the workload's 60 s sessions the vector engine once kept it)."""
    log = tmp_path / "log.csv"
    log.write_text(
        "time_ms,object,size_bytes\n0,a,2000\n5,b,3000\n9,a,2000\n12,a,2000\n900,b,3000\n"
    )
    hit_rates = {}
    for engine in ("des", "vector"):
        raw = {
            "study": {"name": engine, "replications": 1, "duration": "2s"},
            "engine": engine,
            "workload": {"trace": {"path": str(log)}},
            "host_policy": {"renew_margin": 0},
        }
        hit_rates[engine] = nnrpsim.sweep(parse_scenario(raw))["hit_rate"].iloc[0]
    assert hit_rates == {"des": 0.4, "vector": 0.4}


def test_plot_lines_never_join_points_that_differ_in_another_swept_key():
    from nnrpsim.plots.lines import lines_of

    grid = pd.DataFrame(
        [(size, rate, name) for size in (1, 2, 3) for rate in (0.1, 1) for name in ("a", "b")],
        columns=["size", "rate", "name"],
    )
    grid["ttl"] = grid["size"] * 10  # zipped with size: it moves along each line
    lines = lines_of(grid, "size", ["size", "rate", "name", "ttl"])
    assert [label for label, _ in lines] == [
        "rate = 0.1, name = a",
        "rate = 0.1, name = b",
        "rate = 1, name = a",
        "rate = 1, name = b",
    ]
    assert all(part["size"].tolist() == [1, 2, 3] for _, part in lines)
    assert [label for label, _ in lines_of(grid[grid["rate"] == 1], "rate", ["rate"])] == [""]
    rates = pd.DataFrame({"ttl": [1, 1], "topology.link.bandwidth": [1.25e9, 125_000.0]})
    assert [label for label, _ in lines_of(rates, "ttl", ["ttl", "topology.link.bandwidth"])] == [
        "bandwidth = 1 Mbit/s",
        "bandwidth = 10 Gbit/s",
    ]
    switch = pd.DataFrame({"ttl": [1, 1], "topology.dependency_cascade": [True, False]})
    assert [label for label, _ in lines_of(switch, "ttl", list(switch.columns))] == [
        "dependency_cascade = false",
        "dependency_cascade = true",
    ]
    budgets = pd.DataFrame({"ttl": [1000, 1000], "topology.gpu_memory": [2**31, None]})
    assert [label for label, _ in lines_of(budgets, "ttl", ["ttl", "topology.gpu_memory"])] == [
        "gpu_memory = 2 GiB",
        "gpu_memory = unlimited",
    ]
    # rate_per_s alone would not say whose: sessions, operations or invalidations
    rates = pd.DataFrame({"ttl": [1, 1], "workload.invalidations.rate_per_s": [0.0, 0.02]})
    assert [label for label, _ in lines_of(rates, "ttl", list(rates.columns))] == [
        "invalidations.rate_per_s = 0",
        "invalidations.rate_per_s = 0.02",
    ]


def test_a_swept_switch_is_drawn_at_two_named_places(drawn):
    from nnrpsim import plots

    summary = pd.DataFrame(
        {
            "topology.dependency_cascade": [False, True],
            **{m: [0.5, 0.4] for m in ("hit_rate", "wire_bytes_saved")},
            **{f"{m}_ci95": [0.01, 0.01] for m in ("hit_rate", "wire_bytes_saved")},
        }
    )
    plots._metric_vs(summary, "topology.dependency_cascade", "hit_rate", [], None, "x")
    (ax,) = drawn[0].axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["false", "true"]
    assert ax.get_xlim() == (-0.5, 1.5)


def test_a_point_swept_to_no_budget_is_drawn_as_a_level_of_its_line(drawn):
    """No budget has no place on a budget axis: left out, the reference a capacity sweep is
    measured against was missing. It is a dashed level, in its line's colour, named; a level
    of a point with no rate (it referenced nothing) is left out."""
    from nnrpsim import plots

    key, other = "topology.gpu_memory", "host_policy.ttl_fraction"
    summary = pd.DataFrame(
        {
            key: [np.nan, 2**20, 2**21, np.nan, 2**20, 2**21],
            other: [0.1, 0.1, 0.1, 0.5, 0.5, 0.5],
            "hit_rate": [0.7, 0.3, 0.5, np.nan, 0.4, 0.6],
            "hit_rate_ci95": [np.nan] * 6,
        }
    )
    plots._metric_vs(summary, key, "hit_rate", [key, other], None, "x")
    (ax,) = drawn[0].axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    level = lines["ttl_fraction = 0.1, gpu_memory = unlimited"]
    assert level.get_linestyle() == "--" and set(level.get_ydata()) == {0.7}
    assert level.get_color() == lines["ttl_fraction = 0.1"].get_color()
    assert not [name for name in lines if name.startswith("ttl_fraction = 0.5, ")]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "ttl_fraction = 0.1, gpu_memory = unlimited" in legend


def test_a_fractions_axis_ends_at_one_whatever_its_interval(drawn):
    """Two short replications give a t interval past 1 (and below 0): the axis stops at what a
    fraction of references can be, on both kinds of plot; a link's load may pass 1."""
    from nnrpsim import plots

    summary = pd.DataFrame(
        {
            "host_policy.ttl_fraction": [0.1, 0.5],
            "mean_gpu_bytes": [1e6, 2e6],
            "mean_gpu_bytes_ci95": [1e5, 1e5],
            "hit_rate": [0.3, 0.6],
            "hit_rate_ci95": [0.9, 0.8],
            "peak_link_utilisation": [0.5, 1.4],
            "peak_link_utilisation_ci95": [0.1, 0.1],
        }
    )
    swept = ["host_policy.ttl_fraction"]
    plots._metric_vs(summary, swept[0], "hit_rate", swept, None, "x")
    plots._capacity_tradeoff(summary, swept, None, "hit_rate")
    plots._metric_vs(summary, swept[0], "peak_link_utilisation", swept, None, "x")
    ylims = [fig.axes[0].get_ylim() for fig in drawn]
    assert ylims[0] == ylims[1] == (0.0, 1.05)
    assert ylims[2][0] == 0 and ylims[2][1] > 1.4


def test_a_trace_longer_than_the_run_is_cut_at_its_end_on_both_engines(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time_ms,object,size_bytes\n0,a,2000\n1000,a,2000\n2500,a,2000\n2600,a,2000\n")
    for engine in ("des", "vector"):
        raw = {
            "study": {"name": engine, "replications": 1, "duration": "2s"},
            "engine": engine,
            "workload": {"trace": {"path": str(log)}},
            "host_policy": {"renew_margin": 0, "ttl_hint": "1h"},
        }
        assert nnrpsim.sweep(parse_scenario(raw))["hit_rate"].iloc[0] == 0.5, engine


def test_violations_beyond_what_sessions_fell_behind_on_are_called_a_bug():
    from nnrpsim.checks.outcomes import violation_warnings

    summary = pd.DataFrame(
        {
            "point": [0, 1, 2],
            "invariant_violations": [0.0, 4.0, 5.0],
            "operations_behind": [0.0, 4.0, 2.0],
        }
    )
    behind, bug = violation_warnings(summary)
    assert behind.startswith("warning: point 1: sessions fell behind")
    assert bug.startswith("warning: point 2: invariant_violations beyond the operations")


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_kinds_break_a_runs_metrics_down_and_add_up_to_them(tmp_path, engine):
    raw = yaml.safe_load((ROOT / "scenarios/object_kinds.yaml").read_text())
    raw["study"].update(duration="3min", warmup="30s", replications=2)
    raw["engine"] = engine
    raw["sweep"]["grid"]["topology.object_kinds"] = [["tool_schema", "tensor_section_table"]]
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "k", jobs=1, progress=False)
    kinds = pd.read_csv(tmp_path / "k/kinds.csv").set_index("kind")
    assert set(kinds.index) == {"prompt_segment", "tool_schema", "tensor_section_table"}
    assert kinds.loc["prompt_segment", "inline_rate_policy"] == 1.0  # not negotiated
    assert kinds.loc["prompt_segment", "mean_gpu_bytes"] == 0
    per_run = pd.read_parquet(tmp_path / "k/kinds.parquet")
    for replication, run in per_run.groupby("replication"):  # each run's kinds make its metrics
        record = result.runs.set_index("replication").loc[replication]
        assert run["reference_share"].sum() == pytest.approx(1.0)
        for rate in ("hit_rate", "inline_rate_policy"):  # the shares weigh the kinds' rates
            weighted = (run["reference_share"] * run[rate]).sum()
            assert weighted == pytest.approx(record[rate])
        assert run["mean_gpu_bytes"].sum() == pytest.approx(record["mean_gpu_bytes"])
    assert len(per_run) == 2 * 3 and set(per_run["replication"]) == {0, 1}


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_run_that_references_nothing_has_no_rates_and_leaves_its_points_mean_alone(
    tmp_path, engine
):
    """Sessions a few a minute over 10 s: some replications see none, and reference nothing.
    Their rates are NaN, not 0 (a zero would pull the point's mean down); the summary's mean
    and interval are over the replications that referenced something; bytes are still 0."""
    raw = {
        "study": {"name": "sparse", "seed": 3, "replications": 6, "duration": "10s"},
        "engine": engine,
        "workload": {"sessions": {"rate_per_s": 0.05, "duration": "5s"}},
    }
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "s", jobs=1, progress=False)
    runs, row = result.runs, result.summary.iloc[0]
    quiet = runs["wire_bytes_saved"] == 0
    assert 0 < quiet.sum() < len(runs)  # some replications saw no session, some did
    for rate in (*OUTCOME_RATES, "fallback_rate"):
        assert runs.loc[quiet, rate].isna().all() and runs.loc[~quiet, rate].notna().all()
        assert row[rate] == pytest.approx(runs.loc[~quiet, rate].mean(), nan_ok=True)
    assert (runs.loc[quiet, ["installs", "mean_gpu_bytes"]] == 0).all(axis=None)
    assert row["hit_rate"] > 0.1 and row["replications"] == len(runs)


def test_a_swept_key_with_units_is_drawn_and_named_in_them(drawn):
    """Any duration, size or rate key (not only the common ones) gets an axis in the unit its
    largest value reaches, and legends name each value in its own."""
    from nnrpsim import plots
    from nnrpsim.plots.lines import lines_of

    summary = pd.DataFrame(
        {
            "topology.sweep_interval": [0.0, 2_000.0, 60_000.0],  # ms, as stored
            **{m: [0.5, 0.4, 0.3] for m in ("hit_rate", "wire_bytes_saved")},
            **{f"{m}_ci95": [0.01] * 3 for m in ("hit_rate", "wire_bytes_saved")},
        }
    )
    plots._metric_vs(summary, "topology.sweep_interval", "hit_rate", [], None, "x")
    (ax,) = drawn[0].axes
    assert ax.get_xlabel() == "topology.sweep_interval (s)"
    assert ax.lines[0].get_xdata().tolist() == [0, 2, 60]
    costs = pd.DataFrame({"ttl": [1, 1], "topology.per_inline_byte_cost": [1e-6, 0.05]})
    assert [label for label, _ in lines_of(costs, "ttl", list(costs.columns))] == [
        "per_inline_byte_cost = 1 ns",
        "per_inline_byte_cost = 50 us",
    ]
    sizes = pd.DataFrame({"ttl": [1, 1], "host_policy.min_object_size": [512, 4096]})
    assert [label for label, _ in lines_of(sizes, "ttl", list(sizes.columns))] == [
        "min_object_size = 512 bytes",
        "min_object_size = 4 KiB",
    ]


def test_a_notebook_draws_a_metric_as_the_plots_folder_does():
    """``metric_figure`` is the figure ``plots/`` saves, its swept keys read from the summary:
    the notebook draws with it, units and bands included."""
    from nnrpsim.plots import metric_figure

    summary = pd.DataFrame(
        {
            "point": [0, 1, 2, 3],
            "host_policy.ttl_hint": [500.0, 120_000.0] * 2,  # ms, as stored
            "topology.gpu_memory": [2.0**20] * 2 + [2.0**30] * 2,
            "replications": [3] * 4,
            "hit_rate": [0.2, 0.5, 0.3, 0.7],
            "hit_rate_ci95": [0.01] * 4,
        }
    )
    fig = metric_figure(summary, "host_policy.ttl_hint", "hit_rate")
    (ax,) = fig.axes
    assert ax.get_xlabel() == "lease TTL hint (s)"
    assert ax.get_ylabel() == "hit rate (fraction of references)"
    assert [line.get_label() for line in ax.lines] == ["gpu_memory = 1 MiB", "gpu_memory = 1 GiB"]
    assert ax.lines[1].get_xdata().tolist() == [0.5, 120] and len(ax.collections) == 2
    assert ax.get_title(loc="left").startswith("each point: the mean of 3 replications")
    matplotlib.pyplot.close(fig)


def test_a_plot_of_many_lines_draws_ten_spread_over_them_and_says_so(drawn):
    """Three keys swept (10 budgets x 5 rates x 3 TTLs) gave 50 lines against the TTL and 15
    against the memory: colours repeated past ten, and the legend ran off the figure. Ten are
    drawn, spread over the combinations (each rate among them, not one rate of every budget),
    and the plot says how many of how many; ten or fewer are all drawn."""
    from nnrpsim import plots
    from nnrpsim.plots import metric_figure
    from nnrpsim.plots.lines import MAX_LINES
    from nnrpsim.plots.over_time import MAX_OVER_TIME

    budgets, rates = [2.0**k for k in range(20, 30)], [0.5, 1, 2, 4, 8]
    ttls = [500.0, 5000.0, 50_000.0]
    grid = pd.DataFrame(
        [(b, r, t) for b in budgets for r in rates for t in ttls],
        columns=["topology.gpu_memory", "workload.operations.rate_per_s", "host_policy.ttl_hint"],
    )
    grid["point"], grid["replications"] = range(len(grid)), 2
    grid["hit_rate"] = (
        grid["workload.operations.rate_per_s"] / 10
        + grid["topology.gpu_memory"] / 2**40
        + grid["host_policy.ttl_hint"] / 1e7
    )  # (no two lines equal: equal ones are drawn as one)
    grid["hit_rate_ci95"] = 0.01
    grid["mean_gpu_bytes"] = grid["topology.gpu_memory"] / 2
    swept = ["topology.gpu_memory", "workload.operations.rate_per_s", "host_policy.ttl_hint"]
    fig = metric_figure(grid, "host_policy.ttl_hint", "hit_rate", swept)
    (ax,) = fig.axes
    labels = [line.get_label() for line in ax.lines]
    assert len(labels) == MAX_LINES and len(ax.get_legend().get_texts()) == MAX_LINES
    assert labels[0] == "gpu_memory = 1 MiB, operations.rate_per_s = 0.5"
    assert labels[-1] == "gpu_memory = 512 MiB, operations.rate_per_s = 8"
    assert {label.rsplit(" = ", 1)[1] for label in labels} == {"0.5", "1", "2", "4", "8"}
    assert "10 of the 50 lines, spread over" in ax.get_title(loc="left")
    matplotlib.pyplot.close(fig)
    plots._capacity_tradeoff(grid, swept, None, "hit_rate")
    (ax,) = drawn[0].axes
    assert len(ax.get_legend().get_texts()) == MAX_LINES  # of 5 rates x 3 TTLs along the budget
    assert "10 of the 15 lines" in ax.get_title(loc="left")
    few = grid[grid["topology.gpu_memory"] == budgets[0]]
    fig = metric_figure(few, "host_policy.ttl_hint", "hit_rate", swept)
    assert len(fig.axes[0].lines) == 5 and "lines" not in fig.axes[0].get_title(loc="left")
    matplotlib.pyplot.close(fig)
    # over time, eight sweep points of the 150, spread over them, and the plot says so
    samples = pd.DataFrame(
        [(point, t, float(point)) for point in grid["point"] for t in (0, 1000)],
        columns=["point", "time_ms", "held_bytes"],
    )  # (no two series equal: equal ones are drawn as one)
    drawn.clear()
    plots._over_time(samples, grid, swept, None, "held_bytes", "held", "x", 0.0)
    (ax,) = drawn[0].axes
    rates_drawn = {line.get_label().split(", ")[1] for line in ax.lines}
    assert len(ax.lines) == MAX_OVER_TIME and len(rates_drawn) > 1
    assert ax.get_title(loc="left") == "8 of the 150 sweep points, spread over them"


def test_equal_series_over_time_are_drawn_once_named_for_all_of_them(drawn):
    """A ``never`` baseline holds no memory at every budget: its lines, drawn one over
    another, hid all but the last, and took three of the eight places, leaving a point of
    nine out. Equal series are one line, named for them all, and count their points."""
    from nnrpsim import plots
    from nnrpsim.plots.over_time import MAX_OVER_TIME

    policies, budgets = ["never", "always"], [2.0**20, 2.0**24, 2.0**28]
    summary = pd.DataFrame(
        [(b, p) for p in policies for b in budgets],
        columns=["topology.gpu_memory", "host_policy.name"],
    )
    summary.insert(0, "point", range(len(summary)))
    swept = ["topology.gpu_memory", "host_policy.name"]
    held = {p: 0.0 if name == "never" else 2.0**p for p, name in enumerate(summary[swept[1]])}
    samples = pd.DataFrame(
        [(p, t, held[p]) for p in summary["point"] for t in (0, 1000, 2000)],
        columns=["point", "time_ms", "held_bytes"],
    )
    plots._over_time(samples, summary, swept, None, "held_bytes", "held", "x", 0.0)
    (ax,) = drawn[0].axes
    assert [line.get_label() for line in ax.lines] == [
        "gpu_memory = 1 MiB, 16 MiB, 256 MiB,\nhost_policy.name = never: 3 equal lines",
        "gpu_memory = 1 MiB, host_policy.name = always",
        "gpu_memory = 16 MiB, host_policy.name = always",
        "gpu_memory = 256 MiB, host_policy.name = always",
    ]
    assert ax.get_title(loc="left") == ""  # every point drawn
    # more lines than places: the points of the lines drawn counted (the first drawn is of 3)
    copies = [samples.assign(point=samples["point"] + 6 * k) for k in range(3)]
    many = pd.concat(copies, ignore_index=True)
    many.loc[many["point"] >= 6, "held_bytes"] += many["point"]  # (the copies' own series)
    wide = pd.concat([summary.assign(point=summary["point"] + 6 * k) for k in range(3)])
    drawn.clear()
    plots._over_time(many, wide, swept, None, "held_bytes", "held", "x", 0.0)
    (ax,) = drawn[0].axes
    assert len(ax.lines) == MAX_OVER_TIME
    assert ax.get_title(loc="left") == "10 of the 18 sweep points, spread over them"


def test_points_that_measured_no_load_over_time_are_said_not_drawn(drawn):
    """A sweep of the engine: the vector engine's points have no network, so no link or
    server load. They had one legend entry, for all of them, and no line to it."""
    from nnrpsim import plots

    summary = pd.DataFrame({"point": [0, 1, 2, 3], "engine": ["des", "vector"] * 2})
    summary["host_policy.ttl_fraction"] = [0.1, 0.1, 0.5, 0.5]
    swept = ["host_policy.ttl_fraction", "engine"]
    samples = pd.DataFrame(
        [(p, t, t / 4000 + p if p % 2 == 0 else None) for p in range(4) for t in (0, 1000)],
        columns=["point", "time_ms", "link_load"],
    )
    plots._over_time(samples, summary, swept, None, "link_load", "load", "x", 0.0)
    (ax,) = drawn[0].axes
    assert [line.get_label() for line in ax.lines] == [
        "ttl_fraction = 0.1, engine = des",
        "ttl_fraction = 0.5, engine = des",
    ]
    assert ax.get_title(loc="left") == "2 sweep points on the vector engine: no network"


def test_equal_lines_are_drawn_once_named_for_all_of_them(drawn):
    """The quickstart's fallback rate against the invalidation rate: four of its five TTLs
    gave the same means and intervals, and the last drawn hid the other three under their
    legend entries. Lines equal in every drawn value are one line, named for them all; a
    line that differs anywhere (a mean, an interval) keeps its own."""
    from nnrpsim import plots
    from nnrpsim.plots import INVALIDATION_KEY as INVALIDATION
    from nnrpsim.plots import metric_figure
    from nnrpsim.plots.lines import lines_of

    fractions = [0.05, 0.1, 0.25, 0.5, 0.75]
    summary = pd.DataFrame(
        [(f, rate) for f in fractions for rate in (0.0, 0.02)],
        columns=["host_policy.ttl_fraction", INVALIDATION],
    )
    summary["point"], summary["replications"] = range(len(summary)), 2
    summary["fallback_rate"] = np.where(summary[INVALIDATION] > 0, 2.2e-5, 0.0)
    summary.loc[summary["host_policy.ttl_fraction"] == 0.05, "fallback_rate"] = 0.0
    summary["fallback_rate_ci95"] = summary["fallback_rate"] * 14
    swept = ["host_policy.ttl_fraction", INVALIDATION]
    fig = metric_figure(summary, INVALIDATION, "fallback_rate", swept)
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.lines] == [
        "ttl_fraction = 0.05",
        "ttl_fraction = 0.1 ... 0.75: 4 equal lines",
    ]
    assert len(ax.collections) == 2 and "lines" not in ax.get_title(loc="left")
    matplotlib.pyplot.close(fig)
    summary.loc[summary["host_policy.ttl_fraction"] == 0.5, "fallback_rate_ci95"] = 1e-4
    fig = metric_figure(summary, INVALIDATION, "fallback_rate", swept)
    assert [line.get_label() for line in fig.axes[0].lines] == [
        "ttl_fraction = 0.05",
        "ttl_fraction = 0.1, 0.25, 0.75: 3 equal lines",
        "ttl_fraction = 0.5",
    ]
    matplotlib.pyplot.close(fig)
    # several keys that vary: each key's values where the lines are all their combinations,
    # else each line's; a line of the label at most LABEL_WIDTH characters, and the next
    pairs = pd.DataFrame(
        {"ttl": [1, 1], "topology.gpu_memory": [2.0**20, 2.0**21], "host_policy.name": ["a", "b"]}
    )
    pairs["hit_rate"], pairs["hit_rate_ci95"] = 0.5, 0.0
    (only,) = lines_of(pairs, "ttl", list(pairs.columns[:3]), ("hit_rate",))
    assert only[0] == (
        "gpu_memory = 1 MiB, host_policy.name = a;\n"
        "gpu_memory = 2 MiB, host_policy.name = b: 2 equal lines"
    )
    grid = pd.DataFrame(
        [
            (t, b, r, m)
            for t in (500, 5000)
            for b in (2**20, 2**21, 2**22)
            for r in (1, 2)
            for m in (1, 8)
        ],
        columns=["ttl", "topology.gpu_memory", "workload.operations.rate_per_s", "median"],
    )
    grid["point"], grid["replications"], grid["hit_rate_ci95"] = range(len(grid)), 2, 0.01
    grid["hit_rate"] = 0.1 * grid["median"]
    fig = metric_figure(grid, "ttl", "hit_rate", ["ttl", *grid.columns[1:4]])
    assert [line.get_label() for line in fig.axes[0].lines] == [
        f"gpu_memory = 1 MiB, 2 MiB, 4 MiB,\noperations.rate_per_s = 1, 2, median = {m}: "
        "6 equal lines"
        for m in (1, 8)
    ]
    fig.canvas.draw()
    assert fig.axes[0].get_legend().get_window_extent().width < fig.bbox.width / 2
    matplotlib.pyplot.close(fig)
    # the trade-off plot too (along the TTL, a line per rate): equal in memory held, metric
    # and interval; a line apart in memory keeps its own
    summary["mean_gpu_bytes"], summary["fallback_rate"], summary["fallback_rate_ci95"] = 1e6, 0, 0
    plots._capacity_tradeoff(summary, swept, None, "fallback_rate")
    summary.loc[summary[INVALIDATION] > 0, "mean_gpu_bytes"] = 0.9e6
    plots._capacity_tradeoff(summary, swept, None, "fallback_rate")
    assert [[t.get_text() for t in f.axes[0].get_legend().get_texts()] for f in drawn] == [
        ["invalidations.rate_per_s = 0, 0.02: 2 equal lines"],
        ["invalidations.rate_per_s = 0", "invalidations.rate_per_s = 0.02"],
    ]
    matplotlib.pyplot.close("all")


def test_trade_off_plots_join_points_along_the_budget_or_a_numeric_key():
    from nnrpsim.plots.tradeoff import MAX_TRADEOFF_LABELS, tradeoff_series

    budgets = pd.DataFrame(
        [(budget, rate) for rate in (1, 0.5) for budget in (2**30, None, 2**25)],
        columns=["topology.gpu_memory", "workload.sessions.rate_per_s"],
    )
    along, series = tradeoff_series(budgets, list(budgets.columns))
    assert along == "topology.gpu_memory"
    assert [label for label, _ in series] == [
        "sessions.rate_per_s = 0.5",
        "sessions.rate_per_s = 1",
    ]
    assert all(  # in budget order, unlimited last
        part["topology.gpu_memory"].tolist()[:2] == [2**25, 2**30] for _, part in series
    )
    ttls = pd.DataFrame(
        [(name, ttl) for name in ("a", "b") for ttl in (0.5, 0.1)],
        columns=["host_policy.name", "host_policy.ttl_fraction"],
    )
    along, series = tradeoff_series(ttls, list(ttls.columns))
    assert along == "host_policy.ttl_fraction"  # the first numeric key swept
    assert [label for label, _ in series] == ["host_policy.name = a", "host_policy.name = b"]
    assert all(part["host_policy.ttl_fraction"].tolist() == [0.1, 0.5] for _, part in series)
    kinds = pd.DataFrame({"topology.object_kinds": ['["kv_block"]', '["tool_schema"]']})
    along, series = tradeoff_series(kinds, ["topology.object_kinds"])
    assert along is None and len(series) == 2 and all(label for label, _ in series)
    many = pd.DataFrame({"host_policy.name": [f"p{i}" for i in range(MAX_TRADEOFF_LABELS + 1)]})
    along, series = tradeoff_series(many, ["host_policy.name"])  # too many to name
    assert along is None and len(series) == 1 and series[0][0] == "" and series[0][1] is many


@pytest.mark.parametrize("held", [0.0, 2**20])
def test_trade_off_labels_name_many_points_at_one_place_by_their_ends_within_the_axes(held, drawn):
    """A study whose 200 TTLs all held nothing (or all the same) put its points at one place:
    their label named each, wider than the figure (matplotlib could not lay it out and said
    so), from a corner under the axis. A few at one place are each named."""
    from matplotlib.text import Annotation

    from nnrpsim import plots

    ttls = np.arange(100.0, 20_100.0, 100.0)
    summary = pd.DataFrame({"host_policy.ttl_hint": ttls, "mean_gpu_bytes": held})
    summary["hit_rate"], summary["hit_rate_ci95"] = 0.0, np.nan
    plots._capacity_tradeoff(summary, ["host_policy.ttl_hint"], None, "hit_rate")
    plots._capacity_tradeoff(summary.iloc[:3], ["host_policy.ttl_hint"], None, "hit_rate")
    for figure, expected in zip(
        drawn, ["100 ms ... 20 s (200 points)", "100 ms, 200 ms, 300 ms"], strict=True
    ):
        (ax,) = figure.axes
        (label,) = [text for text in ax.texts if isinstance(text, Annotation)]
        assert label.get_text() == expected
        figure.canvas.draw()
        box, frame = label.get_window_extent(), ax.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
        assert ax.get_xlim()[0] == 0  # memory held is never below zero
        matplotlib.pyplot.close(figure)


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_points_that_vary_no_workload_key_replay_one_plan(monkeypatch, engine):
    """Budgets and TTLs swept (2 x 2 points, 2 replications): a worker draws each
    replication's plan once, and every point gives what a fresh plan gives."""
    from nnrpsim import tasks

    drawn = []

    def counted(*args, **kwargs):
        drawn.append(args[3].spawn_key)
        return synthetic_plan(*args, **kwargs)

    synthetic_plan = tasks.synthetic_plan
    raw = {
        "study": {"name": "plans", "seed": 5, "replications": 2, "duration": "20s"},
        "engine": engine,
        "workload": {"sessions": {"rate_per_s": 1, "duration": "10s"}},
        "sweep": {
            "grid": {"topology.gpu_memory": ["1MiB", "64MiB"], "host_policy.ttl_fraction": [0.2, 1]}
        },
    }
    tasks._synthetic_plan.cache_clear()
    monkeypatch.setattr(tasks, "synthetic_plan", counted)
    shared = nnrpsim.sweep(parse_scenario(raw))
    assert sorted(drawn) == [(0, 0), (1, 0)]  # one plan per replication
    fresh = []
    for point in range(4):  # each point alone, its plans drawn afresh
        tasks._synthetic_plan.cache_clear()
        grid = raw["sweep"]["grid"]
        budget, ttl = (
            grid["topology.gpu_memory"][point // 2],
            grid["host_policy.ttl_fraction"][point % 2],
        )
        alone = {**raw, "sweep": None, "topology": {"gpu_memory": budget}}
        alone["host_policy"] = {"ttl_fraction": ttl}
        fresh.append(nnrpsim.sweep(parse_scenario(alone))["hit_rate"].iloc[0])
    assert shared["hit_rate"].tolist() == fresh
    assert len(set(fresh)) > 1


def test_a_worker_keeping_one_plan_draws_each_once(monkeypatch):
    """A workload key swept across a budget (grid order interleaves their plans): the runs
    that share a plan come back to back, so a worker that keeps only the last draws each
    replication's plan of each workload once."""
    from nnrpsim import tasks

    drawn = []

    def counted(*args, **kwargs):
        drawn.append((args[0].content_change_rate_per_s, args[3].spawn_key))
        return synthetic_plan(*args, **kwargs)

    synthetic_plan = tasks.synthetic_plan
    raw = {
        "study": {"name": "plans", "seed": 5, "replications": 2, "duration": "20s"},
        "workload": {"sessions": {"rate_per_s": 1, "duration": "10s"}},
        "sweep": {
            "grid": {
                "topology.gpu_memory": ["1MiB", "64MiB"],
                "workload.invalidations.rate_per_s": [0, 0.1],
            }
        },
    }
    tasks._synthetic_plan.cache_clear()
    monkeypatch.setattr(tasks, "synthetic_plan", counted)
    nnrpsim.sweep(parse_scenario(raw))
    assert tasks._synthetic_plan.cache_info().maxsize == 1
    assert sorted(drawn) == [(0.0, (0, 0)), (0.0, (1, 0)), (0.1, (0, 0)), (0.1, (1, 0))]


INSTANT = {
    "link": {"latency": "0s", "bandwidth": "1000000GB/s"},
    "per_operation_cost": "0s",
    "per_inline_byte_cost": "0s",
    "per_put_byte_cost": "0s",
}


def _ends(grid: dict[str, list]) -> dict[str, list]:
    return {key: [values[0], values[-1]] for key, values in grid.items()}


@pytest.mark.parametrize(
    ("name", "duration", "grid"),
    [
        ("capacity_planning", "90s", _ends),
        ("dependencies", "90s", _ends),
        # a 2 s back-off that ends within the millisecond of a later use, and sessions that end
        # within the millisecond of another's frame (the engines parted here before 2026-12-01)
        (
            "refused_puts",
            "4min",
            lambda _: {
                "host_policy.refused_put_backoff": ["2s"],
                "topology.gpu_memory": ["64MiB", "128MiB"],
            },
        ),
    ],
    ids=["capacity_planning", "dependencies", "refused_puts"],
)
def test_over_instant_links_the_engines_agree_exactly_on_library_studies(
    tmp_path, name, duration, grid
):
    """With no network and no processing time the vector run is the DES: the same hits,
    installs, renewals, refused PUTs and evictions at every point (one replication, some of
    the points; the first two shortened)."""
    raw = yaml.safe_load((ROOT / f"scenarios/{name}.yaml").read_text())
    raw["study"].update(duration=duration, warmup="10s", replications=1)
    raw["sweep"]["grid"] = grid(raw["sweep"]["grid"])
    raw.setdefault("topology", {}).update(INSTANT)
    summaries = {}
    for engine in ("des", "vector"):
        scenario = parse_scenario({**raw, "engine": engine})
        out = tmp_path / engine
        summaries[engine] = nnrpsim.run(scenario, out=out, jobs=1, progress=False).summary
    des, vector = summaries["des"], summaries["vector"]
    assert len(des) >= 2 and des["installs"].min() > 0
    for metric in ("hit_rate", "installs", "renewals", "refused_puts", "evictions"):
        assert des[metric].tolist() == vector[metric].tolist(), metric


def test_the_ttls_plots_are_named_for_it_unless_both_ttl_keys_are_swept():
    """Swept together (a fraction beside a fixed hint), both TTL keys drew to
    ``hit_rate_vs_ttl.png``, the second over the first (two workers, a race). The wire
    savings against the TTL, where the TTL question is answered, were not drawn at all."""
    from nnrpsim import plots

    def names(swept: dict[str, list]) -> list[str]:
        summary = pd.DataFrame(swept)
        summary.insert(0, "point", range(len(summary)))
        summary["replications"] = 1
        for metric in METRICS:
            summary[metric], summary[f"{metric}_ci95"] = 0.5, np.nan
        figures = plots._figures(summary, pd.DataFrame(), pd.DataFrame(), Path("."), 0.0)
        return [arguments[-1] for draw, arguments in figures if draw is plots._metric_vs]

    one = names({"host_policy.ttl_fraction": [0.25, 0.75]})
    assert one == ["hit_rate_vs_ttl", "wire_saving_vs_ttl"]
    both = names({"host_policy.ttl_fraction": [0.25, 0.75], "host_policy.ttl_hint": [np.nan, 5e3]})
    assert both == [
        "hit_rate_vs_host_policy_ttl_fraction",
        "wire_saving_vs_host_policy_ttl_fraction",
        "hit_rate_vs_host_policy_ttl_hint",
        "wire_saving_vs_host_policy_ttl_hint",
    ]
