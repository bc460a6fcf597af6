"""Scenario files: schema, units, loading, sweep expansion."""

from .loader import (
    Point,
    ScenarioError,
    ScenarioLike,
    load_scenario,
    parse_scenario,
    scenario_hash,
    sweep_points,
)
from .schema import Scenario

__all__ = [
    "Point",
    "Scenario",
    "ScenarioError",
    "ScenarioLike",
    "load_scenario",
    "parse_scenario",
    "scenario_hash",
    "sweep_points",
]
