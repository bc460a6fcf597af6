"""Sweep expansion: a scenario's ``sweep`` as its points, each a validated scenario with its
swept values in base units (ms, bytes), and ``study.warmup: auto`` resolved for each."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ..gc_pause import cyclic_gc_paused
from ..quoted import quoted
from .dotted_keys import dotted, set_dotted
from .errors import ScenarioError, field_path, first_error, reason_of
from .per_scenario import once_per_scenario
from .schema import MAX_RUNS, Scenario, Sweep


@dataclass(frozen=True)
class Point:
    """One sweep point: the swept parameters (resolved: durations in ms, sizes in bytes) and the
    scenario they resolve to."""

    index: int
    params: dict[str, Any]
    scenario: Scenario

    @property
    def values(self) -> str:
        """Its swept values as one comparable text: no two points of a sweep share it, and the
        point of another sweep over the same keys and base with the same text makes the same
        runs (a resume that lists another value finds the runs there by it)."""
        return json.dumps(self.params, sort_keys=True, default=repr)


def with_auto_warmup(scenario: Scenario) -> Scenario:
    """``scenario`` with ``study.warmup: auto`` resolved to the least warm-up after which its
    sessions at once, averaged over the measured time, are within 1 % of their steady number
    (the closed form ``validate`` judges a warm-up by), rounded up to whole seconds where the
    run has room. A ValueError where there is none: a log's load has no steady level, and a
    run may be too short for any."""
    study, workload = scenario.study, scenario.workload
    if study.warmup != "auto":
        return scenario
    if workload.follows_a_log:
        raise ValueError(
            "auto needs a synthetic workload's steady load, and a trace's or an arrival log's "
            "is what the log makes it: give a duration (0s measures from the start)"
        )
    # (imported here: the model package brings SimPy, which loading a scenario does not need)
    from nnrpsim.model.workload_means import least_warmup_ms, written_warmup_ms

    sessions = workload.sessions
    least = least_warmup_ms(study.duration, sessions.duration, sessions.duration_cv)
    if least is None or math.ceil(least) >= study.duration:
        raise ValueError(
            f"auto: no warm-up within this {study.duration / 1e3:g} s run keeps the sessions at "
            "once within 1 % of their steady number: lengthen study.duration"
        )
    warmup = written_warmup_ms(least, study.duration)
    return scenario.model_copy(update={"study": study.model_copy(update={"warmup": warmup})})


def _with_warmup_of_its_own(scenario: Scenario) -> Scenario:
    """:func:`with_auto_warmup`, or a :class:`ScenarioError` naming ``study.warmup`` where
    ``auto`` has no value for the scenario as written."""
    try:
        return with_auto_warmup(scenario)
    except ValueError as err:
        raise ScenarioError("study.warmup", str(err)) from None


def sweep_points(scenario: Scenario) -> list[Point]:
    """Expand ``sweep``: the cartesian product of ``grid`` times the rows of ``zip``; once for
    each scenario (a study checks its sweep as it loads the scenario, then expands it again to
    run it), a new list each time."""
    return list(_expanded(scenario))


@once_per_scenario
def _expanded(scenario: Scenario) -> list[Point]:
    """:func:`_points_of`, the cyclic garbage collector paused: each point's scenario is kept,
    and as they pile up every collection scans them all again (15 such collections took 7 s
    of a 100,000-point sweep's expansion)."""
    with cyclic_gc_paused():
        return _points_of(scenario)


def _points_of(scenario: Scenario) -> list[Point]:
    if scenario.sweep is None:
        return [Point(0, {}, _with_warmup_of_its_own(scenario.model_copy(update={"sweep": None})))]
    grid, zipped = scenario.sweep.grid, scenario.sweep.zip
    n_zip = len(next(iter(zipped.values()))) if zipped else 1
    places = list(
        itertools.product(itertools.product(*map(range, map(len, grid.values()))), range(n_zip))
    )
    points: list[Point] = []
    first_of: dict[str, int] = {}  # a point's resolved values (as JSON): the first point with them
    # (every point writes the same keys before it is validated: no copy, which took 0.3 ms
    # a point; a validated scenario holds none of ``raw``'s dicts)
    raw = _unswept_kept(scenario, scenario.model_dump(exclude={"sweep"}), [*grid, *zipped])
    for grid_place, zip_place in places:
        params = {key: grid[key][i] for key, i in zip(grid, grid_place, strict=True)}
        params.update((key, values[zip_place]) for key, values in zipped.items())
        for key, value in params.items():
            kind = "grid" if key in grid else "zip"
            set_dotted(raw, key, value, where=f"sweep.{kind}.{key}")
        try:
            resolved = Scenario.model_validate(raw)
        except ValidationError as err:
            first = first_error(err)
            where = field_path(first["loc"])
            # the swept key's own error, or an unknown section that the swept key is in
            unknown = first["type"] == "extra_forbidden"
            swept = next(
                (
                    k
                    for k in params
                    if where == k
                    or where.startswith(f"{k}.")
                    or (unknown and k.startswith(f"{where}."))
                ),
                None,
            )
            if swept is None:  # a rule across keys that the point's values break together
                values = ", ".join(f"{key}: {quoted(value)}" for key, value in params.items())
                rule = reason_of(first) if where == "scenario" else f"{where}: {reason_of(first)}"
                raise ScenarioError(f"sweep point {len(points)} ({values})", rule) from None
            kind = "grid" if swept in grid else "zip"
            reason, value = reason_of(first), quoted(params[swept])
            if not reason.endswith(f"got {value}"):  # (named once: a type's reason names it)
                reason += f" (value {value})"
            raise ScenarioError(f"sweep.{kind}.{swept}", reason) from None
        try:
            resolved = with_auto_warmup(resolved)
        except ValueError as err:
            _with_warmup_of_its_own(scenario)  # (named without a point where the sweep is not why)
            values = ", ".join(f"{key}: {quoted(value)}" for key, value in params.items())
            raise ScenarioError(
                f"sweep point {len(points)} ({values})", f"study.warmup: {err}"
            ) from None
        resolved_values = resolved.model_dump()
        params = {key: dotted(resolved_values, key) for key in params}  # in base units
        point = Point(len(points), params, resolved)
        first = first_of.setdefault(point.values, point.index)
        if first != point.index:
            raise _same_runs(scenario.sweep, places, first, point.index)
        points.append(point)
    if (runs := sum(point.scenario.study.replications for point in points)) > MAX_RUNS:
        raise ScenarioError(
            "study.replications",
            f"{len(points):,} sweep points make {runs:,} runs with their replications, more "
            f"than a study holds ({MAX_RUNS:,}): fewer replications or points",
        )
    return points


def _unswept_kept(model: BaseModel, values: dict[str, Any], swept: list[str]) -> dict[str, Any]:
    """``values`` (``model`` dumped) with each section that no ``swept`` key lies in given as
    ``model``'s own, validated already: pydantic takes such a section as it is, so a point
    validates only what its sweep can change (its sections' rules read only their own keys;
    the scenario's run on each point), and its scenario shares the rest with the others."""
    kept: dict[str, Any] = {}
    for name, value in values.items():
        section = getattr(model, name)
        if not isinstance(section, BaseModel):  # (a value, or a section left out)
            kept[name] = value
        elif inner := [key.split(".", 1)[1] for key in swept if key.startswith(f"{name}.")]:
            kept[name] = _unswept_kept(section, value, inner)
        else:  # (no swept key within it, or it is swept whole: each point sets it)
            kept[name] = section
    return kept


def _same_runs(
    sweep: Sweep, places: list[tuple[tuple[int, ...], int]], first: int, again: int
) -> ScenarioError:
    """Sweep points ``first`` and ``again``, whose values resolve alike (a value listed twice,
    ``1s`` beside ``1000ms``, ``auto`` beside the warm-up it chooses): with the same random
    numbers they would be the same runs, run twice and drawn twice, so the sweep is refused.
    ``places``: each point's index in each grid list, and in the zip lists."""
    (grid_a, zip_a), (grid_b, zip_b) = places[first], places[again]
    same = f"points {first} and {again} would be the same runs"
    for (key, values), i, j in zip(sweep.grid.items(), grid_a, grid_b, strict=True):
        if i != j:
            a, b = values[i], values[j]
            listed = (
                f"lists {quoted(a)} twice"
                if a == b
                else f"lists {quoted(a)} and {quoted(b)}, which come alike"
            )
            return ScenarioError(f"sweep.grid.{key}", f"{listed}: {same} (list each value once)")
    held = ", ".join(f"{key}: {quoted(values[zip_b])}" for key, values in sweep.zip.items())
    return ScenarioError(
        "sweep.zip",
        f"positions {zip_a} and {zip_b} hold the same values ({held}): {same} (give each "
        "combination once)",
    )
