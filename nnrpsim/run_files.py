"""A study's files on disk, one run at a time: each run's record and long tables are files of
their own, named by the run's point and replication (``p0003-r001.arrow``), written whole or
not at all, so an interrupted study keeps every run it finished."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .scenario import ScenarioError


def atomic_write(path: Path, write) -> None:
    """Write through ``write(temporary_path)``, then rename over ``path``; a write or rename
    that fails (or is interrupted) leaves no temporary file behind."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


RUN_FILE = ".arrow"
"""A finished run's files are Arrow IPC: a Parquet file of a run's small tables took 1-2 ms to
write, most of it the writer's setup, an Arrow file 0.3-0.5 ms (a sweep of short runs wrote
them in the main process for as long as its workers ran); the study's tables stay Parquet."""
OLDER_RUN_FILE = ".parquet"
"""What earlier versions (to 2026-12-03, CHANGES.md) wrote a run to: read on ``--resume`` too."""


def run_stem(point: int, replication: int, prefix: str = "p") -> str:
    """A run's files' name but their format: ``p0003-r001``, its point, then its replication
    (``q``: a run a move has yet to write at its new number, :mod:`~nnrpsim.renumbering`)."""
    return f"{prefix}{point:04d}-r{replication:03d}"


def stem_numbers(path: Path) -> tuple[int, int]:
    """The point and replication a run's file is named by (:func:`run_stem`)."""
    point, replication = path.stem[1:].split("-r")
    return int(point), int(replication)


def write_run_file(path: Path, table: pa.Table) -> None:
    def write(temporary: Path) -> None:
        with pa.OSFile(str(temporary), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)

    atomic_write(path, write)


def write_json(path: Path, document: dict) -> None:
    atomic_write(path, lambda p: p.write_text(json.dumps(document, indent=2, default=str) + "\n"))


READ_BATCH = 256
"""Run files read before they are joined into one table: each file's table keeps a schema of
its own, about 30 kB for a run's record. Reading the records of 10,000 runs took 340 MB
more memory at once, and 27 MB in batches of this size."""


def read_all(folder: Path) -> pd.DataFrame:
    """Every run's table in ``folder``, in one frame: read by pyarrow and joined before pandas
    sees them (a file at a time through pandas took 3 ms a run), :data:`READ_BATCH` at a
    time; a column some runs lack (a failed run has no metrics) is null in theirs, and an int
    column with floats is float."""
    files = run_files(folder)
    if not files:
        return pd.DataFrame()
    batches = [
        _joined(
            [read_run_file(path) for path in files[start : start + READ_BATCH]]
        ).combine_chunks()
        for start in range(0, len(files), READ_BATCH)
    ]
    return _joined(batches).to_pandas()


def _joined(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables, promote_options="permissive")


def finished_runs(out: Path) -> int:
    """How many runs a study's folder holds: an interrupted study's, which has no summary
    yet, as well as a finished one's."""
    return len(run_files(Path(out) / "runs"))


def run_files(folder: Path) -> list[Path]:
    """Each run's file in ``folder``, in run order: this version's, or an earlier version's
    where the run has no other (a run an earlier version wrote, kept on ``--resume``)."""
    newest = {path.stem: path for path in folder.glob(f"p*{OLDER_RUN_FILE}")}
    newest.update((path.stem, path) for path in folder.glob(f"p*{RUN_FILE}"))
    return [newest[stem] for stem in sorted(newest)]


def run_path(folder: Path, stem: str) -> Path:
    """A run's file in ``folder`` as :func:`run_files` picks it (this version's if neither)."""
    path = folder / f"{stem}{RUN_FILE}"
    older = folder / f"{stem}{OLDER_RUN_FILE}"
    return older if not path.is_file() and older.is_file() else path


def read_run_file(path: Path) -> pa.Table:
    """One run's table as pyarrow reads it; a missing or damaged one is bad input, named with
    its path (as :func:`~nnrpsim.results.read_table` names it)."""
    try:
        if path.suffix == OLDER_RUN_FILE:
            with pq.ParquetFile(path) as file:
                return file.read()
        with pa.OSFile(str(path)) as source:
            return pa.ipc.open_file(source).read_all()
    except (OSError, ValueError) as err:
        raise unreadable(path, err) from None


def unreadable(path: Path, err: Exception) -> ScenarioError:
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return ScenarioError(str(path), f"not a readable results table ({reason})")
