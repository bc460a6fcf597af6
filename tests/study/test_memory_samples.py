"""A DES run's memory over time, and when it settles, come from its samples, taken every
sample interval (the larger of a three hundredth of the run and the server's sweep interval):
a run of a few seconds, a short trace's say, had one or two and no word of it."""

from __future__ import annotations

import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.scenario import load_scenario, sweep_points
from nnrpsim.validation import sample_advice
from tests.conftest import write_yaml

SHORT = {
    "study": {"name": "short", "duration": "20s", "warmup": "5s", "replications": 1},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "10s"}},
}
ROUGH = (
    "warning: all points: the runs sample the memory every 1 s (the larger of study.duration "
    "/ 300 and topology.sweep_interval), so the 15 s after the warm-up hold 16 samples: "
    "memory_settled_s and the memory over time are rough; "
)
EXACT = " (mean_gpu_bytes and peak_gpu_bytes are integrated exactly)"


def test_a_run_with_few_memory_samples_is_said_so_with_as_many_as_it_takes(tmp_path, capsys):
    assert main(["validate", str(write_yaml(tmp_path, SHORT))]) == 0
    rough = [line for line in capsys.readouterr().err.splitlines() if "sample the memory" in line]
    assert rough == [ROUGH + "a longer study.duration samples more" + EXACT]
    result = nnrpsim.run(SHORT, out=tmp_path / "out", jobs=1, progress=False)
    assert rough[0] in result.warnings
    samples = result.timeseries
    assert (samples["time_ms"] >= 5_000).sum() == 16  # (one server, one run)


@pytest.mark.parametrize(
    "overrides",
    [
        ["study.duration=40s"],  # 36 samples
        ["engine=vector"],  # no samples: its memory is integrated
        ["topology.sweep_interval=100ms"],  # every 100 ms: 151
    ],
)
def test_enough_samples_or_none_are_not_named(overrides):
    points = sweep_points(load_scenario(SHORT, overrides))
    assert sample_advice(points, len(points)) == []


def test_a_trace_is_told_of_the_sweep_interval_not_a_longer_run(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time_ms,object,size_bytes\n0,a,2000\n900,a,2000\n")
    scenario = {
        "study": {"duration": "1s", "warmup": "0s", "replications": 1},
        "workload": {"trace": {"path": str(log), "format": "csv"}},
    }
    points = sweep_points(load_scenario(scenario))
    (rough,) = sample_advice(points, len(points))
    assert rough.endswith(
        "so the 1 s after the warm-up hold 2 samples: memory_settled_s and the memory over time "
        "are rough; a shorter topology.sweep_interval samples more" + EXACT
    )
