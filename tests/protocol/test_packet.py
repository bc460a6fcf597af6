"""Whole packets: header rules, length consistency, CACHE_PUT body length, and byte counts."""

from __future__ import annotations

import pytest

from nnrpsim.protocol import (
    MessageType,
    WireError,
    decode_packet,
    decode_packets,
    encode_packet,
    frame_submit_bytes,
    inline_object_bytes,
    packet_bytes,
)
from tests.protocol.test_rules import ACK, invalidate_fields

PUT = {
    "cache_namespace": 1,
    "object_kind": 7,
    "cache_key_hi": 2,
    "cache_key_lo": 3,
    "ttl_ms": 30_000,
    "object_bytes": 5,
    "codec_bitmap": 3,
    "flags": 1,
}


def _put_packet() -> bytearray:
    return bytearray(encode_packet(MessageType.CACHE_PUT, PUT, b"hello", session_id=9))


def test_cache_put_packet_round_trip():
    packet = decode_packet(bytes(_put_packet()))
    assert packet.msg_type is MessageType.CACHE_PUT
    assert packet.header["meta_len"] == 40 and packet.header["body_len"] == 5
    assert packet.header["session_id"] == 9
    assert packet.metadata == PUT and packet.body == b"hello"


@pytest.mark.parametrize(
    ("offset", "value", "field"),
    [
        (0, ord("X"), "magic"),
        (4, 2, "version_major"),
        (5, 1, "wire_format"),
        (6, 0x7F, "msg_type"),
        (7, 41, "header_len"),
        (8, 0x40, "flags"),
        (12, 41, "body_len"),  # meta_len 41: 40 + 41 + 5 != length
        (16, 6, "body_len"),
    ],
)
def test_header_rules(offset, value, field):
    raw = _put_packet()
    raw[offset] = value
    with pytest.raises(WireError) as err:
        decode_packet(bytes(raw))
    assert err.value.field == field


@pytest.mark.parametrize(
    ("magic", "shown"), [(b"\0\0\0\0", "00000000"), (b"NNRX", "4e4e5258 ('NNRX')")]
)
def test_a_wrong_magic_is_shown_as_the_hex_it_was_given(magic, shown):
    raw = _put_packet()
    raw[0:4] = magic  # NULs included: a numpy item of the field would drop them
    with pytest.raises(WireError) as err:
        decode_packet(bytes(raw))
    assert str(err.value) == f"magic: must be 4e4e5250 ('NNRP') (got {shown})"


def test_cache_put_body_must_equal_object_bytes():
    with pytest.raises(WireError, match="object_bytes"):
        encode_packet(MessageType.CACHE_PUT, PUT, b"hell")


def test_metadata_length_must_match_the_message_type():
    raw = encode_packet(MessageType.PING, b"")
    assert decode_packet(raw).metadata is None
    with pytest.raises(WireError, match="meta_len"):
        encode_packet(MessageType.FRAME_SUBMIT, b"\0" * 71)


@pytest.mark.parametrize(
    ("msg_type", "fields"),
    [
        (MessageType.CACHE_ACK, ACK),
        (MessageType.CACHE_INVALIDATE, invalidate_fields("object_key", ns=1, hi=1, lo=2)),
    ],
    ids=["ack", "invalidate"],
)
def test_cache_ack_and_invalidate_have_no_body(msg_type, fields):
    assert decode_packet(encode_packet(msg_type, fields)).body == b""
    with pytest.raises(WireError, match=f"body_len: {msg_type.name} carries no body, got 1 bytes"):
        encode_packet(msg_type, fields, b"x")


@pytest.mark.parametrize("size", [4, 39])
def test_truncated_packet(size):
    with pytest.raises(WireError, match=f"header: a packet needs at least 40 bytes, got {size}$"):
        decode_packet(bytes(_put_packet()[:size]))


def test_byte_counts_follow_the_layouts():
    assert packet_bytes(MessageType.CACHE_PUT, 4096) == 40 + 40 + 4096
    assert packet_bytes(MessageType.CACHE_ACK) == 80
    assert packet_bytes(MessageType.CACHE_INVALIDATE) == 72
    assert (
        inline_object_bytes(1) == 24
        and inline_object_bytes(8) == 24
        and inline_object_bytes(9) == 32
    )
    assert frame_submit_bytes([], 3) == 40 + 72 + 32 + 3 * 24
    assert frame_submit_bytes([1000], 0) == 40 + 72 + 32 + 1016


def test_packets_back_to_back_decode_one_by_one():
    put = bytes(_put_packet())
    ping = encode_packet(MessageType.PING, b"")
    assert [p.msg_type for p in decode_packets(put + ping + put)] == [
        MessageType.CACHE_PUT,
        MessageType.PING,
        MessageType.CACHE_PUT,
    ]
    assert decode_packets(b"") == []
    broken = bytearray(put + put)
    broken[len(put) + 40 + 4] = 0xFF  # the second's object_kind
    with pytest.raises(WireError, match=f"in packet 1 \\(from byte {len(put)}\\)$") as err:
        decode_packets(bytes(broken))
    assert err.value.field == "object_kind"
