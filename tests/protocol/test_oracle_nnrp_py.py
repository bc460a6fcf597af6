"""nnrp-py (the Python SDK) as the wire oracle: same bytes for valid blocks, same rejections.

Skipped where the x86_64-only wheel cannot be imported.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from nnrpsim.protocol import (
    CACHE_ACK,
    CACHE_INVALIDATE,
    CACHE_PUT,
    OBJECT_REFERENCE,
    InvalidateScope,
    WireError,
    decode_batch,
    decode_block,
    encode_batch,
    encode_block,
)
from nnrpsim.protocol.codec import record_to_dict
from tests.protocol.blocks import random_valid

control = pytest.importorskip("nnrp.core.messages.control")
data = pytest.importorskip("nnrp.core.messages.data")

N = 10_000


def _sdk_orb(f):
    return data.ObjectReferenceBlock(
        f["object_kind"], f["ref_flags"], f["cache_namespace"], f["cache_key_hi"], f["cache_key_lo"]
    )


def _sdk_put(f):
    return control.CachePutMetadata(
        cache_namespace=f["cache_namespace"],
        cache_key_hi=f["cache_key_hi"],
        cache_key_lo=f["cache_key_lo"],
        object_kind=f["object_kind"],
        ttl_ms=f["ttl_ms"],
        object_bytes=f["object_bytes"],
        codec_bitmap=f["codec_bitmap"],
        flags=f["flags"],
    )


def _sdk_ack(f):
    return control.CacheAckMetadata(
        cache_namespace=f["cache_namespace"],
        cache_key_hi=f["cache_key_hi"],
        cache_key_lo=f["cache_key_lo"],
        status=f["status"],
        accepted_ttl_ms=f["accepted_ttl_ms"],
        max_object_bytes=f["max_object_bytes"],
        detail_code=f["detail_code"],
    )


def _sdk_invalidate(f):
    return control.CacheInvalidateMetadata(
        invalidate_scope=f["invalidate_scope"],
        cache_namespace=f["cache_namespace"],
        cache_key_hi=f["cache_key_hi"],
        cache_key_lo=f["cache_key_lo"],
        reason_code=f["reason_code"],
    )


CASES = {
    "orb": (OBJECT_REFERENCE, _sdk_orb, data.ObjectReferenceBlock),
    "cache-put": (CACHE_PUT, _sdk_put, control.CachePutMetadata),
    "cache-ack": (CACHE_ACK, _sdk_ack, control.CacheAckMetadata),
    "cache-invalidate": (CACHE_INVALIDATE, _sdk_invalidate, control.CacheInvalidateMetadata),
}


def _sdk_accepts(sdk_class, raw: bytes) -> bool:
    try:
        sdk_class.unpack(raw)
    except (ValueError, struct.error):
        return False
    return True


def _nnrpsim_accepts(layout, raw: bytes) -> bool:
    try:
        decode_block(layout, raw)
    except WireError:
        return False
    return True


def _known_stricter(layout, raw: bytes) -> bool:
    """nnrpsim requires a kind code 1-9 in key_hi for object_kind scope; nnrp-py takes any u32."""
    if layout is not CACHE_INVALIDATE:
        return False
    scope, _, hi, _, _, reserved = struct.unpack("<IIQQII", raw)
    return scope == InvalidateScope.OBJECT_KIND and reserved == 0 and hi <= 0xFFFF_FFFF


@pytest.mark.parametrize("block", sorted(CASES))
def test_random_valid_blocks_encode_byte_for_byte_like_nnrp_py(block):
    layout, build, sdk_class = CASES[block]
    records = random_valid(layout, N, np.random.default_rng(20261130))
    ours = encode_batch(layout, records)
    theirs = b"".join(build(record_to_dict(r)).pack() for r in records)
    assert ours == theirs
    decoded = decode_batch(layout, theirs)
    for i in range(0, N, 997):
        sdk = sdk_class.unpack(theirs[i * layout.size : (i + 1) * layout.size])
        for name, value in record_to_dict(decoded[i]).items():
            if hasattr(sdk, name):
                assert int(getattr(sdk, name)) == value, name
        assert (
            encode_block(layout, record_to_dict(decoded[i]))
            == build(record_to_dict(decoded[i])).pack()
        )


@pytest.mark.parametrize("block", sorted(CASES))
def test_mutated_blocks_are_rejected_exactly_when_nnrp_py_rejects(block):
    layout, _, sdk_class = CASES[block]
    rng = np.random.default_rng(7)
    records = random_valid(layout, N, rng)
    raw = bytearray(records.tobytes())
    positions = rng.integers(0, layout.size, N) + np.arange(N) * layout.size
    raw_view = np.frombuffer(raw, dtype=np.uint8)
    raw_view[positions] = rng.integers(0, 256, N, dtype=np.uint8)
    rejected = 0
    for i in range(N):
        one = bytes(raw[i * layout.size : (i + 1) * layout.size])
        ours, theirs = _nnrpsim_accepts(layout, one), _sdk_accepts(sdk_class, one)
        rejected += not ours
        if ours != theirs:
            assert not ours and theirs and _known_stricter(layout, one), one.hex()
    assert rejected > N // 100  # the mutations really exercised the rejection paths


def test_nnrpsim_is_stricter_than_nnrp_py_only_for_kind_selector():
    zero_kind = struct.pack("<IIQQII", InvalidateScope.OBJECT_KIND, 5, 0, 0, 3, 0)
    assert _sdk_accepts(control.CacheInvalidateMetadata, zero_kind)
    with pytest.raises(WireError, match="cache_key_hi"):
        decode_block(CACHE_INVALIDATE, zero_kind)
