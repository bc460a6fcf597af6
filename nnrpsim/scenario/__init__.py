"""Scenario files: schema, units, loading, sweep expansion."""

from .errors import ScenarioError
from .loader import ScenarioLike, load_scenario, parse_scenario, scenario_hash
from .schema import Scenario
from .sweep import Point, sweep_points

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
