"""Trace loading, for any valid log: references in time order from zero, one dense id per
object, each object at its largest size, and CSV, Parquet and Mooncake views agreeing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.protocol import U32_MAX, CacheObjectKind
from nnrpsim.scenario.schema import Trace
from nnrpsim.traces import TraceError, load_trace

ROWS = st.lists(
    st.tuples(
        st.integers(0, 10**9),
        st.sampled_from(["a", "b", "tool:1", "prompt 2", "7", "007", "NA", "null"]),
        st.integers(0, U32_MAX),  # (object_bytes is a u32)
    ),
    min_size=1,
    max_size=40,
)


def _check(stream, times, objects, sizes, time_scale=1.0):
    order = np.argsort(times, kind="stable")
    expected_times = np.round((times[order] - times.min()) * time_scale).astype(np.int64)
    assert stream.time_ms.tolist() == expected_times.tolist()
    ids = stream.object_id
    assert sorted(set(ids.tolist())) == list(range(len(set(objects.tolist()))))
    by_name = dict(zip(objects[order].tolist(), ids.tolist(), strict=True))
    assert [by_name[name] for name in objects[order].tolist()] == ids.tolist()  # one id each
    for name, obj in by_name.items():
        assert (stream.size[ids == obj] == sizes[objects == name].max()).all()


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, time_scale=st.sampled_from([1.0, 0.5, 1000.0]))
def test_reference_logs_load_the_same_from_csv_and_parquet(rows, time_scale):
    log = pd.DataFrame(rows, columns=["time_ms", "object", "size_bytes"])
    with tempfile.TemporaryDirectory() as folder:
        csv, parquet = Path(folder) / "log.csv", Path(folder) / "log.parquet"
        log.to_csv(csv, index=False)
        log.to_parquet(parquet)
        streams = [load_trace(Trace(path=str(p), time_scale=time_scale)) for p in (csv, parquet)]
    times, objects = log["time_ms"].to_numpy(), log["object"].astype(str).to_numpy()
    for stream in streams:
        _check(stream, times.astype(np.float64), objects, log["size_bytes"].to_numpy(), time_scale)
    assert streams[0].object_id.tolist() == streams[1].object_id.tolist()
    assert streams[0].operation_bounds().tolist() == list(range(len(rows) + 1))  # a row each


@settings(max_examples=40, deadline=None)
@given(rows=ROWS)
def test_a_reference_log_groups_rows_into_operations(rows):
    """Rows sharing ``operation`` are one operation, wherever they are in the file."""
    log = pd.DataFrame(rows, columns=["time_ms", "object", "size_bytes"])
    log["operation"] = [f"request at {t}" for t in log["time_ms"]]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.csv"
        log.sample(frac=1.0, random_state=0).to_csv(path, index=False)
        stream = load_trace(Trace(path=str(path)))
    sizes = log.groupby("time_ms").size().sort_index().tolist()  # one operation per time
    assert np.diff(stream.operation_bounds()).tolist() == sizes


def _request(when: int, blocks: list[int], last_block_tokens: int) -> tuple[int, int, list[int]]:
    """A Mooncake request whose input_length makes as many 512-token blocks as it has hash ids
    (a request of another length is refused: see test_scenario_errors)."""
    return when, (len(blocks) - 1) * 512 + last_block_tokens if blocks else 0, blocks


def test_operation_names_are_text(tmp_path):
    """``007`` and ``7`` are two operations, as they are two objects (read as numbers, they
    were one operation at two times: an error)."""
    path = tmp_path / "log.csv"
    path.write_text("time_ms,object,size_bytes,operation\n1,a,3,007\n2,b,3,7\n3,c,3,007\n")
    with pytest.raises(TraceError, match="row 2: an operation's rows must share time_ms"):
        load_trace(Trace(path=str(path)))
    path.write_text("time_ms,object,size_bytes,operation\n1,a,3,007\n1,c,3,007\n2,b,3,7\n")
    assert np.diff(load_trace(Trace(path=str(path))).operation_bounds()).tolist() == [2, 1]


@settings(max_examples=60, deadline=None)
@given(
    requests=st.lists(
        st.builds(
            _request,
            st.integers(0, 10**7),
            # (a whole number written as a float, 3.0, is the integer's block; JSON's integers
            # may be negative, or wider than 64 bits, and 2**64 + 3 is not 3)
            st.lists(
                st.integers(0, 5).flatmap(
                    lambda b: st.sampled_from([b, float(b), -b, 2**64 + b, 2**63 - 1 - b])
                ),
                max_size=6,
            ),
            st.integers(1, 512),
        ),
        min_size=1,
        max_size=20,
    ).filter(lambda rs: any(blocks for _, _, blocks in rs))
)
def test_mooncake_blocks_are_objects_by_position_and_hash(requests):
    block_tokens, per_token = 512, 10
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text(
            "".join(
                json.dumps({"timestamp": t, "input_length": n, "hash_ids": b}) + "\n"
                for t, n, b in requests
            )
        )
        stream = load_trace(
            Trace(path=str(path), block_tokens=block_tokens, kv_bytes_per_token=per_token)
        )
    times, objects, sizes = [], [], []
    for when, tokens, blocks in requests:
        for position, block in enumerate(blocks):
            times.append(when)
            objects.append(f"{position}:{int(block)}")
            sizes.append(min(block_tokens, tokens - position * block_tokens) * per_token)
    _check(stream, np.asarray(times, np.float64), np.asarray(objects), np.asarray(sizes))
    # A request is one operation: its blocks, together, in time order (ties in file order).
    order = sorted((when, line) for line, (when, _, blocks) in enumerate(requests) if blocks)
    blocks_per_request = [len(requests[line][2]) for _, line in order]
    assert np.diff(stream.operation_bounds()).tolist() == blocks_per_request


@settings(max_examples=40, deadline=None)
@given(rows=ROWS, by_name=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_a_reference_logs_kinds_follow_their_objects(rows, by_name, seed):
    """Each object keeps the kind its rows give it, by name or code, from CSV and Parquet."""
    log = pd.DataFrame(rows, columns=["time_ms", "object", "size_bytes"])
    names = sorted(set(log["object"]))
    kind_of = dict(zip(names, np.random.default_rng(seed).integers(1, 10, len(names)), strict=True))
    codes = log["object"].map(kind_of)
    log["kind"] = codes.map(lambda c: CacheObjectKind(c).name.lower()) if by_name else codes
    with tempfile.TemporaryDirectory() as folder:
        csv, parquet = Path(folder) / "log.csv", Path(folder) / "log.parquet"
        log.to_csv(csv, index=False)
        log.to_parquet(parquet)
        streams = [load_trace(Trace(path=str(p))) for p in (csv, parquet)]
    order = np.argsort(log["time_ms"].to_numpy(), kind="stable")
    for stream in streams:
        expected = log["object"].to_numpy()[order]
        got = stream.object_kind[stream.object_id]
        assert got.tolist() == [kind_of[name] for name in expected]


def test_a_kind_is_read_in_any_case_with_spaces_around_it(tmp_path):
    """As a hand-written CSV gives them: a space after the comma, a name in capitals."""
    log = tmp_path / "log.csv"
    log.write_text(
        "time_ms,object,size_bytes,kind\n0,a,10, Tool_Schema\n1,b,10,PROMPT_SEGMENT \n2,c,10, 3\n"
    )
    stream = load_trace(Trace(path=str(log)))
    kinds = [CacheObjectKind.TOOL_SCHEMA, CacheObjectKind.PROMPT_SEGMENT, 3]
    assert stream.object_kind[stream.object_id].tolist() == kinds
