"""A sweep's points: each the scenario its values make, as if validated whole, whichever keys
the sweep sets; sharing the sections no swept key lies in (a point validates only what its
sweep can change: a 100,000-point sweep loaded in half the time, in half the memory)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.run_config import model_config
from nnrpsim.scenario import Scenario, ScenarioError, load_scenario, sweep_points
from nnrpsim.scenario.dotted_keys import set_dotted
from nnrpsim.scenario.sweep import with_auto_warmup

SWEEPABLE = {
    "study.seed": [1, 2, 3],
    "study.duration": ["60s", "90s"],
    "study.warmup": ["0s", "5s", "auto"],
    "engine": ["des", "vector"],
    "topology.link.latency": ["0ms", "1ms", "5ms"],
    "topology.gpu_memory": ["1MiB", "64MiB"],
    "topology.ttl_floor": ["1s", "2s"],
    "workload.sessions": [{"rate_per_s": 1, "duration": "20s"}, {"rate_per_s": 3}],
    "workload.sessions.duration": ["20s", "40s"],
    "workload.objects.size.median": ["2KiB", "8KiB"],
    "workload.operations.rate_per_s": [0.5, 2],
    "host_policy.ttl_fraction": [0.5, 0.75, 0.9],
    "faults": [{}, {"restart_at": "30s"}],
    "faults.restart_at": [None, "20s"],
}
"""Keys a sweep may set, whole sections among them, with values any combination takes."""


@st.composite
def sweeps(draw) -> dict:
    """A scenario that sweeps some of :data:`SWEEPABLE` (none within another), each over some
    of its values, in a grid or a zip."""
    keys = draw(st.lists(st.sampled_from(sorted(SWEEPABLE)), min_size=1, max_size=4, unique=True))
    keys = [key for key in keys if not any(key.startswith(f"{other}.") for other in keys)]
    lists = {key: draw(st.permutations(SWEEPABLE[key])) for key in keys}
    if draw(st.booleans()):
        sweep = {"grid": {key: values[: draw(st.integers(1, 2))] for key, values in lists.items()}}
    else:
        size = min(map(len, lists.values()))
        sweep = {"zip": {key: values[:size] for key, values in lists.items()}}
    base = {"topology": {"ttl_ceiling": "1h"}, "workload": {"objects": {"size": {"sigma": 0.5}}}}
    return {**base, "study": {"name": "drawn", "replications": 1}, "sweep": sweep}


def _each_validated_whole(raw: dict) -> list[Scenario]:
    """Each point's scenario the slow way: the base scenario's values with the point's set,
    validated as one scenario, its warm-up resolved."""
    base = load_scenario({**raw, "sweep": None}).model_dump()
    grid, zipped = raw["sweep"].get("grid", {}), raw["sweep"].get("zip", {})
    rows = zip(*zipped.values(), strict=True) if zipped else [()]
    scenarios = []
    for grid_values, zip_values in itertools.product(itertools.product(*grid.values()), rows):
        values = base
        for key, value in [
            *zip(grid, grid_values, strict=True),
            *zip(zipped, zip_values, strict=True),
        ]:
            set_dotted(values, key, value)
        scenarios.append(with_auto_warmup(Scenario.model_validate(values)))
    return scenarios


@settings(max_examples=80, deadline=None)
@given(sweeps())
def test_each_point_is_its_values_validated_whole(raw):
    """And a sweep is refused where a point validated whole is (faults on the vector engine,
    a warm-up as long as the run)."""
    try:
        expected = [scenario.model_dump() for scenario in _each_validated_whole(raw)]
    except ValueError:  # (pydantic's ValidationError is one)
        with pytest.raises(ScenarioError):
            load_scenario(raw)
        return
    assert [point.scenario.model_dump() for point in sweep_points(load_scenario(raw))] == expected


TWO_SECTIONS_SWEPT = {
    "sweep": {
        "grid": {
            "host_policy.ttl_fraction": [0.5, 0.7],
            "workload.sessions.duration": ["20s", "40s"],
        }
    }
}


def test_points_share_the_sections_their_sweep_does_not_set():
    first, *_, last = (point.scenario for point in sweep_points(load_scenario(TWO_SECTIONS_SWEPT)))
    assert (last.host_policy.ttl_fraction, last.workload.sessions.duration) == (0.7, 40_000)
    for shared in ("study", "topology", "faults"):
        assert getattr(last, shared) is getattr(first, shared)
    assert last.workload.objects is first.workload.objects
    assert last.workload.operations is first.workload.operations
    assert last.host_policy is not first.host_policy
    assert last.workload.sessions is not first.workload.sessions


def test_their_model_configurations_share_the_parts_of_shared_sections():
    first, *_, last = (
        model_config(point.scenario) for point in sweep_points(load_scenario(TWO_SECTIONS_SWEPT))
    )
    assert last.server is first.server and last.uplink is first.uplink is first.downlink
    assert (last.policy.ttl_fraction, last.workload.session_duration_ms) == (0.7, 40_000)
    assert last.policy is not first.policy and last.workload is not first.workload
