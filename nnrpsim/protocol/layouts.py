"""Wire layouts as little-endian numpy structured dtypes, with the rules each block must obey.

One :class:`Layout` per fixed-width block of shared/spec/nnrp-cache.md; ``codec`` turns the rules
into validation. Offsets are implicit in field order: every dtype is packed and its size is
checked against the spec at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from .codes import (
    CACHE_OBJECT_BITMAP_MASK,
    MISS_REASON_PRIVATE_MIN,
    OBJECT_REF_MASK,
    BudgetPolicy,
    CacheAckStatus,
    CacheObjectKind,
    CachePutFlags,
    CacheReferenceFlags,
    ErrorScope,
    HeaderFlags,
    InvalidateScope,
    MessageType,
    MissReason,
    PriorityClass,
    ReuseScope,
    SessionFlags,
    SessionFlagsAck,
    SessionStatus,
    SubmitMode,
)

Violation = tuple[str, str, np.ndarray]
"""(field, reason, boolean mask of the bad blocks)."""


@dataclass(frozen=True)
class Layout:
    """A fixed-width block: its fields in wire order and the rules on their values."""

    name: str
    fields: tuple[tuple[str, str], ...]
    size: int
    fixed: Mapping[str, object] = field(default_factory=dict)
    choices: Mapping[str, type[IntEnum]] = field(default_factory=dict)
    masks: Mapping[str, int] = field(default_factory=dict)
    cross_check: Callable[[np.ndarray], Iterator[Violation]] | None = None
    named: Mapping[str, type[IntEnum]] = field(default_factory=dict)
    """Enums whose member names the encoder accepts beyond ``choices`` (validated elsewhere)."""
    dtype: np.dtype = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        dtype = np.dtype(list(self.fields))
        if dtype.itemsize != self.size:
            raise AssertionError(
                f"{self.name}: dtype is {dtype.itemsize} bytes, spec says {self.size}"
            )
        object.__setattr__(self, "dtype", dtype)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)


def _u(bits: int) -> str:
    return {8: "u1", 16: "<u2", 32: "<u4", 64: "<u8"}[bits]


U8, U16, U32, U64 = _u(8), _u(16), _u(32), _u(64)
MAGIC = b"NNRP"
HEADER_LEN = 40

HEADER = Layout(
    "header",
    (
        ("magic", "S4"),
        ("version_major", U8),
        ("wire_format", U8),
        ("msg_type", U8),
        ("header_len", U8),
        ("flags", U32),
        ("meta_len", U32),
        ("body_len", U32),
        ("session_id", U32),
        ("frame_id", U32),
        ("view_id", U16),
        ("route_id", U16),
        ("trace_id", U64),
    ),
    HEADER_LEN,
    fixed={"magic": MAGIC, "version_major": 1, "wire_format": 0, "header_len": HEADER_LEN},
    choices={"msg_type": MessageType},
    masks={"flags": int(sum(HeaderFlags))},
)

OBJECT_REFERENCE = Layout(
    "object_reference",
    (
        ("object_kind", U16),
        ("ref_flags", U16),
        ("cache_namespace", U32),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
    ),
    24,
    fixed={"ref_flags": 0},
    choices={"object_kind": CacheObjectKind},
)

CACHE_PUT = Layout(
    "cache_put",
    (
        ("cache_namespace", U32),
        ("object_kind", U32),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
        ("ttl_ms", U32),
        ("object_bytes", U32),
        ("codec_bitmap", U32),
        ("flags", U32),
    ),
    40,
    choices={"object_kind": CacheObjectKind},
    masks={"flags": int(sum(CachePutFlags))},
)

CACHE_ACK = Layout(
    "cache_ack",
    (
        ("cache_namespace", U32),
        ("status", U32),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
        ("accepted_ttl_ms", U32),
        ("max_object_bytes", U32),
        ("detail_code", U32),
        ("reserved", U32),
    ),
    40,
    fixed={"reserved": 0},
    choices={"status": CacheAckStatus},
)


def _invalidate_scope_rules(arr: np.ndarray) -> Iterator[Violation]:
    """The scope table of spec section 5.4: which identity fields must be zero for each scope."""
    scope = arr["invalidate_scope"]
    ns, hi, lo = arr["cache_namespace"], arr["cache_key_hi"], arr["cache_key_lo"]
    whole = scope == InvalidateScope.WHOLE_SESSION
    by_ns = scope == InvalidateScope.NAMESPACE
    by_kind = scope == InvalidateScope.OBJECT_KIND
    yield "cache_namespace", "must be 0 for invalidate_scope whole_session", whole & (ns != 0)
    yield (
        "cache_key_hi",
        "must be 0 for invalidate_scope whole_session or namespace",
        ((whole | by_ns) & (hi != 0)),
    )
    yield (
        "cache_key_lo",
        "must be 0 unless invalidate_scope is object_key",
        ((whole | by_ns | by_kind) & (lo != 0)),
    )
    kind = hi & np.uint64(0xFFFF_FFFF)
    yield (
        "cache_key_hi",
        "must carry an object_kind code 1-9 (high 32 bits 0) for scope object_kind",
        (by_kind & ((hi >> np.uint64(32) != 0) | (kind < 1) | (kind > max(CacheObjectKind)))),
    )


CACHE_INVALIDATE = Layout(
    "cache_invalidate",
    (
        ("invalidate_scope", U32),
        ("cache_namespace", U32),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
        ("reason_code", U32),
        ("reserved", U32),
    ),
    32,
    fixed={"reserved": 0},
    choices={"invalidate_scope": InvalidateScope},
    cross_check=_invalidate_scope_rules,
)

CLIENT_HELLO = Layout(
    "client_hello",
    (
        ("min_version_major", U8),
        ("max_version_major", U8),
        ("supported_wire_format_bitmap", U16),
        ("supported_profile_bitmap", U32),
        ("supported_payload_kind_bitmap", U32),
        ("supported_codec_bitmap", U32),
        ("supported_compression_bitmap", U32),
        ("supported_dtype_bitmap", U32),
        ("supported_layout_bitmap", U32),
        ("cache_digest_bitmap", U16),
        ("cache_object_bitmap", U16),
        ("cache_namespace_count", U16),
        ("max_lane_count", U16),
        ("max_cache_entries", U32),
        ("max_cache_bytes", U32),
        ("target_cadence_x100", U16),
        ("latency_budget_ms", U16),
        ("quality_tier", U16),
        ("degrade_policy", U16),
        ("requested_session_id", U32),
        ("auth_bytes", U32),
        ("control_extension_bytes", U32),
    ),
    64,
    masks={"cache_object_bitmap": CACHE_OBJECT_BITMAP_MASK},
)

SERVER_HELLO_ACK = Layout(
    "server_hello_ack",
    (
        ("selected_version_major", U8),
        ("selected_wire_format", U8),
        ("auth_status", U8),
        ("reserved0", U8),
        ("session_id", U32),
        ("accepted_profile_bitmap", U32),
        ("accepted_payload_kind_bitmap", U32),
        ("accepted_codec_bitmap", U32),
        ("accepted_compression_bitmap", U32),
        ("accepted_dtype_bitmap", U32),
        ("accepted_layout_bitmap", U32),
        ("cache_digest_bitmap", U32),
        ("cache_object_bitmap", U32),
        ("max_cache_entries", U32),
        ("max_cache_bytes", U32),
        ("max_lane_count", U16),
        ("max_concurrent_frames", U16),
        ("target_cadence_x100", U16),
        ("latency_budget_ms", U16),
        ("quality_tier", U16),
        ("degrade_policy", U16),
        ("max_body_bytes", U32),
        ("token_ttl_ms", U32),
        ("retry_after_ms", U32),
        ("control_extension_bytes", U32),
        ("server_flags", U32),
    ),
    80,
    fixed={"reserved0": 0},
    masks={"cache_object_bitmap": CACHE_OBJECT_BITMAP_MASK, "server_flags": 0x1},
)

SESSION_OPEN = Layout(
    "session_open",
    (
        ("requested_session_id", U32),
        ("profile_id", U16),
        ("priority_class", U8),
        ("session_flags", U8),
        ("schema_id", U32),
        ("schema_version", U32),
        ("default_deadline_ms", U32),
        ("max_in_flight_operations", U16),
        ("reserved0", U16),
        ("lease_ttl_hint_ms", U32),
        ("resume_token_bytes", U32),
        ("auth_bytes", U32),
        ("session_extension_bytes", U32),
        ("client_session_tag", U64),
    ),
    48,
    fixed={"reserved0": 0},
    choices={"priority_class": PriorityClass},
    masks={"session_flags": int(sum(SessionFlags))},
)

SESSION_OPEN_ACK = Layout(
    "session_open_ack",
    (
        ("session_id", U32),
        ("accepted_profile_id", U16),
        ("accepted_priority_class", U8),
        ("session_status", U8),
        ("schema_id", U32),
        ("schema_version", U32),
        ("granted_operation_credit", U16),
        ("max_in_flight_operations", U16),
        ("lease_ttl_ms", U32),
        ("resume_window_ms", U32),
        ("resume_token_bytes", U32),
        ("session_extension_bytes", U32),
        ("server_session_tag", U64),
        ("route_scope_id", U32),
        ("session_error_code", U32),
        ("session_flags_ack", U32),
    ),
    56,
    choices={"accepted_priority_class": PriorityClass, "session_status": SessionStatus},
    masks={"session_flags_ack": int(sum(SessionFlagsAck))},
)


class _Boolean(IntEnum):
    FALSE = 0
    TRUE = 1


ERROR = Layout(
    "error",
    (
        ("error_code", U32),
        ("error_scope", U32),
        ("is_fatal", U32),
        ("retry_after_ms", U32),
        ("related_session_id", U32),
        ("related_frame_id", U32),
        ("related_view_id", U32),
        ("diagnostic_bytes", U32),
    ),
    32,
    choices={"error_scope": ErrorScope, "is_fatal": _Boolean},
)

CACHE_REFERENCE = Layout(
    "cache_reference",
    (
        ("cache_namespace", U32),
        ("profile_id", U16),
        ("reuse_scope", U16),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
        ("lease_id", U64),
        ("producer_trace_id", U64),
        ("expiration_hint_ms", U32),
        ("metadata_bytes", U32),
        ("flags", U32),
        ("reserved", U32),
    ),
    56,
    fixed={"reserved": 0},
    choices={"reuse_scope": ReuseScope},
    masks={"flags": int(sum(CacheReferenceFlags))},
)


def _miss_reason_rule(arr: np.ndarray) -> Iterator[Violation]:
    reason = arr["miss_reason"]
    yield (
        "miss_reason",
        "unknown MissReason value (0-7 or private 0x8000-0xffff)",
        ((reason > max(MissReason)) & (reason < MISS_REASON_PRIVATE_MIN)),
    )


CACHE_MISS = Layout(
    "cache_miss",
    (
        ("cache_namespace", U32),
        ("profile_id", U16),
        ("miss_reason", U16),
        ("cache_key_hi", U64),
        ("cache_key_lo", U64),
        ("diagnostic_bytes", U32),
        ("reserved", U32),
    ),
    32,
    fixed={"reserved": 0},
    cross_check=_miss_reason_rule,
    named={"miss_reason": MissReason},
)


def _frame_submit_rules(arr: np.ndarray) -> Iterator[Violation]:
    """Spec section 13: a non-zero operation; the mask by submit mode; a referenced tile
    index (slot bit 1) carries no tile-index bytes."""
    mode, mask = arr["submit_mode"], arr["object_ref_mask"]
    yield "operation_id", "must be non-zero", arr["operation_id"] == 0
    yield (
        "object_ref_mask",
        "must be 0 for submit_mode inline",
        (mode == SubmitMode.INLINE) & (mask != 0),
    )
    yield (
        "object_ref_mask",
        "must be non-zero for submit_mode reference or mixed",
        (mode != SubmitMode.INLINE) & (mask == 0),
    )
    yield (
        "tile_index_bytes",
        "must be 0 when the tile index block is referenced (object_ref_mask bit 1)",
        ((mask & 0x2) != 0) & (arr["tile_index_bytes"] != 0),
    )


FRAME_SUBMIT = Layout(
    "frame_submit",
    (
        # (``bytes_*``: the tensor profile's own fields, which the cache spec does not list;
        # carried as they are, unchecked)
        ("bytes_0_27", "V28"),
        ("camera_bytes", U32),
        ("tile_index_bytes", U32),
        ("bytes_36_39", "V4"),
        ("operation_id", U64),
        ("bytes_48_51", "V4"),
        ("submit_mode", U8),
        ("budget_policy", U8),
        ("loss_tolerance_policy", U8),
        ("bytes_55", "V1"),
        ("object_ref_mask", U32),
        ("dependency_frame_id", U32),
        ("payload_kind_bitmap", U32),
        ("payload_frame_count", U16),
        ("bytes_70_71", "V2"),
    ),
    72,
    choices={"submit_mode": SubmitMode},
    masks={"budget_policy": int(sum(BudgetPolicy)), "object_ref_mask": OBJECT_REF_MASK},
    cross_check=_frame_submit_rules,
)

TYPED_PAYLOAD_DESCRIPTOR_LEN = 24
EXTENSION_DESCRIPTOR_LEN = 16


def _prelude_rules(arr: np.ndarray) -> Iterator[Violation]:
    """Regions of whole descriptors and ORBs (spec section 13)."""
    for name, size in (
        ("object_reference_bytes", OBJECT_REFERENCE.size),
        ("typed_payload_descriptor_bytes", TYPED_PAYLOAD_DESCRIPTOR_LEN),
        ("extension_descriptor_bytes", EXTENSION_DESCRIPTOR_LEN),
    ):
        yield name, f"must be a multiple of {size}", arr[name] % size != 0


BODY_REGION_PRELUDE = Layout(
    "body_region_prelude",
    (
        ("inline_object_bytes", U32),
        ("object_reference_bytes", U32),
        ("typed_payload_descriptor_bytes", U32),
        ("typed_payload_frame_bytes", U32),
        ("extension_descriptor_bytes", U32),
        ("extension_payload_bytes", U32),
        ("body_flags", U32),
        ("reserved", U32),
    ),
    32,
    fixed={"body_flags": 0, "reserved": 0},
    cross_check=_prelude_rules,
)

INLINE_OBJECT_HEADER = Layout(
    "inline_object_header",
    (
        ("object_kind", U16),
        ("object_flags", U16),
        ("profile_id", U16),
        ("reserved0", U16),
        ("object_bytes", U32),
        ("reserved1", U32),
    ),
    16,
    fixed={"object_flags": 0, "reserved0": 0, "reserved1": 0},
    choices={"object_kind": CacheObjectKind},
)

BLOCKS: dict[str, Layout] = {
    "orb": OBJECT_REFERENCE,
    "cache-put": CACHE_PUT,
    "cache-ack": CACHE_ACK,
    "cache-invalidate": CACHE_INVALIDATE,
    "cache-reference": CACHE_REFERENCE,
    "cache-miss": CACHE_MISS,
    "frame-submit": FRAME_SUBMIT,
    "body-prelude": BODY_REGION_PRELUDE,
    "inline-object-header": INLINE_OBJECT_HEADER,
}
"""The bare blocks the CLI encodes and decodes, by their command-line names."""

METADATA: dict[MessageType, Layout] = {
    MessageType.CLIENT_HELLO: CLIENT_HELLO,
    MessageType.SERVER_HELLO_ACK: SERVER_HELLO_ACK,
    MessageType.SESSION_OPEN: SESSION_OPEN,
    MessageType.SESSION_OPEN_ACK: SESSION_OPEN_ACK,
    MessageType.ERROR: ERROR,
    MessageType.CACHE_PUT: CACHE_PUT,
    MessageType.CACHE_ACK: CACHE_ACK,
    MessageType.CACHE_INVALIDATE: CACHE_INVALIDATE,
    MessageType.CACHE_REFERENCE: CACHE_REFERENCE,
    MessageType.CACHE_MISS: CACHE_MISS,
    MessageType.FRAME_SUBMIT: FRAME_SUBMIT,
}
"""Messages whose metadata nnrpsim decodes field by field."""

OPAQUE_METADATA_LEN: dict[MessageType, int] = {
    MessageType.SESSION_PATCH: 36,
    MessageType.SESSION_PATCH_ACK: 48,
    MessageType.SESSION_CLOSE: 24,
    MessageType.SESSION_CLOSE_ACK: 16,
    MessageType.RESULT_PUSH: 64,
    MessageType.RESULT_DROP: 0,
    MessageType.FLOW_UPDATE: 32,
    MessageType.RESULT_HINT: 16,
    MessageType.TRANSPORT_PROBE: 16,
    MessageType.TRANSPORT_PROBE_ACK: 16,
    MessageType.SESSION_MIGRATE: 24,
    MessageType.SESSION_MIGRATE_ACK: 24,
}
"""Metadata sizes the spec fixes for messages nnrpsim carries but does not decode field by field."""


def metadata_len(msg_type: MessageType) -> int | None:
    """The fixed metadata length of a message type, or None where the spec fixes none."""
    layout = METADATA.get(msg_type)
    return layout.size if layout is not None else OPAQUE_METADATA_LEN.get(msg_type)
