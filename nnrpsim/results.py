"""The only writer of a study's results folder.

Each finished run is written at once, atomically (a temporary file, then a rename), so an
interrupted study loses nothing it finished and ``--resume`` skips it. ``finalize`` aggregates
the runs into the summary (:mod:`~nnrpsim.summaries`), the long tables and the manifest, which
:mod:`~nnrpsim.recorded` reads back; :mod:`~nnrpsim.resume_rules` says which runs a resume
keeps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import __version__
from .folder_lock import LOCK_FILE, folder_held
from .paths import NO_SUCH_FILE, check_folder_can_be_made, file_problem, make_folders
from .recorded import INTERRUPTED
from .renumbering import MOVING, Renumbering, finish_move, move_runs, renumbering, runs_moving
from .resume_rules import runs_still_hold, scenario_changes
from .run_files import (
    RUN_FILE,
    atomic_write,
    finished_runs,
    read_all,
    read_run_file,
    run_files,
    run_path,
    run_stem,
    unreadable,
    write_json,
    write_run_file,
)
from .scenario import Scenario, ScenarioError, scenario_hash, sweep_points
from .summaries import summarize, summarize_kinds, with_derived_metrics, with_mean_held
from .tasks import LONG_TABLES, Task

WARNINGS_FILE = "warnings.txt"
"""What ``nnrpsim run`` printed of the study's setup and runs, kept beside its figures."""
STUDY_OUTPUTS = (
    "manifest.json",
    "runs.parquet",
    "summary.parquet",
    "summary.csv",
    "kinds.csv",
    WARNINGS_FILE,
    *(f"{name}.parquet" for name in LONG_TABLES),
    "runs",
    *LONG_TABLES,
    "plots",
    LOCK_FILE,
)
"""What a study writes in its folder, files and folders: what no other output may replace."""
MAX_CHANGES_SHOWN = 3
"""Keys a refused ``--resume`` names of those that differ: enough to see which edit it was."""


def check_out_folder(folder: Path) -> None:
    """Raise a :class:`ScenarioError` (``--out``) for a folder no output can go to: a name with
    a NUL, an existing file or one in its path, a name the system refuses (too long, say), a
    folder that cannot be made (made and removed again to find out). Before anything runs:
    ``records`` ran its run, then found it could not write under a file."""
    if "\0" in str(folder):  # (the API's; a command line cannot carry a NUL)
        raise ScenarioError("--out", "must not contain a NUL character")
    try:
        existing = next(path for path in (folder, *folder.parents) if path.exists())
        if existing == folder and not folder.is_dir():
            raise ScenarioError("--out", f"{folder} is a file, not a folder")
        if not existing.is_dir():
            raise ScenarioError("--out", f"cannot use {folder}: {existing} is not a folder")
        if existing != folder:
            check_folder_can_be_made(folder)
    except OSError as err:
        raise ScenarioError("--out", f"cannot use {folder}: {err.strerror}") from None


def study_mark(folder: Path) -> str | None:
    """What makes ``folder`` a study's results, or None: its ``runs.parquet``, a
    ``manifest.json`` that records a ``scenario_hash`` (a study that has not finished has no
    tables; an early version's no manifest), or its finished runs' files (``runs``: whatever
    its manifest has become)."""
    try:
        if (folder / "runs.parquet").is_file():
            return "runs.parquet"
        document = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # (none, or one that cannot be read: no mark, then)
        document = None
    if isinstance(document, dict) and "scenario_hash" in document:
        return "manifest.json"
    return "runs" if finished_runs(folder) > 0 else None


def study_output(path: Path | str) -> Path | None:
    """The study output (:data:`STUDY_OUTPUTS`, in any study's folder) that ``path`` is or
    lies in, or None: ``compare --csv results/x/summary.csv`` wrote over a study's summary."""
    try:
        resolved = Path(path).resolve()
        for folder in resolved.parents:
            if study_mark(folder) is not None:
                output = folder / resolved.relative_to(folder).parts[0]
                if output.name in STUDY_OUTPUTS:
                    return output
    except (OSError, RuntimeError):  # (a path the system refuses, a loop of links)
        return None
    return None


def among(output: Path) -> str:
    """What a refusal says of a path that :func:`study_output` found among a study's."""
    return f"lies among a study's outputs ({output.name} in {output.parent})"


