"""Plots of a study where a metric was measured at few points or none: a run too short for its
sessions references nothing, and its rates are NaN. The figures it supports are drawn, the
others left out, and nothing raises (a log axis over no drawn place had made matplotlib raise
in the pool, a traceback after the runs were written)."""

from __future__ import annotations

import io

import matplotlib.pyplot
import pandas as pd
import pytest

import nnrpsim
from nnrpsim.plots import metric_figure
from nnrpsim.scenario import parse_scenario

NOTHING_REFERENCED = {
    "study": {"name": "quiet", "seed": 2, "replications": 1, "duration": "2s", "warmup": "0s"},
    "workload": {"sessions": {"rate_per_s": 0.001, "duration": "1s"}},
    # over 50x: a log axis, were any place drawn
    "sweep": {"grid": {"host_policy.ttl_hint": ["100ms", "5s"]}},
}


@pytest.mark.plots
@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_study_that_references_nothing_draws_what_it_measured_and_no_more(tmp_path, engine):
    raw = {**NOTHING_REFERENCED, "engine": engine}
    result = nnrpsim.run(parse_scenario(raw), out=tmp_path / "q", jobs=2, progress=False)
    assert result.status == "complete" and result.summary["hit_rate"].isna().all()
    assert (result.summary["wire_bytes"] == 0).all()  # no session arrived
    assert result.summary["wire_saving"].isna().all()  # (a share of nothing sent)
    names = {path.stem for path in result.plots}
    assert not {name for name in names if "_vs_" in name}
    assert "gpu_memory_over_time" in names  # (either engine samples the memory anyway)
    assert all(path.is_file() for path in result.plots)


def test_a_metric_figure_spans_the_places_it_draws():
    """In a notebook: a log axis only where the points that have the metric span a factor
    of 20; with none, a linear axis and a figure that saves."""
    summary = pd.DataFrame(
        {
            "point": [0, 1, 2],
            "host_policy.ttl_hint": [100.0, 200.0, 5000.0],
            "replications": [1] * 3,
            "hit_rate": [0.2, 0.4, float("nan")],
            "hit_rate_ci95": [float("nan")] * 3,
        }
    )
    for rates, scale in (
        ([0.2, 0.4, 0.6], "log"),
        ([0.2, 0.4, None], "linear"),
        ([None] * 3, "linear"),
    ):
        drawn = summary.assign(hit_rate=pd.Series(rates, dtype=float))
        fig = metric_figure(drawn, "host_policy.ttl_hint", "hit_rate")
        assert fig.axes[0].get_xscale() == scale
        fig.savefig(io.BytesIO(), format="png")
        matplotlib.pyplot.close(fig)
