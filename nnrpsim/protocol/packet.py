"""Whole NNRP/1 packets (40-byte header + metadata + body) and their byte counts.

The simulator sizes every frame it sends with :func:`packet_bytes` and
:func:`~.frame_submit.frame_submit_bytes`, so inline-versus-reference traffic is counted from
the wire layouts rather than assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codec import decode_block, encode_block
from .codes import MessageType
from .errors import WireError
from .frame_submit import SubmitBody, decode_submit_body
from .layouts import HEADER, HEADER_LEN, MAGIC, METADATA, metadata_len


@dataclass(frozen=True, slots=True)
class Packet:
    """A decoded packet: header fields, metadata fields (or raw bytes) and the body."""

    header: dict[str, object]
    metadata: dict[str, object] | None
    metadata_raw: bytes
    body: bytes
    submit_body: SubmitBody | None = None
    """A FRAME_SUBMIT's body, region by region."""

    @property
    def msg_type(self) -> MessageType:
        return MessageType(self.header["msg_type"])


def decode_packet(data: bytes | bytearray | memoryview) -> Packet:
    """Decode and validate a whole packet, including the header length rules."""
    data = bytes(data)
    if len(data) < HEADER_LEN:
        raise WireError("header", f"a packet needs at least {HEADER_LEN} bytes, got {len(data)}")
    header = decode_block(HEADER, data[:HEADER_LEN])
    meta_len, body_len = header["meta_len"], header["body_len"]
    expected = HEADER_LEN + meta_len + body_len
    if len(data) != expected:
        raise WireError(
            "body_len", f"packet is {len(data)} bytes but 40 + meta_len + body_len = {expected}"
        )
    msg_type = MessageType(header["msg_type"])
    fixed_len = metadata_len(msg_type)
    if fixed_len is not None and meta_len != fixed_len:
        raise WireError(
            "meta_len", f"{msg_type.name} metadata is {fixed_len} bytes, got {meta_len}"
        )
    raw = data[HEADER_LEN : HEADER_LEN + meta_len]
    body = data[HEADER_LEN + meta_len :]
    layout = METADATA.get(msg_type)
    metadata = decode_block(layout, raw) if layout is not None else None
    _check_body(msg_type, metadata, body_len)
    submit = decode_submit_body(metadata, body) if msg_type is MessageType.FRAME_SUBMIT else None
    return Packet(header, metadata, raw, body, submit)


def decode_packets(data: bytes | bytearray | memoryview) -> list[Packet]:
    """Decode packets laid back to back (as a capture of a connection holds them), each by
    :func:`decode_packet`'s rules; an error says which packet, and where it starts."""
    data, packets, at = bytes(data), [], 0
    while at < len(data):
        where = f" in packet {len(packets)} (from byte {at})"
        try:
            header = decode_block(HEADER, data[at : at + HEADER_LEN])
            end = at + HEADER_LEN + header["meta_len"] + header["body_len"]
            if end > len(data):
                raise WireError(
                    "body_len",
                    f"40 + meta_len + body_len = {end - at} bytes, but {len(data) - at} are left",
                )
            packets.append(decode_packet(data[at:end]))
        except WireError as err:
            raise WireError(err.field, f"{err.reason}{where}") from None
        at = end
    return packets


def _check_body(msg_type: MessageType, metadata: dict[str, object] | None, body_len: int) -> None:
    if msg_type is MessageType.CACHE_PUT and body_len != metadata["object_bytes"]:
        raise WireError(
            "object_bytes",
            f"CACHE_PUT body is {body_len} bytes but object_bytes says {metadata['object_bytes']}",
        )
    if msg_type in (MessageType.CACHE_ACK, MessageType.CACHE_INVALIDATE) and body_len:
        raise WireError("body_len", f"{msg_type.name} carries no body, got {body_len} bytes")


def encode_packet(
    msg_type: MessageType,
    metadata: dict[str, object] | bytes,
    body: bytes = b"",
    **header: int,
) -> bytes:
    """Encode a packet; ``meta_len`` and ``body_len`` are computed, other header fields
    default 0."""
    msg_type = MessageType(msg_type)
    layout = METADATA.get(msg_type)
    raw = metadata if isinstance(metadata, bytes) else encode_block(layout, metadata)
    head = encode_block(
        HEADER,
        {
            "magic": MAGIC,
            "flags": 0,
            "session_id": 0,
            "frame_id": 0,
            "view_id": 0,
            "route_id": 0,
            "trace_id": 0,
            **header,
            "msg_type": int(msg_type),
            "meta_len": len(raw),
            "body_len": len(body),
        },
    )
    packet = head + raw + body
    decode_packet(packet)  # the same rules both ways: an invalid packet is never produced
    return packet


def packet_bytes(msg_type: MessageType, body_len: int = 0) -> int:
    """Bytes on the wire for one packet of ``msg_type`` carrying ``body_len`` body bytes."""
    fixed = metadata_len(MessageType(msg_type))
    if fixed is None:
        raise WireError("msg_type", f"{MessageType(msg_type).name} has no fixed metadata length")
    return HEADER_LEN + fixed + body_len
