"""FRAME_SUBMIT packets for the tests, valid and not: built field by field, without the
encoder's checks, so a packet can break any one rule (test helper)."""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from nnrpsim.protocol import (
    FRAME_SUBMIT,
    HEADER,
    CacheObjectKind,
    InlineObject,
    MessageType,
    SubmitMode,
    encode_block,
    encode_submit_body,
)

CAMERA, TILE_INDEX, SECTIONS = (
    CacheObjectKind.CAMERA_BLOCK,
    CacheObjectKind.TILE_INDEX_BLOCK,
    CacheObjectKind.TENSOR_SECTION_TABLE,
)
INLINE, REFERENCE, MIXED = SubmitMode.INLINE, SubmitMode.REFERENCE, SubmitMode.MIXED


def metadata(**fields: int) -> dict[str, int]:
    """Valid FRAME_SUBMIT metadata (an inline tensor submit carrying nothing), but ``fields``."""
    return {
        "camera_bytes": 0,
        "tile_index_bytes": 0,
        "operation_id": 7,
        "submit_mode": INLINE,
        "budget_policy": 0,
        "loss_tolerance_policy": 0xFF,
        "object_ref_mask": 0,
        "dependency_frame_id": 0,
        "payload_kind_bitmap": 1,
        "payload_frame_count": 0,
        **fields,
    }


def orb(kind: int, key: int = 1) -> dict[str, int]:
    return {
        "object_kind": int(kind),
        "ref_flags": 0,
        "cache_namespace": 1,
        "cache_key_hi": 0,
        "cache_key_lo": key,
    }


def body(*inline: InlineObject, references=(), **regions: bytes) -> bytes:
    return encode_submit_body(inline, references, **regions)


def prelude(*lengths: int, flags: int = 0, reserved: int = 0) -> bytes:
    """A region prelude as raw bytes: the six region lengths, then body_flags and reserved."""
    return struct.pack("<8I", *lengths, flags, reserved)


def raw_metadata(fields: dict[str, int]) -> bytes:
    record = np.zeros(1, dtype=FRAME_SUBMIT.dtype)
    for name, value in fields.items():
        record[name] = value
    return record.tobytes()


def packet(fields: dict[str, int], body_bytes: bytes) -> bytes:
    """A whole FRAME_SUBMIT, however it breaks the rules of its metadata or body."""
    header = encode_block(
        HEADER,
        {
            "msg_type": MessageType.FRAME_SUBMIT,
            "flags": 0,
            "meta_len": FRAME_SUBMIT.size,
            "body_len": len(body_bytes),
            "session_id": 3,
            "frame_id": 4,
            "view_id": 0,
            "route_id": 0,
            "trace_id": 0,
        },
    )
    return header + raw_metadata(fields) + body_bytes


class Broken(NamedTuple):
    """A FRAME_SUBMIT that breaks one rule: the field the error names, a part of its reason,
    and whether nnrp-py's validator rejects it too."""

    name: str
    metadata: dict[str, int]
    body: bytes
    field: str
    reason: str
    sdk_rejects: bool = True


def _camera(size: int) -> InlineObject:
    return InlineObject(CAMERA, bytes(range(size)))


