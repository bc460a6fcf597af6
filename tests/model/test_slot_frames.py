"""A request that names two objects of a kind with an ``object_ref_mask`` slot is as many
FRAME_SUBMITs as NNRP/1 needs to carry it (one object of each such kind a frame, spec section
13): split in the plan, so both engines run those frames."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnrpsim.engine import ObjectCatalog
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.metrics import des_metrics
from nnrpsim.model import (
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    SessionPlan,
    WorkloadConfig,
    WorkloadPlan,
    simulate,
    synthetic_plan,
)
from nnrpsim.model.slot_frames import object_slots, slot_counts, slot_frames, slot_shares
from nnrpsim.model.workload import spread_kinds, stream_plan
from nnrpsim.protocol import OBJECT_REF_SLOTS, CacheObjectKind, MessageType, packet_bytes
from nnrpsim.protocol import frame_submit_bytes as submit_bytes
from nnrpsim.vector_run import vector_run

CAMERA, TABLE = int(CacheObjectKind.CAMERA_BLOCK), int(CacheObjectKind.TENSOR_SECTION_TABLE)
PROMPT, TOOL = int(CacheObjectKind.PROMPT_SEGMENT), int(CacheObjectKind.TOOL_SCHEMA)
SLOTTED = {int(kind) for kind in OBJECT_REF_SLOTS}


@given(
    slots=st.lists(st.integers(-1, 3), min_size=1, max_size=12),
    requests=st.lists(st.lists(st.integers(0, 11), max_size=10), max_size=6),
)
def test_each_frame_carries_one_object_a_slot_and_every_object_once(slots, requests):
    operations = [
        (float(t), list(dict.fromkeys(obj % len(slots) for obj in objs)))
        for t, objs in enumerate(requests)
    ]
    framed = slot_frames(operations, slots)
    for at, objects in operations:
        frames = [frame for t, frame in framed if t == at]
        lanes = [sum(slots[obj] == slot for obj in objects) for slot in range(4)]
        assert len(frames) == max(1, *lanes)
        for frame in frames:
            assert all(sum(slots[obj] == slot for obj in frame) <= 1 for slot in range(4))
            # (each frame keeps the request's order)
            assert frame == [obj for obj in objects if obj in frame]
        assert sorted(obj for frame in frames for obj in frame) == sorted(objects)
        assert all(slots[obj] >= 0 for frame in frames[1:] for obj in frame)
        if len(frames) == 1:
            assert frames[0] is objects  # (kept as it was)


@given(
    weights=st.lists(st.integers(1, 9), min_size=1, max_size=9),
    n=st.integers(0, 300),
)
def test_the_kinds_shares_bound_the_objects_of_each_slotted_kind(weights, n):
    """A run's size counts a request's frames from the shares alone (spreading the kinds of
    ten billion objects would take 80 GB)."""
    mix = tuple((kind, float(w)) for kind, w in zip(range(1, 10), weights, strict=False))
    kinds = spread_kinds(mix, n)
    counts = slot_counts(kinds, np.ones(n))
    assert counts.tolist() == [int((kinds == kind).sum()) for kind in OBJECT_REF_SLOTS]
    assert (counts <= np.ceil(n * slot_shares(mix))).all()


def test_a_catalog_without_a_slotted_kind_is_left_alone():
    assert object_slots(np.array([PROMPT, TOOL, 4, 5, 9])) is None
    assert object_slots(np.array([PROMPT, CAMERA, TABLE])) == [-1, 0, 2]


def test_a_drawn_plan_is_the_same_requests_in_frames(monkeypatch):
    """The plan of slotted kinds is the plan drawn as before, its requests that name two
    objects of a slotted kind split into frames."""
    workload = WorkloadConfig(
        session_rate_per_s=0.2,
        private_objects_per_session=8,
        private_refs_per_operation=3,
        private_kinds=((PROMPT, 1.0), (TABLE, 1.0)),
        shared_kinds=((PROMPT, 1.0), (CAMERA, 1.0)),
    )
    framed = synthetic_plan(workload, 2, 120_000, np.random.SeedSequence(5))
    monkeypatch.setattr("nnrpsim.model.workload.object_slots", lambda kinds: None)
    plain = synthetic_plan(workload, 2, 120_000, np.random.SeedSequence(5))
    kinds = framed.catalog.kind
    split = 0
    for ours, theirs in zip(framed.sessions, plain.sessions, strict=True):
        for _, objects in ours.operations:
            slotted_kinds = [int(kinds[obj]) for obj in objects if int(kinds[obj]) in SLOTTED]
            assert len(slotted_kinds) == len(set(slotted_kinds))
        merged: dict[float, list[int]] = {}
        for at, objects in ours.operations:
            merged.setdefault(at, []).extend(objects)
        assert {at: sorted(o) for at, o in merged.items()} == dict(theirs.operations)
        split += len(ours.operations) - len(theirs.operations)
    assert split > 100


def test_a_logs_request_is_split_into_frames():
    """Request 1 names camera blocks a and b and prompt p; request 2 camera c and tables t
    and u."""
    a, b, p, c, t, u = range(6)
    stream = ReferenceStream(
        [0, 0, 0, 5, 5, 5],
        [a, b, p, c, t, u],
        [100] * 6,
        operation=[1, 1, 1, 2, 2, 2],
        object_kind=[CAMERA, CAMERA, PROMPT, CAMERA, TABLE, TABLE],
    )
    (session,) = stream_plan(stream).sessions
    assert session.operations == [(0.0, [a, p]), (0.0, [b]), (5.0, [c, t]), (5.0, [u])]


SIZE = 4096


def _hand_plan(block: int = CAMERA) -> WorkloadPlan:
    """Three requests, each naming blocks 0 and 1 of kind ``block`` and prompt segment 2, in
    one operation as a hand-made plan may."""
    ids = np.arange(3, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(3), ids, ids, np.array([block, block, PROMPT]))
    operations = [(float(t), [0, 1, 2]) for t in (0, 100, 200)]
    session = SessionPlan(1, 0, 0.0, 300.0, 300.0, operations, dict.fromkeys(range(3), 10.0))
    return WorkloadPlan(
        catalog, np.full(3, SIZE), [session], np.zeros(0), np.zeros(0, np.int64), np.zeros(3)
    )


@pytest.mark.parametrize("latency_ms", [0.0, 2.0])
def test_the_des_sends_a_frame_for_each_camera_block(latency_ms):
    """Each request's frames go out at its planned time (the in-flight limit lets both), and
    each is a FRAME_SUBMIT with its own RESULT_PUSH: the second carries one ORB and no object
    inline."""
    link = LinkConfig(latency_ms=latency_ms, bandwidth_bytes_per_ms=1e6)
    config = ModelConfig(
        duration_ms=300.0,
        uplink=link,
        downlink=link,
        policy=PolicyConfig(name="always", ttl_hint_ms=10_000),
    )
    result = simulate(config, 1, _hand_plan())
    starts = result.operations["start_ms"]  # (the first after the handshake)
    assert len(starts) == 6 and (starts[::2] == starts[1::2]).all()
    assert starts[2:].tolist() == [100, 100, 200, 200]
    assert sorted(result.references["object"].tolist()) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    # against the same requests of codec tables (a kind without a slot): a frame each
    codec = simulate(config, 1, _hand_plan(int(CacheObjectKind.CODEC_TABLE)))
    assert len(codec.operations["start_ms"]) == 3
    frame = submit_bytes((), 0) + packet_bytes(MessageType.RESULT_PUSH)
    assert result.wire["control"] - codec.wire["control"] == 3 * frame
    assert result.counters["hot_path_frames"] - codec.counters["hot_path_frames"] == 3
    assert result.wire["reference"] == 24 * 9
    assert result.violations == 0
    run = vector_run(config, _hand_plan())
    assert run.metrics["installs"] == result.counters["installs"] == 3
    assert run.metrics["hit_rate"] == pytest.approx(6 / 9)
    # the vector engine counts the same frames: its wire falls short of the DES's by the
    # session's own frames alone (handshake, open, close), whatever the kind
    codec_run = vector_run(config, _hand_plan(int(CacheObjectKind.CODEC_TABLE)))
    assert run.metrics["wire_bytes"] - codec_run.metrics["wire_bytes"] == 3 * frame
    assert des_metrics(result, 0.0)["wire_bytes"] - run.metrics["wire_bytes"] == (
        des_metrics(codec, 0.0)["wire_bytes"] - codec_run.metrics["wire_bytes"]
    )
