"""FRAME_SUBMIT's body (spec section 13): the region prelude, the inline object blocks, the
Object Reference Blocks, and the rules that tie them to the metadata; and its size on the wire.

The metadata's own rules are its layout's (:data:`~.layouts.FRAME_SUBMIT`). The typed payload
and extension regions are the application's: only their lengths are checked (whole
descriptors, a typed payload descriptor per ``payload_frame_count``).

Where the sources differ, nnrp-rs (the canonical implementation) is followed: the
``object_ref_mask`` governs the standard slots only (:data:`~.codes.OBJECT_REF_SLOTS`), and ORBs
of kinds without a slot (``prompt_segment``, ``tool_schema``, ...) may stand anywhere in the
reference region, in any submit mode; nnrp-py's validator rejects them (the region must match
the mask, and an inline submit carries no ORB). Preview2's rule that a mixed submit keep a
standard object inline is not applied: the metadata is preview4's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

from .codec import decode_batch, decode_block, encode_block, record_to_dict
from .codes import OBJECT_REF_SLOTS, CacheObjectKind, SubmitMode
from .errors import WireError
from .layouts import (
    BODY_REGION_PRELUDE,
    FRAME_SUBMIT,
    HEADER_LEN,
    INLINE_OBJECT_HEADER,
    OBJECT_REFERENCE,
    TYPED_PAYLOAD_DESCRIPTOR_LEN,
)

INLINE_OBJECT_ALIGN = 8
REGIONS = (
    "inline_object_bytes",
    "object_reference_bytes",
    "typed_payload_descriptor_bytes",
    "typed_payload_frame_bytes",
    "extension_descriptor_bytes",
    "extension_payload_bytes",
)
"""The prelude's region lengths, in the order the regions follow it."""
SIZED_BY_METADATA = (
    ("camera_bytes", CacheObjectKind.CAMERA_BLOCK),
    ("tile_index_bytes", CacheObjectKind.TILE_INDEX_BLOCK),
)
"""Metadata fields that give an inline object's size: 0 where it is not inline."""


@dataclass(frozen=True)
class InlineObject:
    """An inline object block: a 16-byte header (its ``object_bytes`` is the payload's
    length), the payload, zeros to the next 8 bytes."""

    object_kind: int
    payload: bytes
    profile_id: int = 0


@dataclass(frozen=True)
class SubmitBody:
    """A FRAME_SUBMIT body, region by region; the typed payload and extension regions raw."""

    prelude: dict[str, int]
    inline_objects: tuple[InlineObject, ...]
    references: tuple[dict[str, int], ...]
    """The ORBs, in region order, field by field."""
    typed_payload_descriptors: bytes
    typed_payload_frames: bytes
    extension_descriptors: bytes
    extension_payloads: bytes


def inline_object_bytes(object_bytes):
    """An inline object block: 16-byte header + payload, zero-padded to 8 bytes (an int, or an
    integer array for many objects at once)."""
    payload = INLINE_OBJECT_HEADER.size + object_bytes
    return payload + (-payload) % INLINE_OBJECT_ALIGN


def frame_submit_bytes(inline_objects: list[int] | tuple[int, ...], references: int) -> int:
    """A FRAME_SUBMIT carrying inline objects of these payload sizes and ``references`` ORBs.

    Body = 32-byte region prelude + inline object blocks + the object-reference region. Typed
    payload and extension regions are the application's own and are not counted here.
    """
    body = BODY_REGION_PRELUDE.size + sum(inline_object_bytes(n) for n in inline_objects)
    return HEADER_LEN + FRAME_SUBMIT.size + body + references * OBJECT_REFERENCE.size


def encode_submit_body(
    inline_objects: Sequence[InlineObject] = (),
    references: Sequence[Mapping[str, object]] = (),
    *,
    typed_payload_descriptors: bytes = b"",
    typed_payload_frames: bytes = b"",
    extension_descriptors: bytes = b"",
    extension_payloads: bytes = b"",
) -> bytes:
    """A FRAME_SUBMIT body: its prelude, then each region. The rules that tie it to the
    metadata are checked as :func:`~.packet.encode_packet` decodes the packet it makes."""
    regions = (
        b"".join(map(_inline_block, inline_objects)),
        b"".join(encode_block(OBJECT_REFERENCE, reference) for reference in references),
        typed_payload_descriptors,
        typed_payload_frames,
        extension_descriptors,
        extension_payloads,
    )
    lengths = dict(zip(REGIONS, map(len, regions), strict=True))
    return encode_block(BODY_REGION_PRELUDE, lengths) + b"".join(regions)


def _inline_block(obj: InlineObject) -> bytes:
    fields = {
        "object_kind": obj.object_kind,
        "profile_id": obj.profile_id,
        "object_bytes": len(obj.payload),
    }
    block = encode_block(INLINE_OBJECT_HEADER, fields) + obj.payload
    return block.ljust(inline_object_bytes(len(obj.payload)), b"\0")