BROKEN = [
    Broken(
        "slot set, no ORB",
        metadata(submit_mode=MIXED, object_ref_mask=0b1),
        body(),
        "object_ref_mask",
        "sets the slots of camera_block, but the reference region's ORBs of slotted kinds are none",
    ),
    Broken(
        "ORB of a slot not set",
        metadata(submit_mode=MIXED, object_ref_mask=0b100),
        body(references=[orb(CAMERA), orb(SECTIONS)]),
        "object_ref_mask",
        "are camera_block, tensor_section_table",
    ),
    Broken(
        "ORBs out of slot order",
        metadata(submit_mode=REFERENCE, object_ref_mask=0b11),
        body(references=[orb(TILE_INDEX), orb(CAMERA)]),
        "object_ref_mask",
        "one a slot set, in slot order",
    ),
    Broken(
        "two ORBs for a slot",
        metadata(submit_mode=REFERENCE, object_ref_mask=0b1),
        body(references=[orb(CAMERA), orb(CAMERA, 2)]),
        "object_ref_mask",
        "are camera_block, camera_block",
    ),
    Broken(
        "referenced and inline",
        metadata(submit_mode=MIXED, object_ref_mask=0b1, camera_bytes=5),
        body(_camera(5), references=[orb(CAMERA)]),
        "object_ref_mask",
        "camera_block is both referenced and inline",
    ),
    Broken(
        "two inline camera blocks",
        metadata(camera_bytes=5),
        body(_camera(5), _camera(5)),
        "inline_object_bytes",
        "two camera_block blocks",
    ),
    Broken(
        "a reference submit with a slotted kind inline",
        metadata(submit_mode=REFERENCE, object_ref_mask=0b100, camera_bytes=5),
        body(_camera(5), references=[orb(SECTIONS)]),
        "submit_mode",
        "reference, yet camera_block is inline",
    ),
    Broken(
        "camera_bytes not the inline block's",
        metadata(camera_bytes=6),
        body(_camera(5)),
        "camera_bytes",
        "must be 5: the inline camera_block's object_bytes (got 6)",
    ),
    Broken(
        "camera_bytes with no camera inline",
        metadata(camera_bytes=3),
        body(),
        "camera_bytes",
        "must be 0: no camera_block is inline (got 3)",
    ),
    Broken(
        "tile-index bytes of a referenced tile index",
        metadata(submit_mode=REFERENCE, object_ref_mask=0b10, tile_index_bytes=4),
        body(references=[orb(TILE_INDEX)]),
        "tile_index_bytes",
        "must be 0 when the tile index block is referenced",
    ),
    Broken(
        "a mask in an inline submit",
        metadata(object_ref_mask=0b1),
        body(references=[orb(CAMERA)]),
        "object_ref_mask",
        "must be 0 for submit_mode inline",
    ),
    Broken(  # (nnrp-py's validator does not check the mode against an empty mask)
        "a mixed submit with no mask",
        metadata(submit_mode=MIXED),
        body(),
        "object_ref_mask",
        "must be non-zero for submit_mode reference or mixed",
        sdk_rejects=False,
    ),
    Broken("no operation", metadata(operation_id=0), body(), "operation_id", "must be non-zero"),
    Broken(
        "an unknown budget bit",
        metadata(budget_policy=0x10),
        body(),
        "budget_policy",
        "unknown bits outside mask 0xf",
    ),
    Broken(
        "an unknown submit mode",
        metadata(submit_mode=3),
        body(),
        "submit_mode",
        "unknown SubmitMode value (got 3)",
    ),
    Broken(
        "typed payload descriptors not payload_frame_count's",
        metadata(payload_frame_count=1),
        body(),
        "typed_payload_descriptor_bytes",
        "must be payload_frame_count x 24 = 24 (got 0)",
    ),
    Broken(
        "regions longer than the body",
        metadata(),
        prelude(24, 0, 0, 0, 0, 0),
        "body_len",
        "the body is 32 bytes, its prelude's regions 56",
    ),
    Broken(
        "a part of an ORB",
        metadata(),
        prelude(0, 23, 0, 0, 0, 0) + bytes(23),
        "object_reference_bytes",
        "must be a multiple of 24",
    ),
    Broken(
        "body flags",
        metadata(),
        prelude(0, 0, 0, 0, 0, 0, flags=1),
        "body_flags",
        "reserved, must be 0",
    ),
    Broken(
        "padding not zeros",
        metadata(camera_bytes=5),
        body(_camera(5))[:-1] + b"\x01",
        "padding",
        "must be zeros in inline object block 0",
    ),
    Broken(
        "the first padding byte not zero",
        metadata(camera_bytes=5),
        body(_camera(5))[:-3] + b"\x01" + body(_camera(5))[-2:],
        "padding",
        "must be zeros in inline object block 0",
    ),
    Broken(
        "an inline block past its region",
        metadata(camera_bytes=9),
        prelude(24, 0, 0, 0, 0, 0) + body(_camera(9))[32:56],
        "object_bytes",
        "9 runs past the inline object region in inline object block 0",
    ),
    Broken(
        "a region ending inside a header",
        metadata(),
        prelude(8, 0, 0, 0, 0, 0) + bytes(8),
        "inline_object_bytes",
        "the region ends inside a header in inline object block 0",
    ),
    Broken(
        "a region ending a byte inside a header",
        metadata(),
        prelude(15, 0, 0, 0, 0, 0) + bytes(15),
        "inline_object_bytes",
        "the region ends inside a header in inline object block 0",
    ),
    Broken(
        "ORB flags",
        metadata(submit_mode=REFERENCE, object_ref_mask=0b1),
        body(references=[orb(CAMERA)])[:34] + b"\x01" + body(references=[orb(CAMERA)])[35:],
        "ref_flags",
        "reserved, must be 0 (got 1) in object reference 0",
    ),
    Broken(
        "an inline block of no kind",
        metadata(),
        prelude(16, 0, 0, 0, 0, 0) + bytes(16),
        "object_kind",
        "unknown CacheObjectKind value (got 0) in inline object block 0",
    ),
    Broken("no prelude", metadata(), bytes(10), "body_len", "region prelude, got 10 bytes"),
    Broken("a prelude a byte short", metadata(), bytes(31), "body_len", "got 31 bytes"),
    Broken(
        "a part of an extension descriptor",
        metadata(),
        prelude(0, 0, 0, 0, 8, 0) + bytes(8),
        "extension_descriptor_bytes",
        "must be a multiple of 16",
    ),
]