def _not_a_studys(folder: Path) -> str | None:
    """A file in ``folder`` of a name a study writes, where no study wrote it (a summary.csv
    of the user's, say), which a study would write over; None where there is none."""
    try:
        if study_mark(folder) is not None:
            return None
        return next(
            (name for name in STUDY_OUTPUTS if name != LOCK_FILE and (folder / name).is_file()),
            None,
        )
    except OSError:  # (as the study's own writes would: they say why)
        return None


def _text_of(manifest: Path) -> bytes | None:
    """The manifest's bytes, to tell whether it changed; None where there is none to read (a
    folder that cannot be, under a file, is named as the study makes it)."""
    try:
        return manifest.read_bytes()
    except OSError:
        return None


def _recorded(manifest: Path) -> dict[str, Any]:
    """A results folder's manifest, with the scenario hash ``--resume`` checks against."""
    try:
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ScenarioError("--resume", f"{manifest} cannot be read ({err})") from None
    if not isinstance(document, dict) or not isinstance(document.get("scenario_hash"), str):
        raise ScenarioError("--resume", f"{manifest} records no scenario_hash")
    return document


class ResultStore:
    def __init__(
        self, out: Path, scenario: Scenario, resume: bool, inputs: dict[str, str] | None = None
    ) -> None:
        """``inputs``: the digest of each file the study reads, by path
        (:func:`~nnrpsim.workload_facts.input_digests`)."""
        self.out = Path(out)
        self.runs_dir = self.out / "runs"
        self.table_dirs = {name: self.out / name for name in LONG_TABLES}
        self._folders = [self.runs_dir, *self.table_dirs.values()]
        self._renumbering: Renumbering | None = None
        """Where a resume changed the sweep: the runs' points there and here."""
        self._recorded: dict[str, Any] = {}
        """The folder's manifest, where a resume found one: kept until the summary replaces it."""
        self.scenario = scenario
        self.hash = scenario_hash(scenario)
        self.inputs = inputs or {}
        manifest = self.out / "manifest.json"
        check_out_folder(self.out)
        has_runs = finished_runs(self.out) > 0 or runs_moving(self.runs_dir)
        owned = study_output(self.out)
        if owned is not None:
            raise ScenarioError("--out", f"{self.out} {among(owned)}: choose another --out")
        foreign = _not_a_studys(self.out)
        if foreign is not None:
            raise ScenarioError(
                "--out", f"{self.out} holds {foreign}, not a study's: choose another --out"
            )
        if has_runs and not resume:
            raise ScenarioError(
                "--out", f"{self.out} already holds results; pass --resume or choose another --out"
            )
        if has_runs and manifest.is_file():
            recorded = _recorded(manifest)
            if MOVING in recorded:  # (a resume stopped as it moved the runs: they move first)
                with self._writing():
                    finish_move(manifest, self._folders, recorded)
            self._check_resumable(recorded)
            self._recorded = recorded
        self._seen = _text_of(manifest)
        """The manifest as this study checked it: :meth:`held` refuses one changed since."""

    def _check_resumable(self, recorded: dict[str, Any]) -> None:
        """The runs in the folder are of this scenario, over the same files (a manifest of a
        version that did not record them is taken at its word)."""
        start_again = "choose another --out, or remove that folder to start again"
        previous, then = recorded["scenario_hash"], recorded.get("scenario")
        now = self.scenario.model_dump(mode="json")
        if previous != self.hash and not runs_still_hold(then, now):
            changes = scenario_changes(then, now)
            what = "; ".join(changes[:MAX_CHANGES_SHOWN]) or f"{previous} != {self.hash}"
            if len(changes) > MAX_CHANGES_SHOWN:
                what += f"; and {len(changes) - MAX_CHANGES_SHOWN} more"
            raise ScenarioError(
                "--resume",
                f"{self.out} holds a different scenario ({what}; the file, --set or a new "
                f"version's defaults changed it): {start_again}",
            )
        recorded_inputs = recorded.get("inputs")
        for path, digest in self.inputs.items() if isinstance(recorded_inputs, dict) else ():
            if recorded_inputs.get(path, digest) != digest:
                raise ScenarioError(
                    "--resume",
                    f"{path} changed since the runs in {self.out} read it (content "
                    f"{recorded_inputs[path]} != {digest}): {start_again}",
                )
        if previous != self.hash:  # (the runs still hold: perhaps at other points' numbers)
            points = sweep_points(self.scenario)
            self._renumbering = renumbering(self.out, self._folders, then, points)

    @contextmanager
    def held(self) -> Iterator[None]:
        """The folders runs are written to, made once nothing can refuse the study any more (a
        refusal leaves no folder behind), and held for the block (:mod:`~nnrpsim.folder_lock`:
        a second study there is refused). Then the manifest of the study as it starts: a study
        killed before its summary (SIGKILL, the OOM killer) leaves it, so a resume checks its
        runs against the scenario as any other; then the runs a resume renumbers move."""
        try:
            make_folders(self._folders)
        except OSError as err:
            raise ScenarioError("--out", f"cannot create {self.out}: {err.strerror}") from None
        manifest = self.out / "manifest.json"
        with folder_held(self.out):
            if _text_of(manifest) != self._seen:  # (another study began there meanwhile)
                raise ScenarioError(
                    "--out",
                    f"{self.out} changed as this study started (another nnrpsim run wrote it): "
                    "run it again",
                )
            started = {**self._recorded, **self._study(), "status": INTERRUPTED}
            with self._writing():
                write_json(manifest, started)
                # (an earlier pass's warnings spoke of other runs: the study's end writes its
                # own, and a study stopped before then leaves none)
                (self.out / WARNINGS_FILE).unlink(missing_ok=True)
                if self._renumbering is not None and (moves := self._renumbering.moves):
                    move_runs(manifest, self._folders, started, moves)
            yield

    def _study(self) -> dict[str, Any]:
        """What the manifest says of the study whatever its runs: version, scenario, inputs."""
        return {
            "nnrpsim_version": __version__,
            "study": self.scenario.study.name,
            "scenario_hash": self.hash,
            "scenario": self.scenario.model_dump(mode="json"),
            "inputs": self.inputs,
        }

    def kept(self, tasks: Iterable[Task]) -> tuple[set[tuple[int, int]], int]:
        """The runs of ``tasks``, as (point, replication), that the folder holds finished (a
        resume does not run them again); and how many of them it moves to their points' new
        numbers, as its sweep lists other values (:meth:`held` moves them)."""
        present = {path.stem for path in run_files(self.runs_dir)}  # (one listing: a probe a
        # run took 4 s of a fresh study of 100,000 runs, which has none)
        done = {
            (t.point, t.replication) for t in tasks if self._done(t.point, t.replication, present)
        }
        moved = {new for _, new in self._renumbering.moves} if self._renumbering else set()
        return done, sum(point in moved for point, _ in done)

    def _done(self, point: int, replication: int, present: set[str]) -> bool:
        """A run that finished without error, of those whose files are ``present``; failed
        runs, runs whose files were damaged after they were written, and runs without their
        samples over time (every run of this version has some: a vector run of a version
        before 2026-12-06 had none) are run again on resume (and their files replaced)."""
        if self._renumbering is not None:  # (until the runs move, at their recorded points)
            recorded_point = self._renumbering.there.get(point)
            if recorded_point is None:  # (a point the recorded sweep did not list)
                return False
            point = recorded_point
        stem = run_stem(point, replication)
        if stem not in present:
            return False
        try:
            record = read_run_file(run_path(self.runs_dir, stem))
            error = record.column("error") if "error" in record.column_names else None
            finished = error is not None and error.null_count == len(error)
            for folder in self.table_dirs.values():
                if finished and (path := run_path(folder, stem)).is_file():
                    read_run_file(path)  # damaged: the run is done again
        except ScenarioError:  # missing or damaged
            return False
        return finished and run_path(self.table_dirs["timeseries"], stem).is_file()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write the system refuses (a full disk, a folder gone) as one line naming the
        folder: each file is written whole or not at all, so what was written stays."""
        try:
            yield
        except OSError as err:
            raise ScenarioError(
                "--out",
                f"cannot write in {self.out}: {err.strerror or err}; the runs written before "
                "are kept (rerun with --resume once it can be written)",
            ) from None

    def write(self, result: dict[str, Any]) -> None:
        """A run's files (:data:`RUN_FILE`), each written atomically: its long tables, then
        its record, which marks it done."""
        record = result["record"]
        name = run_stem(record["point"], record["replication"]) + RUN_FILE
        with self._writing():
            for table, folder in self.table_dirs.items():
                columns = run_table(result, table)
                if columns:
                    write_run_file(folder / name, pa.table(columns))
            row = pa.Table.from_pylist([{k: cell(v) for k, v in record.items()}])
            write_run_file(self.runs_dir / name, row)

    def finalize(
        self, meta: dict[str, Any]
    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """Aggregate every run on disk; write summary, runs, the long tables (time series,
        kinds and their summary) and the manifest. Returns the summary, the runs, the time
        series and the summary by kind."""
        runs = with_derived_metrics(read_all(self.runs_dir))
        if runs.empty:  # nothing finished yet: empty tables with the run columns
            runs = pd.DataFrame(columns=["point", "replication", "seed", "error", "wall_s"])
        runs = runs.sort_values(["point", "replication"], ignore_index=True)
        tables = {name: read_all(folder) for name, folder in self.table_dirs.items()}
        tables["timeseries"] = with_mean_held(tables["timeseries"])
        summary = summarize(runs)
        kinds = summarize_kinds(tables["kinds"], summary)
        failed = runs[runs["error"].notna()]
        with self._writing():
            atomic_write(self.out / "runs.parquet", runs.to_parquet)
            for name, table in tables.items():
                atomic_write(self.out / f"{name}.parquet", table.to_parquet)
            atomic_write(self.out / "summary.parquet", summary.to_parquet)
            atomic_write(self.out / "summary.csv", lambda p: summary.to_csv(p, index=False))
            if not kinds.empty:
                atomic_write(self.out / "kinds.csv", lambda p: kinds.to_csv(p, index=False))
            write_json(
                self.out / "manifest.json",
                {
                    **self._study(),
                    "runs": len(runs),
                    "seeds": runs[["point", "replication", "seed"]].to_dict("records"),
                    "failures": failed[["point", "replication", "error"]].to_dict("records"),
                    **meta,
                },
            )
        return summary, runs, tables["timeseries"], kinds

    def write_warnings(self, lines: list[str]) -> None:
        """``warnings.txt``: what ``nnrpsim run`` printed of the study, one line each, kept
        beside its figures for whoever reads them later; with none, no file (:meth:`held`
        removed an earlier pass's)."""
        if lines:
            text = "".join(f"{line}\n" for line in lines)
            with self._writing():
                atomic_write(
                    self.out / WARNINGS_FILE,
                    lambda temporary: temporary.write_text(text, encoding="utf-8"),
                )


def run_table(result: dict[str, Any], table: str) -> dict[str, list] | None:
    """One of a run's :data:`LONG_TABLES` as columns, led by its point and replication; None
    when the run has no rows in it."""
    record, columns = result["record"], result["tables"][table]
    rows = len(next(iter(columns.values()), ()))
    if not rows:
        return None
    at = {"point": [record["point"]] * rows, "replication": [record["replication"]] * rows}
    return {**at, **columns}


def cell(value: Any) -> Any:
    """Parquet cells must be scalars: anything else is stored as its JSON text."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return value
    return json.dumps(value)


def read_table(
    path: Path, columns: list[str] | None = None, required: Iterable[str] = ()
) -> pd.DataFrame:
    """A Parquet file of results; a missing or damaged one is bad input, named with its path,
    and so is one with rows but without the ``required`` columns (another tool's, or an older
    version's)."""
    if problem := file_problem(path):  # (pyarrow's error would be the path alone)
        hint = " (run a study first)" if problem == NO_SUCH_FILE else ""
        raise ScenarioError(str(path), problem + hint)
    try:
        table = pd.read_parquet(path, columns=columns)
    except (OSError, ValueError, KeyError) as err:
        raise unreadable(path, err) from None
    missing = [name for name in required if name not in table.columns]
    if missing and len(table):  # (a study stopped before its first run wrote an empty table)
        named = ", ".join(map(repr, missing[:3])) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise ScenarioError(
            str(path), f"no column {named}: not a table this version of nnrpsim wrote"
        )
    return table
