"""The only writer of a study's results folder.

Each finished run is written at once, atomically (a temporary file, then a rename), so an
interrupted study loses nothing it finished and ``--resume`` skips it. ``finalize`` aggregates
the runs into the summary, the long tables and the manifest.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import __version__
from .display_units import scenario_text
from .folder_lock import folder_held
from .metrics import KIND_METRICS, METRICS, wire_saving
from .paths import NO_SUCH_FILE, file_problem
from .renumbering import MOVING, Renumbering, finish_move, move_runs, renumbering, runs_moving
from .run_files import (
    RUN_FILE,
    atomic_write,
    finished_runs,
    read_all,
    read_run_file,
    run_path,
    run_stem,
    unreadable,
    write_json,
    write_run_file,
)
from .scenario import Scenario, ScenarioError, ScenarioLike, scenario_hash, sweep_points
from .student_t import t95
from .tasks import LONG_TABLES, Task


def means_and_intervals(frame: pd.DataFrame, by: list[str], metrics: Iterable[str]) -> pd.DataFrame:
    """Per group of ``by`` (sorted): each metric's mean over the rows that have it, and the
    half-width of its 95 % confidence interval, t(n-1) * s / sqrt(n) over those n rows (NaN
    for fewer than two: a failed replication is left out); columns ``metric`` and
    ``metric_ci95`` in turn, NaN for a metric the frame lacks. One grouped pass per statistic,
    not a pass per group: a sweep of a thousand points took seconds."""
    metrics = list(metrics)
    present = [metric for metric in metrics if metric in frame]
    grouped = frame.groupby(by, sort=True)[present]
    counts = grouped.count()
    t = counts.map(lambda n: t95(n - 1) if n >= 2 else math.nan)
    half = t * grouped.std(ddof=1) / np.sqrt(counts)
    means = grouped.mean()
    columns = {}
    for metric in metrics:
        columns[metric] = means[metric] if metric in present else math.nan
        columns[f"{metric}_ci95"] = half[metric] if metric in present else math.nan
    return pd.DataFrame(columns, index=means.index, dtype=np.float64)


def _manifest_of(folder: Path) -> dict[str, Any]:
    """A results folder's manifest as far as it can be read (empty where it cannot: what the
    plots read of it, they do without)."""
    try:
        document = json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def recorded_warmup_ms(folder: Path) -> float:
    """The warm-up the study's points share, as its manifest records them (before
    ``warmup: auto``, the study's one), or 0 where they differ or it cannot tell: the plots
    that shade it are drawn all the same."""
    manifest = _manifest_of(folder)
    try:
        warmups = manifest.get("point_warmups_ms") or [manifest["scenario"]["study"]["warmup"]]
        return float(warmups[0]) if len(set(warmups)) == 1 else 0.0
    except (ValueError, KeyError, TypeError):
        return 0.0


def auto_warmups_ms(folder: Path) -> list[float]:
    """Each point's warm-up, by point, where the study's is ``auto`` (else none)."""
    manifest = _manifest_of(folder)
    try:
        auto = manifest["scenario"]["study"]["warmup"] == "auto"
        return [float(ms) for ms in manifest["point_warmups_ms"]] if auto else []
    except (KeyError, TypeError, ValueError):  # (a damaged manifest: nothing to say)
        return []


def recorded_scenario(folder: Path, purpose: str) -> dict[str, Any]:
    """The resolved scenario a results folder's manifest records, or a :class:`ScenarioError`
    naming the manifest and why it gives none: missing, unreadable (a damaged file), or
    recording no scenario. ``purpose`` says what it was wanted for (``to run again``)."""
    manifest = Path(folder) / "manifest.json"
    if problem := file_problem(manifest):  # (missing, or a folder)
        hint = ": not a results folder?" if problem == NO_SUCH_FILE else ""
        raise ScenarioError(str(manifest), f"{problem}{hint}")
    try:
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or err
        raise ScenarioError(str(manifest), f"cannot be read ({reason})") from None
    scenario = document.get("scenario") if isinstance(document, dict) else None
    if not isinstance(scenario, dict):
        raise ScenarioError(str(manifest), f"records no scenario {purpose}")
    return scenario


def study_of(scenario: ScenarioLike, purpose: str) -> tuple[ScenarioLike, Path | None]:
    """``scenario`` as given, or where it names a results folder, the scenario the folder's
    manifest records (:func:`recorded_scenario`, for ``purpose``) and the folder: so a
    command takes the study of a folder whatever its file has become since."""
    if isinstance(scenario, str | os.PathLike) and Path(scenario).is_dir():
        return recorded_scenario(Path(scenario), purpose), Path(scenario)
    return scenario, None


def recorded_inputs(folder: Path) -> dict[str, str]:
    """The digest of each trace and log a study read, by path, as its manifest records them
    (:func:`~nnrpsim.traces.input_digests`; none where it records none)."""
    inputs = _manifest_of(folder).get("inputs")
    return inputs if isinstance(inputs, dict) else {}


COMPLETE = "complete"
"""A study's status once every run it set out to run is written."""
INTERRUPTED = "interrupted (rerun with --resume)"
"""A study's status while it runs (its runs, or a move of them) and once it stopped early."""


