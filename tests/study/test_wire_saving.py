"""``wire_saving``: the bytes caching kept off the wire as a fraction of what inlining every
body would have sent, on one scale for every object size and load."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import nnrpsim
from nnrpsim.scenario import parse_scenario


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_the_saving_is_a_fraction_of_the_all_inline_bytes_and_negative_where_caching_costs(
    engine,
):
    """Private objects used every 20 s in sessions of about a minute: cached, a 64-byte
    object's CACHE_PUT, CACHE_ACK and references cost more than its inline sends (a negative
    saving, which a plot from zero hid); a 16 KiB one's are worth it. Inlining everything
    saves nothing, exactly."""
    scenario = parse_scenario(
        {
            "study": {"name": "saving", "replications": 1, "duration": "300s", "warmup": "120s"},
            "engine": engine,
            "workload": {
                "objects": {
                    "shared_per_namespace": 0,
                    "private_per_session": 4,
                    "size": {"median": 64, "sigma": 0},
                },
                "operations": {"rate_per_s": 0.05},
            },
        }
    )
    summary = nnrpsim.sweep(
        scenario,
        [
            "sweep.grid.host_policy.name=[never, always]",
            "sweep.grid.workload.objects.size.median=[64, 16KiB]",
        ],
        progress=False,
    ).set_index(["host_policy.name", "workload.objects.size.median"])
    saving = summary["wire_saving"]
    saved, sent = summary["wire_bytes_saved"], summary["wire_bytes"]
    np.testing.assert_allclose(saving, saved / (sent + saved), rtol=1e-12)
    assert (saving["never"] == 0).all()
    assert -0.5 < saving["always", 64] < -0.1
    assert 0.3 < saving["always", 16384] < 1


def test_a_lossy_links_resends_are_not_counted_against_the_saving():
    """Inlining every body would have lost and resent as many bytes: the saving is of the
    bytes sent once. Counted against the bytes sent with their resends it fell with the loss
    (0.58 without loss, 0.12 at 90 %, for the same hit rate)."""
    scenario = parse_scenario(
        {
            "study": {"name": "lossy", "replications": 1, "duration": "120s", "warmup": "30s"},
            "workload": {"sessions": {"rate_per_s": 1, "duration": "30s"}},
            "topology": {"link": {"retransmit_timeout": "2ms"}},
        }
    )
    summary = nnrpsim.sweep(
        scenario, ["sweep.grid.topology.link.loss=[0, 0.5]"], progress=False
    ).set_index("topology.link.loss")
    resent, sent, saved = (
        summary[name] for name in ("wire_bytes_resent", "wire_bytes", "wire_bytes_saved")
    )
    assert resent[0.0] == 0 and 0.7 < resent[0.5] / (sent[0.5] - resent[0.5]) < 1.3
    saving = summary["wire_saving"]
    np.testing.assert_allclose(saving, saved / (sent - resent + saved), rtol=1e-12)
    assert saving[0.0] > 0.3 and abs(saving[0.5] - saving[0.0]) < 0.03
    assert (saved / (sent + saved))[0.5] < saving[0.0] - 0.1  # (the count before)


@pytest.mark.plots
def test_results_written_before_the_saving_are_drawn_without_it(tmp_path, small_yaml):
    """``nnrpsim plot`` of a folder an earlier version wrote, whose summary has no
    ``wire_saving``: every other figure, not an error naming the missing column."""
    result = nnrpsim.run(small_yaml, out=tmp_path / "old", jobs=1, progress=False)
    before = {path.stem for path in result.plots}
    assert {"wire_saving_vs_ttl", "wire_saving_vs_invalidation"} <= before
    summary_path = tmp_path / "old/summary.parquet"
    summary = pd.read_parquet(summary_path)
    summary.drop(columns=["wire_saving", "wire_saving_ci95"]).to_parquet(summary_path)
    for path in result.plots:
        path.unlink()
    drawn = {path.stem for path in nnrpsim.plot_study(tmp_path / "old")}
    assert drawn == {stem for stem in before if not stem.startswith("wire_saving")}


def test_every_run_gathered_gets_its_saving_those_written_before_it_too(tmp_path, small_yaml):
    """The saving is derived from two metrics every version recorded, as a study gathers its
    runs: a run's own file does not hold it, so a folder an earlier version began resumes with
    the saving of all its runs, not of the new ones alone."""
    from nnrpsim.summaries import with_derived_metrics

    runs = pd.DataFrame(
        {
            "point": [0, 0, 1],
            "wire_bytes": [300.0, 0.0, np.nan],
            "wire_bytes_saved": [100.0, 0.0, np.nan],
            "error": [None, None, "boom"],
        }
    )
    gathered = with_derived_metrics(runs)
    assert list(gathered.columns) == [
        "point",
        "wire_bytes",
        "wire_bytes_saved",
        "wire_saving",
        "error",
    ]
    np.testing.assert_array_equal(gathered["wire_saving"], [0.25, np.nan, np.nan])
    # less the bytes resent; none where a run of an earlier version did not count them
    runs["wire_bytes_resent"] = [200.0, 0.0, np.nan]
    np.testing.assert_array_equal(with_derived_metrics(runs)["wire_saving"], [0.5, np.nan, np.nan])
    runs["wire_bytes_resent"] = np.nan
    np.testing.assert_array_equal(with_derived_metrics(runs)["wire_saving"], [0.25, np.nan, np.nan])
    result = nnrpsim.run(small_yaml, out=tmp_path / "s", jobs=1, progress=False)
    with pa.OSFile(str(next((tmp_path / "s/runs").iterdir()))) as source:
        one_file = pa.ipc.open_file(source).read_all()
    assert "wire_bytes_saved" in one_file.column_names
    assert "wire_saving" not in one_file.column_names
    saved, sent = result.runs["wire_bytes_saved"], result.runs["wire_bytes"]
    np.testing.assert_allclose(result.runs["wire_saving"], saved / (sent + saved))  # (no loss)
    written = pd.read_parquet(tmp_path / "s/runs.parquet")
    np.testing.assert_allclose(written["wire_saving"], result.runs["wire_saving"])
