"""nnrp-py (the Python SDK) as the FRAME_SUBMIT oracle: the frames it builds decode alike, the
frames nnrpsim builds pass its validator, and both refuse the same broken frames but where
the spec's sources differ (README: the protocol layer's decisions).

Skipped where the x86_64-only wheel cannot be imported.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.protocol import (
    OBJECT_REF_SLOTS,
    CacheObjectKind,
    InlineObject,
    MessageType,
    SubmitMode,
    decode_packet,
    encode_packet,
)
from tests.protocol.submits import BROKEN, CAMERA, body, metadata, orb, packet

sdk = pytest.importorskip("nnrp.core.packet")
sdk_data = pytest.importorskip("nnrp.core.messages.data")

HEADER_AND_METADATA = 40 + 72
SECTION = sdk.TensorSectionData(
    role_id=1, default_codec_id=0, dtype_id=sdk_data.TensorDType(1), tile_payloads=(b"ab", b"cd")
)


def sdk_validates(raw: bytes) -> None:
    """nnrp-py's checks of a FRAME_SUBMIT's metadata and body (raises ValueError)."""
    fields = sdk_data.FrameSubmitMetadata.unpack(raw[40:HEADER_AND_METADATA])
    sdk.validate_frame_submit_body(fields, raw[HEADER_AND_METADATA:])


def _sdk_reference(kind: CacheObjectKind, key: int) -> object:
    return sdk_data.ObjectReferenceBlock(int(kind), 0, 9, 0, key)


BUILDS = {
    "inline": {},
    "mixed, camera by reference": {
        "submit_mode": SubmitMode.MIXED,
        "object_ref_mask": 0b1,
        "camera_reference": _sdk_reference(CAMERA, 1),
    },
    "mixed, tile index by reference": {
        "submit_mode": SubmitMode.MIXED,
        "object_ref_mask": 0b10,
        "tile_index_reference": _sdk_reference(CacheObjectKind.TILE_INDEX_BLOCK, 2),
    },
    "reference, all three": {
        "submit_mode": SubmitMode.REFERENCE,
        "object_ref_mask": 0b111,
        "camera_reference": _sdk_reference(CAMERA, 1),
        "tile_index_reference": _sdk_reference(CacheObjectKind.TILE_INDEX_BLOCK, 2),
        "tensor_section_table_reference": _sdk_reference(CacheObjectKind.TENSOR_SECTION_TABLE, 3),
    },
}


@pytest.mark.parametrize("options", BUILDS.values(), ids=BUILDS.keys())
def test_frames_the_sdk_builds_decode_alike(options):
    raw = sdk.build_frame_submit_packet(
        session_id=3,
        frame_id=4,
        operation_id=0x0102030405060708,
        src_width=64,
        src_height=32,
        tile_width=32,
        tile_height=32,
        tile_ids=[0, 1],
        sections=[SECTION],
        camera_block=b"" if "camera_reference" in options else b"camera!",
        budget_policy=sdk_data.BudgetPolicy(0x02),
        dependency_frame_id=41,
        **options,
    ).pack()
    ours = decode_packet(raw)
    theirs = sdk_data.FrameSubmitMetadata.unpack(raw[40:HEADER_AND_METADATA])
    for name in metadata():
        assert ours.metadata[name] == int(getattr(theirs, name)), name
    view = sdk.unpack_body(raw[HEADER_AND_METADATA:])
    assert ours.submit_body.prelude == {
        name: int(value) for name, value in asdict(view.prelude).items()
    }
    blocks = sdk.unpack_inline_object_blocks(view.inline_object_region)
    assert [
        (obj.object_kind, obj.profile_id, obj.payload) for obj in ours.submit_body.inline_objects
    ] == [
        (int(block.header.object_kind), block.header.profile_id, bytes(block.payload))
        for block in blocks
    ]
    references = sdk.unpack_object_reference_blocks(view.object_reference_region)
    assert [(ref["object_kind"], ref["cache_key_lo"]) for ref in ours.submit_body.references] == [
        (int(ref.object_kind), ref.cache_key_lo) for ref in references
    ]


@settings(max_examples=100, deadline=None)
@given(
    mode=st.sampled_from(list(SubmitMode)), mask=st.integers(1, 15), seed=st.integers(0, 2**32 - 1)
)
def test_frames_nnrpsim_builds_pass_the_sdk(mode, mask, seed):
    """Every mode and slot set, the camera block inline where it is not referenced (the SDK
    parses a tile index's and a section table's payloads by the profile's fields, which
    nnrpsim leaves as they come)."""
    mask = 0 if mode is SubmitMode.INLINE else mask
    slots = [kind for bit, kind in enumerate(OBJECT_REF_SLOTS) if mask >> bit & 1]
    camera = CAMERA not in slots and mode is not SubmitMode.REFERENCE
    payload = np.random.default_rng(seed).bytes(seed % 40) if camera else b""
    inline = [InlineObject(CAMERA, payload)] if payload else []
    raw = encode_packet(
        MessageType.FRAME_SUBMIT,
        metadata(submit_mode=mode, object_ref_mask=mask, camera_bytes=len(payload)),
        body(*inline, references=[orb(kind, i) for i, kind in enumerate(slots)]),
    )
    sdk_validates(raw)


@pytest.mark.parametrize("case", BROKEN, ids=lambda case: case.name)
def test_both_refuse_the_same_broken_frames(case):
    raw = packet(case.metadata, case.body)
    if case.sdk_rejects:
        with pytest.raises(ValueError):
            sdk_validates(raw)
    else:
        sdk_validates(raw)


def test_an_llm_kind_by_reference_in_an_inline_submit_is_nnrp_rs_s_reading():
    """nnrp-rs skips kinds without a mask slot in the mask's rules; nnrp-py refuses any ORB in
    an inline submit (spec section 13). nnrpsim takes nnrp-rs's: the model's frames are so."""
    raw = encode_packet(
        MessageType.FRAME_SUBMIT,
        metadata(),
        body(references=[orb(CacheObjectKind.PROMPT_SEGMENT)]),
    )
    assert decode_packet(raw).submit_body.references[0]["object_kind"] == 7
    with pytest.raises(ValueError, match="must not carry object reference blocks"):
        sdk_validates(raw)
