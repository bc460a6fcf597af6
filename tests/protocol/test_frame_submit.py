"""FRAME_SUBMIT: its metadata's cache fields, its body's regions, the rules between them
(spec section 13), and its size as the model counts it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.protocol import (
    FRAME_SUBMIT,
    BudgetPolicy,
    CacheObjectKind,
    InlineObject,
    MessageType,
    SubmitMode,
    WireError,
    decode_block,
    decode_packet,
    encode_block,
    encode_packet,
    frame_submit_bytes,
)
from tests.conftest import golden_hex
from tests.protocol.submits import (
    BROKEN,
    CAMERA,
    MIXED,
    SECTIONS,
    TILE_INDEX,
    body,
    metadata,
    orb,
    packet,
)

LLM_KINDS = [
    CacheObjectKind.PROMPT_SEGMENT,
    CacheObjectKind.TOOL_SCHEMA,
    CacheObjectKind.STRUCTURED_EVENT_SCHEMA,
]


def test_the_golden_metadata_decodes_to_the_spec_cache_fields(shared):
    golden = bytes.fromhex(golden_hex(shared, "l0.frame_submit.metadata.golden"))
    decoded = decode_block(FRAME_SUBMIT, golden)
    assert {name: decoded[name] for name in metadata()} == {
        "camera_bytes": 192,
        "tile_index_bytes": 0,
        "operation_id": 0x0102030405060708,
        "submit_mode": SubmitMode.MIXED,
        "budget_policy": BudgetPolicy.ALLOW_PARTIAL | BudgetPolicy.ALLOW_DEGRADED,
        "loss_tolerance_policy": 0xFF,  # inherit
        "object_ref_mask": 0b11,  # camera block and tile index by reference
        "dependency_frame_id": 41,
        "payload_kind_bitmap": 0x11,
        "payload_frame_count": 2,
    }
    assert decoded["bytes_0_27"][:4] == bytes.fromhex("80026801")  # (640 x 360: the profile's)
    assert encode_block(FRAME_SUBMIT, decoded) == golden


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 5000), max_size=6),
    kinds=st.lists(st.sampled_from(LLM_KINDS), max_size=8),
    seed=st.integers(0, 2**32 - 1),
)
def test_an_llm_frame_is_the_size_the_model_counts_and_decodes_back(sizes, kinds, seed):
    """The model's frames: prompt segments inline and by reference (kinds with no mask slot),
    in an inline submit, as nnrp-rs allows."""
    rng = np.random.default_rng(seed)
    inline = [InlineObject(CacheObjectKind.PROMPT_SEGMENT, rng.bytes(n), 3) for n in sizes]
    references = [orb(kind, key) for key, kind in enumerate(kinds)]
    raw = encode_packet(MessageType.FRAME_SUBMIT, metadata(), body(*inline, references=references))
    assert len(raw) == frame_submit_bytes(sizes, len(kinds))
    submit = decode_packet(raw).submit_body
    assert submit.inline_objects == tuple(inline)
    assert submit.references == tuple(references)
    assert submit.prelude["object_reference_bytes"] == 24 * len(kinds)


def test_a_mixed_tensor_submit_decodes_region_by_region():
    camera = InlineObject(CAMERA, b"camera", profile_id=2)
    raw = encode_packet(
        MessageType.FRAME_SUBMIT,
        metadata(submit_mode=MIXED, object_ref_mask=0b110, camera_bytes=6, payload_frame_count=1),
        body(
            camera,
            references=[orb(CacheObjectKind.TOOL_SCHEMA), orb(TILE_INDEX, 5), orb(SECTIONS, 6)],
            typed_payload_descriptors=bytes(range(24)),
            typed_payload_frames=b"frame",
            extension_descriptors=bytes(16),
            extension_payloads=b"ext",
        ),
    )
    submit = decode_packet(raw).submit_body
    assert submit.inline_objects == (camera,)
    assert [ref["object_kind"] for ref in submit.references] == [8, 2, 3]
    assert submit.typed_payload_descriptors == bytes(range(24))
    assert (submit.typed_payload_frames, submit.extension_payloads) == (b"frame", b"ext")
    assert submit.prelude == {
        "inline_object_bytes": 24,
        "object_reference_bytes": 72,
        "typed_payload_descriptor_bytes": 24,
        "typed_payload_frame_bytes": 5,
        "extension_descriptor_bytes": 16,
        "extension_payload_bytes": 3,
        "body_flags": 0,
        "reserved": 0,
    }


@pytest.mark.parametrize("case", BROKEN, ids=lambda case: case.name)
def test_each_broken_rule_is_named(case):
    with pytest.raises(WireError) as err:
        decode_packet(packet(case.metadata, case.body))
    assert err.value.field == case.field
    assert case.reason in err.value.reason


def test_the_encoder_refuses_what_the_decoder_refuses():
    with pytest.raises(WireError, match="object_ref_mask: 0x1 sets the slots of camera_block"):
        encode_packet(
            MessageType.FRAME_SUBMIT, metadata(submit_mode=MIXED, object_ref_mask=1), body()
        )


def test_opaque_metadata_bytes_go_through_as_given():
    fields = {**metadata(), "bytes_0_27": bytes(range(28)), "bytes_70_71": "beef"}
    decoded = decode_block(FRAME_SUBMIT, encode_block(FRAME_SUBMIT, fields))
    assert decoded["bytes_0_27"] == bytes(range(28)) and decoded["bytes_70_71"] == b"\xbe\xef"
    assert decoded["bytes_36_39"] == bytes(4)  # (zeros unless given)
    with pytest.raises(WireError, match="bytes_55: must be 1 bytes"):
        encode_block(FRAME_SUBMIT, {**metadata(), "bytes_55": "0000"})
    with pytest.raises(WireError, match="bytes_55: must be hexadecimal text"):
        encode_block(FRAME_SUBMIT, {**metadata(), "bytes_55": "zz"})
