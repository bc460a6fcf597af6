"""Trace loaders: real request logs become reference streams of dense object ids.

- Mooncake JSONL (``timestamp`` ms, ``input_length`` tokens, ``hash_ids``): every 512-token prefix
  block is a cache object, identified by its position and hash id; its size is its tokens times
  the KV-cache bytes per token (the last block of a prompt may be partial).
- A generic CSV or Parquet reference log with columns ``time_ms``, ``object`` and ``size_bytes``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .engine.stream import ReferenceStream
from .scenario import ScenarioError
from .scenario.schema import Trace

REFERENCE_LOG_COLUMNS = ("time_ms", "object", "size_bytes")


class TraceError(ScenarioError):
    """A trace that cannot be read: names the file (and line or column) and the reason."""


def load_trace(spec: Trace) -> ReferenceStream:
    path = Path(spec.path)
    if not path.is_file():
        raise TraceError("workload.trace.path", f"no such file: {path}")
    fmt = spec.format
    if fmt == "auto":
        fmt = {".jsonl": "mooncake", ".csv": "csv", ".parquet": "parquet"}.get(path.suffix.lower())
        if fmt is None:
            raise TraceError("workload.trace.format", f"cannot tell the format of {path.name}")
    if fmt == "mooncake":
        times, objects, sizes = _mooncake(path, spec)
    else:
        times, objects, sizes = _reference_log(path, fmt)
    order = np.argsort(times, kind="stable")
    times = np.round((times[order] - times.min()) * spec.time_scale).astype(np.int64)
    object_ids, uniques = pd.factorize(pd.Series(objects[order]))
    per_object = np.zeros(len(uniques), dtype=np.int64)
    np.maximum.at(per_object, object_ids, sizes[order])  # one size per object: its largest
    return ReferenceStream(times, object_ids, per_object[object_ids])


def _mooncake(path: Path, spec: Trace):
    times, objects, sizes = [], [], []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                when, tokens, blocks = (
                    float(row["timestamp"]),
                    int(row["input_length"]),
                    row["hash_ids"],
                )
            except (ValueError, KeyError, TypeError) as err:
                raise TraceError(
                    f"{path.name}:{number}", f"not a Mooncake request ({err})"
                ) from None
            for position, block in enumerate(blocks):
                block_tokens = min(spec.block_tokens, tokens - position * spec.block_tokens)
                times.append(when)
                objects.append(f"{position}:{block}")
                sizes.append(max(block_tokens, 1) * spec.kv_bytes_per_token)
    if not times:
        raise TraceError(str(path), "the trace has no block references")
    return np.asarray(times, dtype=np.float64), np.asarray(objects), np.asarray(sizes, np.int64)


def _reference_log(path: Path, fmt: str):
    try:
        frame = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
    except Exception as err:  # pandas raises many kinds; all mean "not a readable log"
        raise TraceError(str(path), f"cannot read {fmt}: {str(err).splitlines()[0]}") from None
    for column in REFERENCE_LOG_COLUMNS:
        if column not in frame.columns:
            raise TraceError(f"{path.name}", f"missing column {column!r}")
    if frame.empty:
        raise TraceError(str(path), "the log has no rows")
    numeric = {}
    for column in ("time_ms", "size_bytes"):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | (values < 0)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise TraceError(f"{path.name}:{column}", f"row {row}: must be a number >= 0")
        numeric[column] = values.to_numpy()
    objects = frame["object"].astype(str).to_numpy()
    return numeric["time_ms"].astype(np.float64), objects, numeric["size_bytes"].astype(np.int64)
