"""Moving a study's runs to their points' numbers in a sweep that a resume changed.

Points are numbered by their place in the sweep, and a run's files by its point
(:mod:`nnrpsim.run_files`), so a value added to a swept list, or the values put in another
order, renumbers the points after it. The runs there are runs of the new sweep all the same (a
run is drawn from its point's values and its replication alone): a resume moves them to their
points' new numbers and runs only what is missing.

A move is journalled in the manifest, so a study stopped during one (a crash, a kill) finishes
it on its next resume. First each file of a moving point is renamed from ``p`` to ``q`` under
its new number; then each ``q`` file is written as the ``p`` file of that number, with the
number in its ``point`` column, and removed. No ``p`` file is made in the first phase, so one
at a moving point's old number is one still to rename; every ``q`` file is one still to write.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .display_units import scenario_text
from .run_files import (
    OLDER_RUN_FILE,
    RUN_FILE,
    atomic_write,
    read_run_file,
    run_stem,
    stem_numbers,
    write_json,
    write_run_file,
)
from .scenario import Point, ScenarioError, load_scenario, sweep_points

MOVING = "moving_runs"
"""The manifest's journal of a move under way: its phase (1 or 2) and its ``[old, new]``
point numbers."""


@dataclass(frozen=True)
class Renumbering:
    """The points of the runs in a folder, numbered in the sweep of the scenario recorded
    there and in this one."""

    here: dict[int, int]
    """Each recorded point this sweep has too: its number there -> here."""
    there: dict[int, int]
    """The other way: a point of this sweep the recorded one lacks is not in it."""

    @property
    def moves(self) -> list[tuple[int, int]]:
        return [(old, new) for old, new in self.here.items() if old != new]


def renumbering(
    out: Path, folders: Iterable[Path], then: Mapping[str, Any], now: list[Point]
) -> Renumbering:
    """How the runs in ``out``'s ``folders``, of the recorded scenario ``then``, are numbered
    among this sweep's points ``now``; a :class:`ScenarioError` where one of them is of a point
    this sweep does not have (a resume keeps every run there)."""
    here = {point.values: point.index for point in now}
    recorded = sweep_points(load_scenario(then))
    with_files = {stem_numbers(path)[0] for folder in folders for path in _files(folder, "p")}
    for point in recorded:
        if point.index in with_files and point.values not in here:
            values = ", ".join(f"{key}: {scenario_text(key, v)}" for key, v in point.params.items())
            raise ScenarioError(
                "--resume",
                f"{out} holds runs of point {point.index} ({values}), "
                "which this sweep does not list: a resume keeps every run there (list its "
                "values again, or choose another --out)",
            )
    numbers = {point.index: here[point.values] for point in recorded if point.values in here}
    return Renumbering(numbers, {new: old for old, new in numbers.items()})


def move_runs(
    manifest: Path, folders: list[Path], recorded: dict[str, Any], moves: list[tuple[int, int]]
) -> None:
    """Move the runs of each ``[old, new]`` point, journalled in ``manifest`` (the folder's,
    ``recorded`` its content, already naming the scenario the new numbers are of)."""
    recorded[MOVING] = {"phase": 1, "moves": [list(move) for move in moves]}
    write_json(manifest, recorded)
    finish_move(manifest, folders, recorded)


def finish_move(manifest: Path, folders: list[Path], recorded: dict[str, Any]) -> None:
    """Carry out the move ``recorded`` journals from where it stopped, then take it out of
    the manifest."""
    phase, moves = _journal(manifest, recorded[MOVING])
    if phase == 1:
        new_of = dict(moves)
        for folder in folders:
            for path in _files(folder, "p"):
                point, replication = stem_numbers(path)
                if point in new_of:
                    moved = run_stem(new_of[point], replication, "q") + path.suffix
                    os.replace(path, path.with_name(moved))
        recorded[MOVING] = {"phase": 2, "moves": moves}
        write_json(manifest, recorded)
    for folder in folders:
        for path in _files(folder, "q"):
            point, replication = stem_numbers(path)
            _rewrite(path, path.with_name(run_stem(point, replication) + path.suffix), point)
    del recorded[MOVING]
    write_json(manifest, recorded)


def _journal(manifest: Path, journal: object) -> tuple[int, list[list[int]]]:
    """A move's phase and point numbers as the manifest journals them, checked."""
    phase = journal.get("phase") if isinstance(journal, dict) else None
    moves = journal.get("moves") if isinstance(journal, dict) else None
    pairs = isinstance(moves, list) and all(
        isinstance(move, list) and len(move) == 2 and all(type(n) is int for n in move)
        for move in moves
    )
    if phase not in (1, 2) or not pairs:
        raise ScenarioError("--resume", f"{manifest}: {MOVING} is not a move nnrpsim wrote")
    return phase, moves


def _rewrite(path: Path, target: Path, point: int) -> None:
    """``path``'s table written to ``target`` in its format, numbered ``point``; then removed
    (a damaged file is moved as it is: its run is done again)."""
    try:
        table = read_run_file(path)
    except ScenarioError:
        os.replace(path, target)
        return
    if "point" in table.column_names:
        at = table.column_names.index("point")
        numbers = pa.array([point] * len(table), table.schema.field(at).type)
        table = table.set_column(at, "point", numbers)
    if path.suffix == OLDER_RUN_FILE:
        atomic_write(target, lambda temporary: pq.write_table(table, temporary))
    else:
        write_run_file(target, table)
    path.unlink()


def runs_moving(folder: Path) -> bool:
    """Whether ``folder`` holds runs that a stopped move left under ``q`` names, not yet
    written at their new numbers (perhaps every run of the folder)."""
    return bool(_files(folder, "q"))


def _files(folder: Path, prefix: str) -> list[Path]:
    """The run files in ``folder`` whose names begin with ``prefix`` (:func:`run_stem`)."""
    files = folder.glob(f"{prefix}*-r*")
    return sorted(path for path in files if path.suffix in (RUN_FILE, OLDER_RUN_FILE))
