"""Trace loaders: real request logs become reference streams of dense object ids.

- Mooncake JSONL (``timestamp`` ms, ``input_length`` tokens, ``hash_ids``): every 512-token prefix
  block is a cache object, identified by its position and hash id; its size is its tokens times
  the KV-cache bytes per token (the last block of a prompt may be partial). A request, with all
  its blocks, is one operation. Its hash ids must be as many as its length makes blocks.
- A generic CSV or Parquet reference log with columns ``time_ms``, ``object`` and ``size_bytes``,
  and optionally ``operation``: rows with the same value are one operation and must share a
  time (without it every row is its own operation); and optionally ``kind``: the object's kind,
  a name such as ``tool_schema`` or a code 1-9, the same on every row of an object (without it
  every object is a prompt segment).
- Session arrivals: a CSV or Parquet log whose one column gives arrival times, as datetimes
  (Azure's LLM inference trace, ``TIMESTAMP``) or milliseconds.
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from itertools import repeat
from pathlib import Path

import numpy as np
import pandas as pd

from .display_units import counted
from .engine.stream import ReferenceStream
from .json_objects import once_each
from .paths import file_problem
from .protocol import U32_MAX, CacheObjectKind
from .quoted import quoted
from .scenario import ScenarioError
from .scenario.schema import Arrivals, Trace

REFERENCE_LOG_COLUMNS = ("time_ms", "object", "size_bytes")
KIND_CODES = {kind.name.lower(): int(kind) for kind in CacheObjectKind}


class TraceError(ScenarioError):
    """A trace that cannot be read: names the file (and line or column) and the reason."""


ARRIVALS = "workload.sessions.arrivals"


def load_arrivals(spec: Arrivals) -> np.ndarray:
    """Arrival times in ms, sorted, from 0, scaled by ``time_scale``: read once for each
    version of the file (a sweep's points and the checks before it ask for one log again and
    again, 40 ms a read for Azure's; a notebook may rewrite it between runs)."""
    path = Path(spec.path)
    if problem := file_problem(path):
        raise TraceError(f"{ARRIVALS}.path", f"{problem}: {path}")
    version = path.stat()
    return _read_arrivals(spec, (version.st_mtime_ns, version.st_size))


@functools.lru_cache(maxsize=8)
def _read_arrivals(spec: Arrivals, _version: tuple[int, int]) -> np.ndarray:
    path, where = Path(spec.path), ARRIVALS
    fmt = {".csv": "csv", ".parquet": "parquet"}.get(path.suffix.lower())
    if fmt is None:
        raise TraceError(f"{where}.path", f"not a .csv or .parquet file: {path.name}")
    frame = _read_table(path, fmt)
    _check_columns(frame, path, (spec.column,), f" ({where}.column)")
    if frame.empty:
        raise TraceError(str(path), "the log has no rows")
    times = _milliseconds(frame[spec.column])
    if (bad := np.flatnonzero(~np.isfinite(times))).size:
        raise TraceError(
            f"{path.name}:{spec.column}", f"row {int(bad[0])}: not a time (datetime or ms)"
        )
    _check_span(times, spec.time_scale, path, "arrivals span", where)
    times = np.sort(times - times.min()) * spec.time_scale
    times.flags.writeable = False  # runs in one process share it
    return times


def _check_span(times: np.ndarray, time_scale: float, path: Path, what: str, where: str) -> None:
    """Refuses a log whose times, scaled, do not fit the int64 milliseconds a run keeps, naming
    the key that scales them (times in nanoseconds read as milliseconds, or a time_scale of
    1e300). Worked out in Python's floats, which overflow to inf without a word: numpy's
    would print a RuntimeWarning above the one line of the error."""
    if not (float(times.max()) - float(times.min())) * time_scale < 2.0**63:
        raise TraceError(
            str(path),
            f"the {what} more milliseconds than an int64 holds, at time_scale {time_scale:g} "
            f"({where}.time_scale scales its times)",
        )


def _milliseconds(column: pd.Series) -> np.ndarray:
    """Numbers are milliseconds, if the column holds any; otherwise its values must be
    datetimes (with time zones, instants). NaN where a value is not a time."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().any() and not pd.api.types.is_bool_dtype(column):
        return numbers.to_numpy(np.float64, na_value=np.nan)
    stamps = pd.to_datetime(column, errors="coerce", format="ISO8601", utc=True)
    seconds = (stamps - stamps.min()).dt.total_seconds()
    return seconds.to_numpy(np.float64, na_value=np.nan) * 1000.0


def load_trace(spec: Trace) -> ReferenceStream:
    """A trace's reference stream, read once for each version of the file, as
    :func:`load_arrivals` reads a log (the check before a study and its runs in one process
    share it; a run takes its window with ``before``)."""
    return _loaded(spec)[0]


def resized_objects(spec: Trace) -> int:
    """How many of a trace's objects it references with several sizes (each replays at its
    largest: see :func:`load_trace`)."""
    return _loaded(spec)[1]


def _loaded(spec: Trace) -> tuple[ReferenceStream, int]:
    path = Path(spec.path)
    if problem := file_problem(path):
        raise TraceError("workload.trace.path", f"{problem}: {path}")
    version = path.stat()
    return _read_trace(spec, (version.st_mtime_ns, version.st_size))


@functools.lru_cache(maxsize=4)
def _read_trace(spec: Trace, _version: tuple[int, int]) -> tuple[ReferenceStream, int]:
    path, fmt = Path(spec.path), spec.read_as
    if fmt is None:
        raise TraceError("workload.trace.format", f"cannot tell the format of {path.name}")
    kinds = None
    if fmt == "mooncake":
        times, objects, sizes, operations = _mooncake(path, spec)
    else:
        times, objects, sizes, operations, kinds = _reference_log(path, fmt)
    _check_span(times, spec.time_scale, path, "trace spans", "workload.trace")
    order = np.lexsort((operations, times))  # by time; an operation's references together
    times = np.round((times[order] - times.min()) * spec.time_scale).astype(np.int64)
    # numbered by first appearance in time: the file's own order's numbers, renumbered
    # (factorizing the names in time order copied millions of them first)
    object_ids, uniques = pd.factorize(pd.factorize(objects)[0][order])
    per_object = np.zeros(len(uniques), dtype=np.int64)
    np.maximum.at(per_object, object_ids, sizes[order])  # one size per object: its largest
    least = np.full(len(uniques), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(least, object_ids, sizes[order])
    object_kind = None
    if kinds is not None:
        object_kind = np.zeros(len(uniques), dtype=np.uint8)
        object_kind[object_ids] = kinds[order]
    stream = ReferenceStream(
        times,
        object_ids,
        per_object[object_ids],
        operation=operations[order],
        object_kind=object_kind,
    )
    return stream, int(np.count_nonzero(least != per_object))


def _mooncake(path: Path, spec: Trace):
    times, positions, hashes, sizes, requests = [], [], [], [], []
    with path.open("rb") as lines:  # bytes: json reads them, and a bad byte names its line
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                when, tokens, blocks = _mooncake_request(line)
            except (ValueError, OverflowError) as err:  # overflow: beyond a float's range
                raise TraceError(
                    f"{path.name}:{number}", f"not a Mooncake request ({err})"
                ) from None
            if len(blocks) != (whole := -(-tokens // spec.block_tokens)):
                raise TraceError(  # a wrong block size would size every block wrong, silently
                    f"{path.name}:{number}",
                    f"{len(blocks):,} hash_ids, but an input_length of {tokens:,} tokens makes "
                    f"{counted(whole, 'block')} of {spec.block_tokens:,} "
                    "(workload.trace.block_tokens must be the trace's block size)",
                )
            if not blocks:
                continue
            # every block full but the last, which holds the tokens left
            sizes.extend(repeat(spec.block_tokens * spec.kv_bytes_per_token, len(blocks) - 1))
            sizes.append((tokens - (len(blocks) - 1) * spec.block_tokens) * spec.kv_bytes_per_token)
            positions.extend(range(len(blocks)))
            hashes.extend(blocks)
            times.extend(repeat(when, len(blocks)))
            requests.extend(repeat(number, len(blocks)))
    if not times:
        raise TraceError(str(path), "the trace has no block references")
    return (
        np.asarray(times, dtype=np.float64),
        _block_keys(np.asarray(positions, np.int64), hashes),
        np.asarray(sizes, np.int64),
        np.asarray(requests, np.int64),
    )


def _block_keys(positions: np.ndarray, hashes: list[int]) -> np.ndarray:
    """One int64 for each distinct (position, hash id) pair, which is what names a block: the
    same hash id at another position is another prefix. (Built as text, ``"3:123"``, the
    names took a third of the time a trace takes to read.)"""
    try:
        hash_ids = np.asarray(hashes, dtype=np.int64)
    except OverflowError:  # a hash id beyond 64 bits, as JSON allows: compared as Python's ints
        hash_ids = np.asarray(hashes, dtype=object)
    dense = pd.factorize(hash_ids)[0].astype(np.int64)
    # (both factors are below the number of references, so their product fits an int64)
    return dense * (int(positions.max()) + 1) + positions


def _mooncake_request(line: bytes) -> tuple[float, int, list[int]]:
    """``timestamp``, ``input_length`` and ``hash_ids`` of one JSONL line, or ValueError."""
    row = json.loads(line, object_pairs_hook=once_each)
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    for field in ("timestamp", "input_length", "hash_ids"):
        if field not in row:
            raise ValueError(f"no {field!r}")
    when, tokens, blocks = row["timestamp"], row["input_length"], row["hash_ids"]
    if not _is_finite(when):
        raise ValueError("'timestamp' must be a finite number")
    if not _is_whole(tokens) or tokens < 0:
        raise ValueError("'input_length' must be a whole number >= 0")
    if not isinstance(blocks, list) or (blocks := _integers(blocks)) is None:
        raise ValueError("'hash_ids' must be a list of integers")
    return float(when), int(tokens), blocks


def _integers(values: list) -> list[int] | None:
    """``values`` as ints where each is a whole number, else None."""
    if set(map(type, values)) <= {int}:  # (as JSON's integers read: at C speed; a bool's is not)
        return values
    return [int(value) for value in values] if all(map(_is_whole, values)) else None


def _is_finite(value) -> bool:
    """A JSON number (not a boolean) that is neither NaN nor infinite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value) -> bool:
    return _is_finite(value) and value == int(value)