def decode_submit_body(metadata: Mapping[str, object], body: bytes) -> SubmitBody:
    """Decode and check a FRAME_SUBMIT body against its (decoded) metadata."""
    prelude_len = BODY_REGION_PRELUDE.size
    if len(body) < prelude_len:
        raise WireError(
            "body_len",
            f"a FRAME_SUBMIT body opens with a {prelude_len}-byte region prelude, "
            f"got {len(body)} bytes",
        )
    prelude = decode_block(BODY_REGION_PRELUDE, body[:prelude_len])
    ends = list(accumulate((prelude[name] for name in REGIONS), initial=prelude_len))
    if ends[-1] != len(body):
        raise WireError(
            "body_len", f"the body is {len(body)} bytes, its prelude's regions {ends[-1]}"
        )
    regions = [body[start:end] for start, end in pairwise(ends)]
    descriptors = metadata["payload_frame_count"] * TYPED_PAYLOAD_DESCRIPTOR_LEN
    if prelude["typed_payload_descriptor_bytes"] != descriptors:
        raise WireError(
            "typed_payload_descriptor_bytes",
            f"must be payload_frame_count x {TYPED_PAYLOAD_DESCRIPTOR_LEN} = {descriptors} "
            f"(got {prelude['typed_payload_descriptor_bytes']})",
        )
    inline = _inline_objects(regions[0])
    try:
        references = tuple(map(record_to_dict, decode_batch(OBJECT_REFERENCE, regions[1])))
    except WireError as err:  # (say which region's block)
        raise WireError(err.field, f"{err.reason} in object reference {err.index}") from None
    _check_slots(metadata, inline, references)
    return SubmitBody(prelude, inline, references, *regions[2:])


def _inline_objects(region: bytes) -> tuple[InlineObject, ...]:
    header_len, objects, at = INLINE_OBJECT_HEADER.size, [], 0
    while at < len(region):
        where = f"in inline object block {len(objects)}"
        if len(region) - at < header_len:
            raise WireError("inline_object_bytes", f"the region ends inside a header {where}")
        try:
            header = decode_block(INLINE_OBJECT_HEADER, region[at : at + header_len])
        except WireError as err:
            raise WireError(err.field, f"{err.reason} {where}") from None
        size = header["object_bytes"]
        start, end = at + header_len, at + inline_object_bytes(size)
        if end > len(region):
            raise WireError("object_bytes", f"{size} runs past the inline object region {where}")
        if any(region[start + size : end]):
            raise WireError("padding", f"must be zeros {where}")
        objects.append(
            InlineObject(header["object_kind"], region[start : start + size], header["profile_id"])
        )
        at = end
    return tuple(objects)


def _names(kinds: Sequence[int]) -> str:
    return ", ".join(CacheObjectKind(kind).name.lower() for kind in kinds) or "none"


def _check_slots(
    metadata: Mapping[str, object], inline: tuple[InlineObject, ...], references: tuple[dict, ...]
) -> None:
    """Each slot the mask sets has exactly one ORB, in slot order, and is not also inline;
    the standard kinds are carried once; a reference submit carries none inline; the
    metadata's camera and tile-index sizes are those of the blocks inline."""
    mask = metadata["object_ref_mask"]
    slots = [kind for bit, kind in enumerate(OBJECT_REF_SLOTS) if mask >> bit & 1]
    referenced = [
        ref["object_kind"] for ref in references if ref["object_kind"] in OBJECT_REF_SLOTS
    ]
    if referenced != slots:
        raise WireError(
            "object_ref_mask",
            f"{mask:#x} sets the slots of {_names(slots)}, but the reference region's ORBs "
            f"of slotted kinds are {_names(referenced)}: one a slot set, in slot order",
        )
    carried = [obj.object_kind for obj in inline if obj.object_kind in OBJECT_REF_SLOTS]
    for kind in dict.fromkeys(carried):
        if carried.count(kind) > 1:
            raise WireError("inline_object_bytes", f"two {_names([kind])} blocks: a frame has one")
        if kind in slots:
            raise WireError("object_ref_mask", f"{_names([kind])} is both referenced and inline")
    if carried and metadata["submit_mode"] == SubmitMode.REFERENCE:
        raise WireError(
            "submit_mode",
            f"reference, yet {_names(carried)} is inline: use mixed to carry a slotted kind inline",
        )
    for field, kind in SIZED_BY_METADATA:
        size = next((len(obj.payload) for obj in inline if obj.object_kind == kind), None)
        if metadata[field] != (size or 0):
            name = _names([kind])
            why = f"no {name} is inline" if size is None else f"the inline {name}'s object_bytes"
            raise WireError(field, f"must be {size or 0}: {why} (got {metadata[field]})")
