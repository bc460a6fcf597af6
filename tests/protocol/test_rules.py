"""Field rules the spec states one by one: identity widths, enums, flags, scopes, lease edges."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from nnrpsim.protocol import (
    CACHE_ACK,
    CACHE_INVALIDATE,
    CACHE_PUT,
    OBJECT_REFERENCE,
    SESSION_OPEN,
    U32_MAX,
    U64_MAX,
    CacheErrorCode,
    CacheIdentity,
    CacheObjectKind,
    Lease,
    OwnerScope,
    WireError,
    cache_object_bitmap,
    decode_block,
    encode_block,
    expires_at_ms,
    is_live,
    saturating_add_u64,
    saturating_add_u64_array,
)

PUT = {
    "cache_namespace": 1,
    "object_kind": 7,
    "cache_key_hi": 2,
    "cache_key_lo": 3,
    "ttl_ms": 30_000,
    "object_bytes": 4096,
    "codec_bitmap": 3,
    "flags": 0,
}


def test_identity_widths_are_enforced_not_truncated():
    with pytest.raises(WireError, match="cache_namespace"):
        CacheIdentity(U32_MAX + 1, 0, 0, CacheObjectKind.PROMPT_SEGMENT)
    with pytest.raises(WireError, match="cache_key_lo"):
        CacheIdentity(1, 0, U64_MAX + 1, CacheObjectKind.PROMPT_SEGMENT)
    with pytest.raises(WireError, match="object_kind"):
        CacheIdentity(1, 0, 0, 10)
    with pytest.raises(WireError, match="object_kind"):
        CacheIdentity(1, 0, 0, 0)


@given(key=st.integers(0, 2**128 - 1), ns=st.integers(0, U32_MAX), kind=st.integers(1, 9))
def test_identity_128_bit_key_is_one_value(key, ns, kind):
    identity = CacheIdentity.from_key(ns, key, kind)
    assert identity.key == key
    raw = encode_block(OBJECT_REFERENCE, identity.orb_fields())
    decoded = decode_block(OBJECT_REFERENCE, raw)
    assert (decoded["cache_key_hi"] << 64) | decoded["cache_key_lo"] == key
    assert decoded["object_kind"] == identity.orb_object_kind == kind


def test_object_kind_bitmap():
    assert cache_object_bitmap(1, 2, 3) == 0x7
    assert cache_object_bitmap(*CacheObjectKind) == 0x1FF


@pytest.mark.parametrize(
    ("layout", "changes", "field"),
    [
        (CACHE_PUT, {"object_kind": 0}, "object_kind"),
        (CACHE_PUT, {"object_kind": 10}, "object_kind"),
        (CACHE_PUT, {"flags": 4}, "flags"),
        (CACHE_PUT, {"ttl_ms": U32_MAX + 1}, "ttl_ms"),
        (CACHE_PUT, {"ttl_ms": -1}, "ttl_ms"),
        (CACHE_PUT, {"ttl_ms": 1.5}, "ttl_ms"),
        (CACHE_PUT, {"ttl_ms": True}, "ttl_ms"),  # a bool is no integer of the wire
        (CACHE_PUT, {"renew": 1}, "renew"),
    ],
)
def test_cache_put_rejections_name_the_field(layout, changes, field):
    with pytest.raises(WireError) as err:
        encode_block(layout, {**PUT, **changes})
    assert err.value.field == field


def test_missing_field_is_named():
    fields = dict(PUT)
    del fields["codec_bitmap"]
    with pytest.raises(WireError, match="codec_bitmap: missing"):
        encode_block(CACHE_PUT, fields)


ACK = {
    "cache_namespace": 1,
    "status": 0,
    "cache_key_hi": 1,
    "cache_key_lo": 2,
    "accepted_ttl_ms": 1,
    "max_object_bytes": 1,
    "detail_code": 0,
}


def test_reserved_fields_must_be_zero_both_ways():
    raw = bytearray(encode_block(CACHE_ACK, ACK))
    with pytest.raises(WireError, match="reserved"):
        encode_block(CACHE_ACK, {**ACK, "reserved": 1})
    raw[36] = 1
    with pytest.raises(WireError, match="reserved"):
        decode_block(CACHE_ACK, bytes(raw))
    with pytest.raises(WireError, match="status"):
        encode_block(CACHE_ACK, {**ACK, "status": 3})


def invalidate_fields(scope, ns=0, hi=0, lo=0):
    return {
        "invalidate_scope": scope,
        "cache_namespace": ns,
        "cache_key_hi": hi,
        "cache_key_lo": lo,
        "reason_code": 77,
    }


@pytest.mark.parametrize(
    ("fields", "bad_field"),
    [
        (invalidate_fields(0, ns=1), "cache_namespace"),
        (invalidate_fields(0, hi=1), "cache_key_hi"),
        (invalidate_fields(1, ns=1, lo=1), "cache_key_lo"),
        (invalidate_fields(1, ns=1, hi=1), "cache_key_hi"),
        (invalidate_fields(2, ns=1, hi=(1 << 32) | 7), "cache_key_hi"),
        (invalidate_fields(2, ns=1, hi=7, lo=1), "cache_key_lo"),
        (invalidate_fields(2, ns=1, hi=0), "cache_key_hi"),
        (invalidate_fields(4), "invalidate_scope"),
    ],
)
def test_invalidate_scope_table_violations(fields, bad_field):
    with pytest.raises(WireError) as err:
        encode_block(CACHE_INVALIDATE, fields)
    assert err.value.field == bad_field


@pytest.mark.parametrize(
    "fields",
    [
        invalidate_fields(0),
        invalidate_fields(1, ns=9),
        invalidate_fields(2, ns=9, hi=7),
        invalidate_fields(3, ns=9, hi=U64_MAX, lo=U64_MAX),
        invalidate_fields("object_key", ns=9, hi=1, lo=2),
    ],
)
def test_invalidate_scope_table_accepts_legal_identities(fields):
    raw = encode_block(CACHE_INVALIDATE, fields)
    assert decode_block(CACHE_INVALIDATE, raw)["reason_code"] == 77


def test_session_open_flag_bits_4_to_7_are_rejected():
    fields = {name: 0 for name in SESSION_OPEN.names}
    fields["session_flags"] = 0x04
    fields["lease_ttl_hint_ms"] = 30_000
    assert (
        decode_block(SESSION_OPEN, encode_block(SESSION_OPEN, fields))["lease_ttl_hint_ms"]
        == 30_000
    )
    with pytest.raises(WireError, match="session_flags"):
        encode_block(SESSION_OPEN, {**fields, "session_flags": 0x10})


def test_expiry_edges():
    assert expires_at_ms(1000, 500) == 1500
    assert is_live(1499, 1000, 500)
    assert not is_live(1500, 1000, 500)
    assert not is_live(1000, 1000, 0)  # TTL 0 is expired at once
    assert expires_at_ms(U64_MAX - 10, U32_MAX) == U64_MAX
    assert not is_live(U64_MAX, U64_MAX - 10, U32_MAX)
    assert is_live(U64_MAX - 1, U64_MAX - 10, U32_MAX)


@given(granted=st.integers(0, U64_MAX), ttl=st.integers(0, U32_MAX), now=st.integers(0, U64_MAX))
def test_saturating_expiry_matches_arbitrary_precision(granted, ttl, now):
    exact = granted + ttl
    assert expires_at_ms(granted, ttl) == min(exact, U64_MAX)
    assert is_live(now, granted, ttl) == (now < min(exact, U64_MAX))
    assert int(saturating_add_u64_array([granted], ttl)[0]) == saturating_add_u64(granted, ttl)


@given(pairs=st.lists(st.tuples(st.integers(0, U64_MAX), st.integers(0, U32_MAX)), min_size=1))
@example(pairs=[(U64_MAX - 10, 10), (U64_MAX - 9, 10)])  # the last that fits, the first that wraps
@example(pairs=[(U64_MAX - 1, 0), (U64_MAX - 5, 10)])  # one wraps: the other keeps its sum
def test_array_expiry_saturates_only_the_items_that_wrap(pairs):
    granted, ttl = zip(*pairs, strict=True)
    got = saturating_add_u64_array(np.array(granted, np.uint64), np.array(ttl, np.uint32))
    assert got.tolist() == [saturating_add_u64(g, t) for g, t in pairs]


def test_lease_outcomes_and_renewal_keep_lease_id():
    identity = CacheIdentity(1, 2, 3, CacheObjectKind.TOOL_SCHEMA)
    lease = Lease(identity, 4, 99, OwnerScope.SESSION, 5, granted_at_ms=1000, ttl_ms=500)
    assert lease.check(1499, 4) is CacheErrorCode.NONE
    assert lease.check(1499, 5) is CacheErrorCode.VERSION_MISMATCH
    assert lease.check(1499, 0) is CacheErrorCode.VERSION_MISMATCH  # version 0 is a version
    assert lease.check(1499) is CacheErrorCode.NONE  # (no version asked for)
    assert lease.check(1500, 4) is CacheErrorCode.LEASE_EXPIRED
    renewed = lease.renewed(1400, 500)
    assert renewed.lease_id == 99 and renewed.expires_at_ms == 1900
    assert renewed.check(1600, 4) is CacheErrorCode.NONE
    with pytest.raises(ValueError):
        Lease(identity, 4, 99, 3, 5, 0, 0)
