"""``nnrpsim frames``: NNRP/1 packets and blocks from hexadecimal to JSON, and blocks back.

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
    Packet,
    SubmitBody,
    WireError,
    decode_batch,
    decode_block,
    decode_packet,
    decode_packets,
    encode_block,
)
from .protocol.codec import record_to_dict
from .usage_error import UsageError


def _parse_hex(text: str) -> bytes:
    cleaned = "".join(text.split()).removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError("hex: not valid hexadecimal") from None


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
    raw = ("typed_payload_descriptors", "typed_payload_frames")
    raw += ("extension_descriptors", "extension_payloads")
    return {
        "prelude": body.prelude,
        "inline_objects": inline,
        "object_references": list(body.references),
        **{f"{name}_hex": getattr(body, name).hex() for name in raw},
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
    return encode_block(BLOCKS[args.block], fields).hex()