def _read_table(path: Path, fmt: str) -> pd.DataFrame:
    try:
        if fmt == "parquet":
            return pd.read_parquet(path)
        with warnings.catch_warnings():
            # a row longer than the header: pandas took its first fields for an index and read
            # the rest into the columns one place along; without an index, it warns instead
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # names stay text: "007" is not "7", and "NA" is a name, not missing
            names = {"object": str, "operation": str}
            return pd.read_csv(path, dtype=names, keep_default_na=False, index_col=False)
    except pd.errors.ParserWarning:
        raise TraceError(str(path), "a row has more fields than the header has names") from None
    except Exception as err:  # pandas raises many kinds; all mean "not a readable log"
        raise TraceError(str(path), f"cannot read {fmt}: {str(err).splitlines()[0]}") from None


def _check_columns(
    frame: pd.DataFrame,
    path: Path,
    needed: tuple[str, ...],
    missing_where: str = "",
    read_too: tuple[str, ...] = (),
) -> None:
    """Each ``needed`` column there, and none of the columns read given twice: pandas renames
    a second ``size_bytes`` to ``size_bytes.1`` and reads the first, without a word."""
    for column in needed:
        if column not in frame.columns:
            raise TraceError(path.name, f"missing column {quoted(column)}{missing_where}")
    for column in (*needed, *read_too):
        if column in frame.columns and f"{column}.1" in frame.columns:
            raise TraceError(path.name, f"column {quoted(column)} given twice")


