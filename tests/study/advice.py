"""What a study's checks say of a scenario before it runs, and what one run gives with the
warnings its study said after it: the two sides of each pre-run check's tests."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.scenario import Point, load_scenario, sweep_points


def advice(check: Callable[[list[Point], int], list[str]], study: dict, *overrides: str):
    """The warnings ``check`` gives for ``study``'s sweep points under ``overrides``."""
    points = sweep_points(load_scenario(study, list(overrides)))
    return check(points, len(points))


def run_numbers(study: dict, metrics: list[str], *overrides: str) -> tuple[list, list[str]]:
    """One point's ``metrics`` from a study of ``study`` under ``overrides``, and the warnings
    the study gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        summary = nnrpsim.sweep(study, list(overrides), progress=False)
    return summary[metrics].iloc[0].tolist(), [str(w.message) for w in caught]
