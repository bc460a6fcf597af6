"""``nnrpsim frames``: NNRP/1 packets and blocks from hexadecimal to JSON, and back.

Integers stay JSON numbers (full 64-bit), bytes become hexadecimal text; every rejection is
the protocol layer's :class:`~nnrpsim.protocol.WireError`, or a :class:`UsageError` for the
input around it, each one line on the command line.
"""

from __future__ import annotations

import argparse
import json
import sys

from .json_objects import once_each
from .protocol import (
    BLOCKS,
    InlineObject,
    MessageType,
    Packet,
    SubmitBody,
    WireError,
    decode_batch,
    decode_block,
    decode_packet,
    decode_packets,
    encode_block,
    encode_packet,
    encode_submit_body,
)
from .protocol.codec import record_to_dict
from .usage_error import UsageError


def _parse_hex(text: str, key: str = "hex") -> bytes:
    cleaned = "".join(text.split()).removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError(f"{key}: not valid hexadecimal") from None


def _jsonable(value: object) -> object:
    """Integers stay JSON numbers (full 64-bit); bytes become hexadecimal text."""
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return value.hex() if isinstance(value, bytes) else value


def _stdin_hex() -> str:
    try:
        return sys.stdin.buffer.read().decode("ascii")
    except UnicodeDecodeError:
        raise UsageError(
            "hex: stdin holds bytes that are not hexadecimal text (for a binary capture: "
            "xxd -p FILE | nnrpsim frames decode --all -)"
        ) from None


def decode(args: argparse.Namespace) -> str:
    """One JSON object; with ``--all``, one a line: a packet (or a block) each."""
    data = _parse_hex(_stdin_hex() if args.hex == "-" else args.hex)
    if args.all and not data:
        raise UsageError("hex: no bytes given")
    if args.block:
        layout = BLOCKS[args.block]
        if args.all:
            return "\n".join(
                json.dumps(_jsonable(record_to_dict(r))) for r in decode_batch(layout, data)
            )
        return json.dumps(_jsonable(decode_block(layout, data)))
    if args.all:
        return "\n".join(json.dumps(_jsonable(_packet_fields(p))) for p in decode_packets(data))
    try:
        packet = decode_packet(data)
    except WireError as err:
        packets = _packets_or_none(data)
        if packets is None or len(packets) < 2:
            raise
        raise UsageError(
            f"{err}: the bytes hold {len(packets)} packets (--all decodes each)"
        ) from None
    return json.dumps(_jsonable(_packet_fields(packet)))


def _packets_or_none(data: bytes) -> list[Packet] | None:
    try:
        return decode_packets(data)
    except WireError:
        return None


def _packet_fields(packet: Packet) -> dict[str, object]:
    header = {**packet.header, "magic": packet.header["magic"].decode("latin-1")}
    out: dict[str, object] = {"message": packet.msg_type.name, "header": header}
    if packet.metadata is not None:
        out["metadata"] = packet.metadata
    else:
        out["metadata_hex"] = packet.metadata_raw.hex()
    if packet.submit_body is not None:
        out["body"] = _submit_body(packet.submit_body)
    else:
        out["body_hex"] = packet.body.hex()
    return out


RAW_REGIONS = (
    "typed_payload_descriptors",
    "typed_payload_frames",
    "extension_descriptors",
    "extension_payloads",
)
"""A FRAME_SUBMIT body's regions that are the application's: shown as hexadecimal."""


def _submit_body(body: SubmitBody) -> dict[str, object]:
    """A FRAME_SUBMIT's body region by region, payloads and raw regions as hexadecimal."""
    inline = [
        {
            "object_kind": obj.object_kind,
            "profile_id": obj.profile_id,
            "object_bytes": len(obj.payload),
            "payload_hex": obj.payload.hex(),
        }
        for obj in body.inline_objects
    ]
    return {
        "prelude": body.prelude,
        "inline_objects": inline,
        "object_references": list(body.references),
        **{f"{name}_hex": getattr(body, name).hex() for name in RAW_REGIONS},
    }