def _reference_log(path: Path, fmt: str):
    frame = _read_table(path, fmt)
    _check_columns(frame, path, REFERENCE_LOG_COLUMNS, read_too=("operation", "kind"))
    if frame.empty:
        raise TraceError(str(path), "the log has no rows")
    numeric = {}
    for column in ("time_ms", "size_bytes"):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        bad = ~np.isfinite(values) | (values < 0) | (values >= 2.0**63)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise TraceError(
                f"{path.name}:{column}", f"row {row}: must be a finite number in [0, 2**63)"
            )
        numeric[column] = values
    if (too_large := np.flatnonzero(numeric["size_bytes"] > U32_MAX)).size:
        raise TraceError(
            f"{path.name}:size_bytes",
            f"row {int(too_large[0])}: must be at most {U32_MAX:,} bytes (object_bytes is a u32)",
        )
    if (fractional := np.flatnonzero(numeric["size_bytes"] % 1)).size:
        raise TraceError(
            f"{path.name}:size_bytes", f"row {int(fractional[0])}: must be a whole number of bytes"
        )
    objects = _names(frame, "object", path)
    times = numeric["time_ms"]
    if "operation" not in frame.columns:
        operations = np.arange(len(frame), dtype=np.int64)
    else:
        operations = pd.factorize(_names(frame, "operation", path))[0].astype(np.int64)
        first_time = pd.Series(times).groupby(operations).transform("first").to_numpy()
        if (apart := np.flatnonzero(first_time != times)).size:
            raise TraceError(
                f"{path.name}:operation",
                f"row {int(apart[0])}: an operation's rows must share time_ms",
            )
    kinds = None if "kind" not in frame.columns else _kinds(frame["kind"], objects, path)
    return times, objects, numeric["size_bytes"].astype(np.int64), operations, kinds


def _names(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    """A column of names as text. A name may be any text ("NA" too), but not none: an empty
    cell (or a Parquet null) is a hole in the log, which would otherwise pool every such row
    into one hot object, or one operation."""
    names = frame[column].astype(str)
    empty = frame[column].isna().to_numpy() | (names == "").to_numpy()
    if empty.any():
        raise TraceError(f"{path.name}:{column}", f"row {int(np.flatnonzero(empty)[0])}: empty")
    return names.to_numpy()


def _kinds(column: pd.Series, objects: np.ndarray, path: Path) -> np.ndarray:
    """Per row, the kind code of a ``kind`` column of names or codes, one kind per object."""
    text = column.astype(str).str.strip().str.lower()
    numbers = pd.to_numeric(text, errors="coerce")
    codes = text.map(KIND_CODES).fillna(numbers.where(numbers.isin(range(1, 10))))
    if (bad := np.flatnonzero(codes.isna().to_numpy())).size:
        row = int(bad[0])
        raise TraceError(
            f"{path.name}:kind",
            f"row {row}: {quoted(str(column.iloc[row]))} is not an object kind (a name such as "
            "tool_schema, or a code 1-9)",
        )
    codes = codes.to_numpy(np.int64)
    first = pd.Series(codes).groupby(objects).transform("first").to_numpy()
    if (apart := np.flatnonzero(first != codes)).size:
        row = int(apart[0])
        raise TraceError(
            f"{path.name}:kind", f"row {row}: object {quoted(objects[row])} has another kind above"
        )
    return codes
