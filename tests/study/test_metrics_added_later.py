"""``evictions`` and ``operations_waited`` came after the other metrics (2026-12-05): a folder
an earlier version wrote holds runs and a summary without them. Resumed, its summary averages
each point's evictions over the runs that counted them (NaN where none did), every other
figure as it was; ``nnrpsim plot`` of its summary draws every figure. The vector engine's
samples over time came later (2026-12-06): its runs without them are run again. The bytes
held on average between samples came that evening: a run without them has its samples'
bytes held stand in."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import nnrpsim
from nnrpsim.cli import main
from tests.conftest import SMALL_STUDY, write_yaml

EVICTING = {**SMALL_STUDY, "engine": "vector", "topology": {"gpu_memory": "160KiB"}}


def _without(path, column: str) -> None:
    """Rewrite a run's file as an earlier version wrote it: without ``column``."""
    with pa.OSFile(str(path)) as source:
        table = pa.ipc.open_file(source).read_all()
    table = table.drop_columns([column])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def test_a_resumed_folder_averages_evictions_over_the_runs_that_counted_them(tmp_path):
    scenario, out = write_yaml(tmp_path, EVICTING), tmp_path / "out"
    first = nnrpsim.run(scenario, out=out, jobs=1, progress=False)
    counted = first.runs.set_index(["point", "replication"])["evictions"]
    assert (counted > 0).all()
    for stem in ("p0000-r000", "p0001-r000", "p0001-r001"):
        _without(out / f"runs/{stem}.arrow", "evictions")
    again = nnrpsim.run(scenario, out=out, resume=True, jobs=1, progress=False)
    summary = again.summary.set_index("point")
    assert summary.loc[0, "evictions"] == counted[0, 1]
    assert np.isnan(summary.loc[1, "evictions"])
    assert summary.loc[2, "evictions"] == counted[2].mean()
    others = [c for c in first.summary.columns if not c.startswith("evictions")]
    pd.testing.assert_frame_equal(again.summary[others], first.summary[others])
    assert not [line for line in again.warnings if "eviction" in line]


@pytest.mark.plots
def test_the_plots_of_a_summary_written_before_them_are_all_drawn(tmp_path, capsys):
    scenario, out = write_yaml(tmp_path, EVICTING), tmp_path / "out"
    drawn = {path.name for path in nnrpsim.run(scenario, out=out, jobs=1, progress=False).plots}
    later = ["evictions", "operations_waited"]
    summary = pd.read_parquet(out / "summary.parquet")
    summary.drop(columns=[*later, *(f"{name}_ci95" for name in later)]).to_parquet(
        out / "summary.parquet"
    )
    for name in drawn:
        (out / "plots" / name).unlink()
    assert main(["plot", str(out)]) == 0
    assert {path.name for path in (out / "plots").glob("[!.]*")} == drawn
    assert capsys.readouterr().err == ""


def test_a_resumed_vector_folder_runs_again_the_runs_that_kept_no_samples(tmp_path):
    """A vector run sampled no memory before 2026-12-06: resumed, its folder's runs without
    a time-series file are run again, for their samples; the others are kept."""
    scenario, out = write_yaml(tmp_path, EVICTING), tmp_path / "out"
    first = nnrpsim.run(scenario, out=out, jobs=1, progress=False)
    for stem in ("p0000-r000", "p0001-r001"):
        (out / f"timeseries/{stem}.arrow").unlink()
    kept = (out / "runs/p0002-r000.arrow").stat().st_mtime_ns
    again = nnrpsim.run(scenario, out=out, resume=True, jobs=1, progress=False)
    assert again.kept_runs == len(first.runs) - 2
    assert (out / "runs/p0002-r000.arrow").stat().st_mtime_ns == kept
    assert (out / "timeseries/p0000-r000.arrow").is_file()
    pd.testing.assert_frame_equal(again.timeseries, first.timeseries)
    assert again.runs["memory_settled_s"].equals(first.runs["memory_settled_s"])


@pytest.mark.plots
def test_runs_that_kept_no_mean_between_samples_draw_their_samples_instead(tmp_path, capsys):
    """Resumed, a folder whose runs an earlier version wrote without ``mean_held_bytes`` has
    their bytes held at each sample stand in for it, the other runs' as they were; a study's
    time series written without it is plotted alike."""
    study = {**SMALL_STUDY, "topology": {"gpu_memory": "160KiB"}}
    scenario, out = write_yaml(tmp_path, study), tmp_path / "out"
    first = nnrpsim.run(scenario, out=out, jobs=1, progress=False).timeseries
    assert (first["mean_held_bytes"] != first["held_bytes"]).any()
    _without(out / "timeseries/p0001-r000.arrow", "mean_held_bytes")
    again = nnrpsim.run(scenario, out=out, resume=True, jobs=1, progress=False).timeseries
    old = (again["point"] == 1) & (again["replication"] == 0)
    assert (again.loc[old, "mean_held_bytes"] == again.loc[old, "held_bytes"]).all()
    assert again.loc[old, "mean_held_bytes"].any()
    pd.testing.assert_frame_equal(again[~old], first[~old])
    series = pd.read_parquet(out / "timeseries.parquet")
    series.drop(columns="mean_held_bytes").to_parquet(out / "timeseries.parquet")
    (out / "plots/gpu_memory_over_time.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "plots/gpu_memory_over_time.png").is_file()
    assert capsys.readouterr().err == ""
