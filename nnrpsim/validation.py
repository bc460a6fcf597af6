"""What ``nnrpsim validate`` says of a scenario before anything runs, for the command and for a
notebook alike (``nnrpsim.validate``): its sweep points, the closed-form means of its
workloads, the size of its runs, and the warnings a study's setup calls for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from .checks.caching import (
    kind_sizes_advice,
    policy_reach_advice,
    size_limit_advice,
    trace_sizes_advice,
    uncached_kinds_advice,
)
from .checks.keys import ignored_key_advice, inert_key_advice
from .checks.load import link_advice, server_advice
from .checks.timing import fault_time_advice, log_span_advice, sample_advice, warmup_advice
from .checks.ttl_bounds import ttl_bound_advice
from .display_units import counted
from .gc_pause import cyclic_gc_paused
from .recorded import moving_runs_recorded, study_of
from .results import ResultStore
from .run_files import finished_runs
from .run_progress import SetupStep, setup_shown
from .run_sizes import check_run_sizes, describe_run_sizes, point_sizes
from .scenario import Point, Scenario, ScenarioError, ScenarioLike, load_scenario, sweep_points
from .tasks import tasks_for
from .warmup import describe_warmups
from .workload_facts import check_traces, describe_workloads, input_digests

ADVICE = (
    warmup_advice,
    log_span_advice,
    trace_sizes_advice,
    sample_advice,
    link_advice,
    server_advice,
    uncached_kinds_advice,
    policy_reach_advice,
    size_limit_advice,
    ignored_key_advice,
    inert_key_advice,
    kind_sizes_advice,
    fault_time_advice,
    ttl_bound_advice,
)
"""The checks of a study's setup, in the order their warnings are given."""


@dataclass(frozen=True)
class Validation:
    """A valid scenario, its sweep points, what ``validate`` describes of them (a line each)
    and what it warns of (``warning: ...`` lines)."""

    name: str
    scenario: Scenario
    points: list[Point]
    described: list[str]
    warnings: list[str]

    def __str__(self) -> str:
        """The report ``nnrpsim validate`` prints on stdout (its warnings go to stderr)."""
        runs = sum(point.scenario.study.replications for point in self.points)  # (swept too)
        engines = ", ".join(dict.fromkeys(point.scenario.engine for point in self.points))
        counts = f"{counted(len(self.points), 'sweep point')}, {counted(runs, 'run')}"
        valid = f"{self.name}: valid ({counts}, engine {engines})"
        return "\n".join([valid, *(f"  {line}" for line in self.described)])

    def __repr__(self) -> str:
        """One line, as a notebook shows it: ``print`` it for the report."""
        return (
            f"<Validation {self.name}: {counted(len(self.points), 'sweep point')}, "
            f"{counted(len(self.warnings), 'warning')}>"
        )


def validate(
    scenario: ScenarioLike, overrides: Sequence[str] | str | None = (), progress: bool = True
) -> Validation:
    """Check ``scenario`` (with ``overrides``, as ``--set`` gives them) without running it: a
    :class:`~nnrpsim.scenario.ScenarioError` for bad input or runs too big for this machine,
    else what ``nnrpsim validate`` reports. A results folder gives the scenario its manifest
    records (to check before growing its study). ``progress``: a line that says the check
    goes on, where it takes more than a second (:func:`~nnrpsim.run_progress.setup_shown`).
    The cyclic garbage collector is paused meanwhile: it scanned every point's scenario and
    run size again and again as the checks went on (10 of 43 s for 100,000 points)."""
    with cyclic_gc_paused(), setup_shown(progress) as step:
        return _validated(scenario, overrides, step)


def _validated(
    scenario: ScenarioLike, overrides: Sequence[str] | str | None, step: SetupStep
) -> Validation:
    recorded, folder = study_of(scenario, "to check")
    resolved = load_scenario(recorded, overrides)
    points = sweep_points(resolved)
    traces = check_traces(points)
    step(len(points), "sizing their runs")
    sizes = point_sizes(points)
    check_run_sizes(sizes)
    step(len(points), "checking their settings")
    warnings = [line for advise in ADVICE for line in advise(points, len(points))]
    step(len(points), "describing them")
    described = [*traces, *describe_workloads(points), *describe_run_sizes(sizes)]
    if resolved.study.warmup == "auto":
        described.append(describe_warmups([point.scenario.study.warmup for point in points]))
    if folder is not None:
        told, refused = _resume_there(folder, resolved, points)
        described, warnings = [*described, *told], [*warnings, *refused]
    return Validation(_named(scenario, resolved), resolved, points, described, warnings)


def _resume_there(
    folder: Path, scenario: Scenario, points: list[Point]
) -> tuple[list[str], list[str]]:
    """What ``nnrpsim run FOLDER --resume`` would do with the runs in ``folder``, as a line to
    describe (how many it keeps, and moves to their points' new numbers, and how many it runs)
    or to warn of (it would refuse them, and why); nothing where it holds no runs. Nothing is
    written: a move a stopped resume left, which the next resume finishes first, is only
    named."""
    if moving_runs_recorded(folder):
        return [
            f"a resume in {folder} first finishes moving its runs, as a stopped one left them"
        ], []
    if not finished_runs(folder):
        return [], []
    inputs = input_digests(points)
    try:
        store = ResultStore(folder, scenario, True, inputs)
    except ScenarioError as err:
        return [], [f"warning: a resume in {folder} is refused: {err.reason}"]
    every = tasks_for(points, inputs)
    kept, moved = store.kept(every)
    moves = f" ({moved} of them moved to their points' new numbers)" if moved else ""
    left = len(every) - len(kept)
    then = f", and runs the other {left}" if left else "; none is left to run"
    return [f"a resume in {folder} keeps {counted(len(kept), 'run')} there{moves}{then}"], []


def _named(scenario: ScenarioLike, resolved: Scenario) -> str:
    """The scenario as the report names it: its file as given, else its study's name."""
    return str(scenario) if isinstance(scenario, str | PathLike) else resolved.study.name
