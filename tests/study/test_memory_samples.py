"""A run's memory over time, and when it settles, come from its samples, taken every three
hundredth of the run (at least a millisecond apart) on either engine: a warm-up of most of
the run, or a run of a few milliseconds, leaves few after the warm-up, which is said."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.scenario import load_scenario, sweep_points
from nnrpsim.validation import sample_advice
from tests.conftest import write_yaml

SHORT = {
    "study": {"name": "short", "duration": "30s", "warmup": "28.5s", "replications": 1},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "10s"}},
    "topology": {"sweep_interval": "5s"},
}
ROUGH = (
    "warning: all points: the runs sample the memory every 100 ms (study.duration / 300, at "
    "least 1 ms), so the 1.5 s after the warm-up hold 15 samples: memory_settled_s and the "
    "memory over time are rough; make "
)
EXACT = " (mean_gpu_bytes and peak_gpu_bytes are integrated exactly)"


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_run_with_few_memory_samples_is_said_so_with_as_many_as_it_takes(
    tmp_path, capsys, engine
):
    """Whatever the sweep interval: the DES samples as often as the vector engine."""
    scenario = write_yaml(tmp_path, {**SHORT, "engine": engine})
    assert main(["validate", str(scenario)]) == 0
    rough = [line for line in capsys.readouterr().err.splitlines() if "sample the memory" in line]
    assert rough == [ROUGH + "study.warmup shorter" + EXACT]
    result = nnrpsim.run(scenario, out=tmp_path / "out", jobs=1, progress=False)
    assert rough[0] in result.warnings
    times = result.timeseries["time_ms"]  # (one server, one run)
    assert len(times) == 301 and (times > 28_500).sum() == 15
    assert times.diff().dropna().isin([99, 100, 101]).all()


@pytest.mark.parametrize(
    "overrides",
    [
        ["study.warmup=27s"],  # 30 samples after it
        ["study.warmup=0s", "study.duration=40ms"],  # 40
    ],
)
def test_enough_samples_are_not_named(overrides):
    points = sweep_points(load_scenario(SHORT, overrides))
    assert sample_advice(points, len(points)) == []


def test_a_run_of_a_few_milliseconds_is_told_to_run_longer():
    """Samples fall on whole milliseconds: 20 ms hold 20, whatever the warm-up."""
    points = sweep_points(load_scenario(SHORT, ["study.warmup=0s", "study.duration=20ms"]))
    (rough,) = sample_advice(points, len(points))
    assert rough == (
        "warning: all points: the runs sample the memory every 1 ms (study.duration / 300, at "
        "least 1 ms), so the 20 ms after the warm-up hold 20 samples: memory_settled_s and "
        "the memory over time are rough; make study.duration longer" + EXACT
    )


def test_both_engines_sample_on_the_same_whole_milliseconds_to_the_run_s_end(tmp_path):
    """40 s in 300 intervals of 133.3 ms: the DES, adding them up, lost its sample at the
    run's end to rounding, and sampled at fractions of a millisecond; on both engines the
    samples are the interval's multiples, each on its whole millisecond."""
    study = {**SHORT, "study": {**SHORT["study"], "duration": "40s", "warmup": "5s"}}
    times = {
        engine: nnrpsim.run(
            {**study, "engine": engine}, out=tmp_path / engine, jobs=1, progress=False
        ).timeseries["time_ms"]
        for engine in ("des", "vector")
    }
    assert times["des"].tolist() == times["vector"].tolist()
    assert len(times["des"]) == 301 and times["des"].iloc[-1] == 40_000
    assert set(times["des"].diff().dropna()) == {133, 134}