def encode(args: argparse.Namespace) -> str:
    try:
        fields = json.loads(args.json, object_pairs_hook=once_each)
    except json.JSONDecodeError as err:
        raise UsageError(f"json: {err.msg} at line {err.lineno} column {err.colno}") from None
    except ValueError as err:  # (a name given twice)
        raise UsageError(f"json: {err}") from None
    if not isinstance(fields, dict):
        raise UsageError("json: must be an object of field names to values")
    if args.block == PACKET:
        return _packet_from(fields).hex()
    return encode_block(BLOCKS[args.block], fields).hex()


PACKET = "packet"
"""``encode``'s name for a whole packet, written as ``decode`` prints one."""
PACKET_KEYS = ("message", "header", "metadata", "metadata_hex", "body", "body_hex")
COMPUTED = {
    "header": ("msg_type", "meta_len", "body_len"),  # (from the message and what follows)
    "inline object": ("object_bytes",),
}
"""What ``decode`` prints that ``encode`` works out again, as it does a FRAME_SUBMIT's
prelude: an edit of the body needs no edit of its lengths."""


def _packet_from(doc: dict) -> bytes:
    """A whole packet from what :func:`decode` prints of one."""
    _known(doc, "packet", PACKET_KEYS)
    message = doc.get("message")
    if message not in MessageType.__members__:
        raise UsageError(
            f"message: must name a message type, as decode prints it (got {message!r})"
        )
    msg_type = MessageType[message]
    header = _kept(_object(doc.get("header", {}), "header"), "header")
    if "metadata" in doc:
        metadata = _object(doc["metadata"], "metadata")
    else:
        metadata = _hex(doc.get("metadata_hex", ""), "metadata_hex")
    if "body" in doc:
        body = _body_from(_object(doc["body"], "body"))
    else:
        body = _hex(doc.get("body_hex", ""), "body_hex")
    return encode_packet(msg_type, metadata, body, **header)


def _body_from(doc: dict) -> bytes:
    """A FRAME_SUBMIT's body from what :func:`decode` prints of it."""
    regions = [f"{name}_hex" for name in RAW_REGIONS]
    _known(doc, "body", ("prelude", "inline_objects", "object_references", *regions))
    inline = []
    for item in _list(doc.get("inline_objects", []), "inline_objects"):
        item = _kept(_object(item, "inline_objects"), "inline object")
        _known(item, "inline object", ("object_kind", "profile_id", "payload_hex"))
        if "object_kind" not in item:
            raise UsageError("object_kind: missing field of an inline object")
        payload = _hex(item.get("payload_hex", ""), "payload_hex")
        inline.append(InlineObject(item["object_kind"], payload, item.get("profile_id", 0)))
    references = [
        _object(ref, "object_references")
        for ref in _list(doc.get("object_references", []), "object_references")
    ]
    raw = {name: _hex(doc.get(f"{name}_hex", ""), f"{name}_hex") for name in RAW_REGIONS}
    return encode_submit_body(inline, references, **raw)


def _known(doc: dict, what: str, keys: tuple[str, ...]) -> None:
    unknown = [key for key in doc if key not in keys]
    if unknown:
        raise UsageError(f"{unknown[0]}: not a key of a {what} (keys: {', '.join(keys)})")


def _kept(doc: dict, what: str) -> dict:
    """``doc`` without what :data:`COMPUTED` works out again."""
    return {key: value for key, value in doc.items() if key not in COMPUTED.get(what, ())}


def _object(value: object, key: str) -> dict:
    if not isinstance(value, dict):
        raise UsageError(f"{key}: must be a JSON object")
    return value


def _list(value: object, key: str) -> list:
    if not isinstance(value, list):
        raise UsageError(f"{key}: must be a JSON list")
    return value


def _hex(value: object, key: str) -> bytes:
    if not isinstance(value, str):
        raise UsageError(f"{key}: must be hexadecimal text")
    return _parse_hex(value, key)
