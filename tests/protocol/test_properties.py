"""Properties of the codec: round trips, and that garbage only ever raises WireError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.protocol import (
    BLOCKS,
    HEADER,
    METADATA,
    MessageType,
    WireError,
    decode_batch,
    decode_block,
    decode_packet,
    encode_block,
    encode_packet,
)
from nnrpsim.protocol.codec import _passes_screen, record_to_dict
from tests.protocol.blocks import random_valid, valid_submit

DERIVED_HEADER_FIELDS = {"magic", "version_major", "wire_format", "msg_type", "header_len"}
DERIVED_HEADER_FIELDS |= {"meta_len", "body_len"}
LAYOUTS = list({layout.name: layout for layout in [*BLOCKS.values(), *METADATA.values()]}.values())


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_encode_decode_round_trip(layout, seed):
    (record,) = random_valid(layout, 1, np.random.default_rng(seed))
    fields = record_to_dict(record)
    raw = encode_block(layout, fields)
    assert len(raw) == layout.size
    assert decode_block(layout, raw) == fields


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
@settings(max_examples=200, deadline=None)
@given(raw=st.binary(min_size=0, max_size=100))
def test_random_bytes_decode_or_raise_wire_error(layout, raw):
    try:
        fields = decode_block(layout, raw)
    except WireError as err:
        assert err.field and err.reason
    else:
        assert encode_block(layout, fields) == raw


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(min_size=0, max_size=200))
def test_random_packets_decode_or_raise_wire_error(raw):
    try:
        packet = decode_packet(raw)
    except WireError:
        return
    header = {k: v for k, v in packet.header.items() if k not in DERIVED_HEADER_FIELDS}
    metadata = packet.metadata if packet.metadata is not None else packet.metadata_raw
    assert encode_packet(packet.msg_type, metadata, packet.body, **header) == raw


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), position=st.integers(0, 10_000), value=st.integers(0, 255))
def test_mutated_packets_decode_or_raise_wire_error(seed, position, value):
    layout = METADATA[sorted(METADATA)[seed % len(METADATA)]]
    msg_type = next(t for t, lay in METADATA.items() if lay is layout)
    rng = np.random.default_rng(seed)
    fields = record_to_dict(random_valid(layout, 1, rng)[0])
    body = b"x" * (fields["object_bytes"] % 64) if "object_bytes" in fields else b""
    if "object_bytes" in fields:
        fields["object_bytes"] = len(body)
    if msg_type is MessageType.FRAME_SUBMIT:
        fields, body = valid_submit(fields, rng)
    packet = bytearray(encode_packet(msg_type, fields, body))
    packet[position % len(packet)] = value
    try:
        decoded = decode_packet(bytes(packet))
    except WireError:
        return
    assert decoded.msg_type == packet[6]


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    cut=st.integers(1, 23),
)
def test_batch_decode_rejects_partial_blocks_and_names_first_bad_block(seed, cut):
    layout = BLOCKS["orb"]
    records = random_valid(layout, 8, np.random.default_rng(seed))
    raw = records.tobytes()
    with pytest.raises(WireError, match="whole number"):
        decode_batch(layout, raw[:-cut])
    records[5]["object_kind"] = 0
    records[6]["ref_flags"] = 1
    with pytest.raises(WireError) as err:
        decode_batch(layout, records.tobytes())
    assert (err.value.field, err.value.index) == ("object_kind", 5)


@pytest.mark.parametrize("layout", [HEADER, *LAYOUTS], ids=lambda layout: layout.name)
@pytest.mark.parametrize("seed", range(2))
def test_a_batch_is_refused_exactly_where_its_one_broken_block_is_and_why(layout, seed):
    """Every byte of one block of six set to each of four values: the batch's fast screen and
    its explanation of a refusal agree with decoding that block alone (the header's message
    type, whose values have gaps, is the screen's one set-membership test). The screen is
    exact: it passes every valid batch, so none pays for the explanation."""
    records = random_valid(layout, 6, np.random.default_rng(seed))
    at, start = 3, 3 * layout.size
    for position in range(start, start + layout.size):
        for value in (0, 1, 0x7F, 0xFF):
            raw = bytearray(records.tobytes())
            raw[position] = value
            screened = _passes_screen(layout, np.frombuffer(raw, layout.dtype))
            try:
                decode_block(layout, bytes(raw[start : start + layout.size]))
            except WireError as alone:
                assert not screened
                with pytest.raises(WireError) as err:
                    decode_batch(layout, bytes(raw))
                assert (err.value.field, err.value.reason) == (alone.field, alone.reason)
                assert err.value.index == at
            else:
                assert screened
                assert decode_batch(layout, bytes(raw)).tobytes() == raw


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from([0, 1, 5, 9, 10, 255, 2**16 - 1]),
    flags=st.sampled_from([0, 1, 2**15, 2**16 - 1]),
)
def test_batch_decode_accepts_exactly_the_kinds_in_range_with_no_flags(seed, kind, flags):
    # the fast screen folds both fields into one unsigned word checked against [1, 9]: a kind
    # below 1 must wrap past the range, a flag bit must push the word above it
    layout = BLOCKS["orb"]
    records = random_valid(layout, 50, np.random.default_rng(seed))
    at = seed % 50
    records[at]["object_kind"], records[at]["ref_flags"] = kind, flags
    if 1 <= kind <= 9 and flags == 0:
        assert len(decode_batch(layout, records.tobytes())) == 50
    else:
        with pytest.raises(WireError) as err:
            decode_batch(layout, records.tobytes())
        assert err.value.index == at