def recorded_status(folder: Path) -> str | None:
    """How the study ended, as its manifest records it (``complete``, or how it was
    interrupted); None if it cannot tell."""
    status = _manifest_of(folder).get("status")
    return status if isinstance(status, str) else None


def unfinished_study_note(folder: Path) -> str | None:
    """What to say beside the plots of a study its manifest records as not complete (they
    show its finished runs only); None for a complete study, or one that cannot tell."""
    if (status := recorded_status(folder)) in (None, COMPLETE):
        return None
    return f"{folder}: study {status}; the plots show its finished runs only"


MAX_CHANGES_SHOWN = 3
"""Keys a refused ``--resume`` names of those that differ: enough to see which edit it was."""


_MISSING = object()
"""A key one scenario has and the other lacks (a newer version's): unlike any value."""


def scenario_changes(then: object, now: dict[str, Any]) -> list[str]:
    """Each key whose value differs between a recorded scenario and this one, as
    ``key: <value> there, <value> here`` (none if nothing was recorded)."""
    if not isinstance(then, dict):
        return []
    before, after = _leaf_values(then), _leaf_values(now)
    return [
        f"{key}: {_written(key, before)} there, {_written(key, after)} here"
        for key in _differing(before, after)
    ]


def _differing(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The dotted keys whose leaf values differ (one side may lack them), in ``after``'s
    order, then ``before``'s."""
    keys = dict.fromkeys([*after, *before])
    return [key for key in keys if before.get(key, _MISSING) != after.get(key, _MISSING)]


REPLICATIONS = "study.replications"
RUNS_IGNORE = ("study.description",)
"""Scenario keys no run reads: a resume may change them."""
_SWEPT = ("sweep.grid.", "sweep.zip.")


def _runs_still_hold(then: object, now: dict[str, Any]) -> bool:
    """Whether the runs of the recorded scenario ``then`` are runs of ``now``: nothing a run
    reads changed, but perhaps the number of replications, upwards, and the values of the
    swept keys. Replication r draws the same numbers whatever their count (common random
    numbers, seeded by r alone), so a resume adds the rest; fewer would leave runs there that
    the summary would still count. A point's runs are drawn from its values alone, so a
    resume runs a value added to a list, and finds the runs of the others by their values
    (:mod:`~nnrpsim.renumbering`, which refuses a sweep that lacks a point with runs)."""
    if not isinstance(then, dict):
        return False
    before, after = _leaf_values(then), _leaf_values(now)
    old, new = before.get(REPLICATIONS), after.get(REPLICATIONS)
    kept = isinstance(old, int) and isinstance(new, int) and new >= old
    swept = _swept_alike(before, after)
    return kept and all(
        key in (REPLICATIONS, *RUNS_IGNORE)
        or key in swept
        or any(key.startswith(f"{name}.") for name in swept)
        for key in _differing(before, after)
    )


def _swept_alike(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The keys both scenarios sweep, and sweep alike (in ``grid``, or in ``zip``), each as
    its values (``sweep.grid.topology.gpu_memory``) and as its base value, which every point
    replaces (``topology.gpu_memory``; a section swept whole, every key within it): a key
    swept in one only changes what each point's runs are."""
    alike = {key for key in before.keys() & after.keys() if key.startswith(_SWEPT)}
    return alike | {key.split(".", 2)[2] for key in alike}


def _written(key: str, values: dict[str, Any]) -> str:
    return scenario_text(key, values[key]) if key in values else "absent"


def _leaf_values(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A scenario's values by dotted key (a mapping's entries each one of their own)."""
    leaves: dict[str, Any] = {}
    for name, value in document.items():
        if isinstance(value, dict) and value:
            leaves.update(_leaf_values(value, f"{prefix}{name}."))
        else:
            leaves[f"{prefix}{name}"] = value
    return leaves


def moving_runs_recorded(folder: Path) -> bool:
    """Whether the folder's manifest journals a move of its runs that a stopped resume left
    (the next resume finishes it first: :func:`~nnrpsim.renumbering.finish_move`)."""
    return MOVING in _manifest_of(folder)


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
        (:func:`~nnrpsim.traces.input_digests`)."""
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
        if "\0" in str(self.out):  # (the API's; a command line cannot carry a NUL)
            raise ScenarioError("--out", "must not contain a NUL character")
        try:
            has_runs = finished_runs(self.out) > 0 or runs_moving(self.runs_dir)
        except OSError as err:  # (a name the system refuses: too long, say)
            raise ScenarioError("--out", f"cannot use {self.out}: {err.strerror}") from None
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
        if previous != self.hash and not _runs_still_hold(then, now):
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
            for folder in self._folders:
                folder.mkdir(parents=True, exist_ok=True)
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
        done = {(t.point, t.replication) for t in tasks if self.done(t.point, t.replication)}
        moved = {new for _, new in self._renumbering.moves} if self._renumbering else set()
        return done, sum(point in moved for point, _ in done)

    def done(self, point: int, replication: int) -> bool:
        """A run that finished without error; failed runs, and runs whose files were damaged
        after they were written, are run again on resume (and their files replaced)."""
        if self._renumbering is not None:  # (until the runs move, at their recorded points)
            recorded_point = self._renumbering.there.get(point)
            if recorded_point is None:  # (a point the recorded sweep did not list)
                return False
            point = recorded_point
        stem = run_stem(point, replication)
        try:
            record = read_run_file(run_path(self.runs_dir, stem))
            error = record.column("error") if "error" in record.column_names else None
            finished = error is not None and error.null_count == len(error)
            for folder in self.table_dirs.values():
                if finished and (path := run_path(folder, stem)).is_file():
                    read_run_file(path)  # damaged: the run is done again
        except ScenarioError:  # missing or damaged
            return False
        return finished

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


def with_derived_metrics(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with ``wire_saving``, derived from their ``wire_bytes``,
    ``wire_bytes_resent`` and ``wire_bytes_saved``, beside them: for every run, those an
    earlier version wrote too (resumed, or compared; one that counted no resent bytes, before
    2026-12-05, as if none were), and none for a failed run."""
    if runs.empty or "wire_bytes_saved" not in runs:
        return runs
    resent = runs["wire_bytes_resent"].fillna(0.0) if "wire_bytes_resent" in runs else 0.0
    saving = wire_saving(runs["wire_bytes"], runs["wire_bytes_saved"], resent)
    runs = runs.drop(columns="wire_saving", errors="ignore")
    runs.insert(runs.columns.get_loc("wire_bytes_saved") + 1, "wire_saving", saving)
    return runs


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point: swept parameters (its first run's), the count of replications
    that finished and of those that failed, then each metric's mean and ``_ci95`` over those
    that finished."""
    if runs.empty:
        return pd.DataFrame()
    params = run_params(runs)
    firsts = runs.drop_duplicates("point").set_index("point").sort_index()
    ok = runs[runs["error"].isna()]
    good = ok.groupby("point").size().reindex(firsts.index, fill_value=0)
    counts = pd.DataFrame({"replications": good, "failures": runs.groupby("point").size() - good})
    stats = means_and_intervals(ok, ["point"], METRICS).reindex(firsts.index)
    summary = pd.concat([firsts[params], counts, stats], axis=1).rename_axis("point")
    return summary.reset_index().astype({"point": np.int64})


def run_params(runs: pd.DataFrame) -> list[str]:
    """The swept keys of a runs table: its columns but a run's own and its metrics."""
    reserved = {"point", "replication", "seed", "error", "wall_s", *METRICS}
    return [column for column in runs.columns if column not in reserved]


def swept_columns(summary: pd.DataFrame) -> list[str]:
    """The swept keys of a summary: its columns between ``point`` and ``replications``, as
    :func:`summarize` lays them out (``engine`` among them, a key without a dot)."""
    return list(summary.columns[1 : summary.columns.get_loc("replications")])


def summarize_kinds(kinds: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point and object kind: the point's swept parameters, then each of the
    :data:`KIND_METRICS`' mean over the replications and ``_ci95`` (empty without runs)."""
    if kinds.empty:
        return pd.DataFrame()
    params = swept_columns(summary)
    stats = means_and_intervals(kinds, ["point", "kind"], KIND_METRICS).reset_index()
    return summary[["point", *params]].merge(stats.astype({"point": np.int64}), on="point")
