"""What a resume compares (:mod:`nnrpsim.resume_rules`), on scenarios as a manifest records
them: a key one side lacks is a change whatever the other's value, and a key swept in grid
there and in zip here is another sweep."""

from __future__ import annotations

import copy

import pytest

from nnrpsim.resume_rules import runs_still_hold, scenario_changes
from nnrpsim.scenario import parse_scenario
from tests.conftest import SMALL_STUDY

TTL = "host_policy.ttl_fraction"
RATE = "workload.invalidations.rate_per_s"
MEMORY = "topology.gpu_memory"


def _recorded(sweep: dict | None = None) -> dict:
    """The small study's scenario as its manifest records it, with ``sweep`` instead."""
    raw = SMALL_STUDY if sweep is None else {**SMALL_STUDY, "sweep": sweep}
    return parse_scenario(raw).model_dump(mode="json")


@pytest.mark.parametrize(
    "section, key, written",
    [(("faults",), "restart_at", "null"), (("workload", "objects"), "kind_sizes", "{}")],
    ids=["null", "empty mapping"],
)
def test_a_key_the_recorded_scenario_lacks_is_a_change_at_its_default_too(section, key, written):
    """A manifest of a version before the key existed: whether the runs there behaved as its
    default does is not for a resume to guess (the refusal says a new version's defaults may
    have changed the scenario)."""
    now = _recorded()
    then = copy.deepcopy(now)
    parent = then
    for name in section:
        parent = parent[name]
    del parent[key]
    dotted = ".".join((*section, key))
    assert scenario_changes(then, now) == [f"{dotted}: absent there, {written} here"]
    assert not runs_still_hold(then, now)
    assert scenario_changes(now, now) == [] and runs_still_hold(now, now)


def test_a_key_swept_in_grid_there_and_in_zip_here_is_another_sweep():
    """Grid and zip both non-empty on both sides, so only the moved key differs."""
    then = _recorded(
        {"grid": {RATE: [0, 0.02], TTL: [0.1, 0.5]}, "zip": {MEMORY: ["1GiB", "2GiB"]}}
    )
    now = _recorded({"grid": {RATE: [0, 0.02]}, "zip": {MEMORY: ["1GiB", "2GiB"], TTL: [0.1, 0.5]}})
    assert scenario_changes(then, now) == [
        f"sweep.zip.{TTL}: absent there, [0.1, 0.5] here",
        f"sweep.grid.{TTL}: [0.1, 0.5] there, absent here",
    ]
    assert not runs_still_hold(then, now)
    # the same key with other values, swept alike: its points' runs are found by their values
    longer = _recorded(
        {"grid": {RATE: [0, 0.02], TTL: [0.1, 0.3, 0.5]}, "zip": {MEMORY: ["1GiB", "2GiB"]}}
    )
    assert runs_still_hold(then, longer)
