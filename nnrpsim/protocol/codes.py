"""NNRP/1 enums and codes (shared/spec/nnrp-cache.md sections 2-10), plus nnrpsim's own registries.

The spec defines no registry for CACHE_ACK ``detail_code`` or CACHE_INVALIDATE ``reason_code``:
:class:`DetailCode` and :class:`ReasonCode` are simulator-local u32 values, not normative.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class MessageType(IntEnum):
    """Header byte 6 (spec section 2)."""

    CLIENT_HELLO = 0x01
    SERVER_HELLO_ACK = 0x02
    SESSION_PATCH = 0x03
    SESSION_PATCH_ACK = 0x04
    CLOSE = 0x05
    ERROR = 0x06
    SESSION_OPEN = 0x07
    SESSION_OPEN_ACK = 0x08
    SESSION_CLOSE = 0x09
    SESSION_CLOSE_ACK = 0x0A
    FRAME_SUBMIT = 0x10
    FRAME_CANCEL = 0x11
    RESULT_PUSH = 0x12
    RESULT_DROP = 0x13
    CACHE_PUT = 0x14
    CACHE_ACK = 0x15
    CACHE_INVALIDATE = 0x16
    FLOW_UPDATE = 0x17
    RESULT_HINT = 0x18
    TRANSPORT_PROBE = 0x19
    TRANSPORT_PROBE_ACK = 0x1A
    SESSION_MIGRATE = 0x1B
    SESSION_MIGRATE_ACK = 0x1C
    PING = 0x20
    PONG = 0x21
    CANCEL = 0x30
    ABORT = 0x31
    PRIORITY_UPDATE = 0x32
    DEADLINE = 0x33
    EXPIRE_AT = 0x34
    SUPERSEDE = 0x35
    BUDGET_UPDATE = 0x36
    PROGRESS = 0x37
    PARTIAL_RESULT = 0x38
    BACKPRESSURE = 0x39
    CREDIT_UPDATE = 0x3A
    CAPABILITY_NEGOTIATION = 0x3B
    DEGRADE_PROFILE = 0x3C
    ROUTE_HINT = 0x3D
    EXECUTION_HINT = 0x3E
    TRACE_CONTEXT = 0x3F
    RESULT_DROP_REASON = 0x40
    OBJECT_DECLARE = 0x41
    OBJECT_REF = 0x42
    OBJECT_RELEASE = 0x43
    OBJECT_PATCH = 0x44
    OBJECT_DELTA = 0x45
    CACHE_REFERENCE = 0x46
    CACHE_MISS = 0x47
    ERROR_RECOVERABLE = 0x48
    RETRY_AFTER = 0x49


class HeaderFlags(IntFlag):
    """Common-header flags (spec section 3); known mask 0x3f."""

    ACK_REQUIRED = 0x01
    CAN_DROP = 0x02
    STALE = 0x04
    EOS = 0x08
    RETRANSMIT = 0x10
    KEYFRAME = 0x20


class CacheObjectKind(IntEnum):
    """The cache object-kind registry (spec section 6a); 0 and anything above 9 are rejected."""

    CAMERA_BLOCK = 1
    TILE_INDEX_BLOCK = 2
    TENSOR_SECTION_TABLE = 3
    CODEC_TABLE = 4
    REUSABLE_RESULT_OBJECT = 5
    PAYLOAD_LAYOUT_TEMPLATE = 6
    PROMPT_SEGMENT = 7
    TOOL_SCHEMA = 8
    STRUCTURED_EVENT_SCHEMA = 9


def cache_object_bitmap(*kinds: CacheObjectKind | int) -> int:
    """The CLIENT_HELLO ``cache_object_bitmap`` for these kinds: bit ``kind - 1`` each."""
    bitmap = 0
    for kind in kinds:
        bitmap |= 1 << (CacheObjectKind(kind) - 1)
    return bitmap


CACHE_OBJECT_BITMAP_MASK = cache_object_bitmap(*CacheObjectKind)

OBJECT_REF_SLOTS: tuple[CacheObjectKind, ...] = (
    CacheObjectKind.CAMERA_BLOCK,
    CacheObjectKind.TILE_INDEX_BLOCK,
    CacheObjectKind.TENSOR_SECTION_TABLE,
    CacheObjectKind.PAYLOAD_LAYOUT_TEMPLATE,
)
"""The kinds with a FRAME_SUBMIT ``object_ref_mask`` slot, bit 0 up (spec sections 6a and 13):
the tensor profile's standard objects. The other kinds have none."""
OBJECT_REF_MASK = (1 << len(OBJECT_REF_SLOTS)) - 1


class SubmitMode(IntEnum):
    """FRAME_SUBMIT ``submit_mode`` (spec section 13)."""

    INLINE = 0
    REFERENCE = 1
    MIXED = 2


class BudgetPolicy(IntFlag):
    """FRAME_SUBMIT ``budget_policy`` bits (spec section 13); known mask 0x0f."""

    ALLOW_PARTIAL = 0x01
    ALLOW_STALE_REUSE = 0x02
    ALLOW_DEGRADED = 0x04
    ALLOW_DROP = 0x08


class CacheAckStatus(IntEnum):
    """CACHE_ACK ``status``; accepted and replaced mean the object is ready for reference use."""

    ACCEPTED = 0
    REJECTED = 1
    REPLACED = 2


class InvalidateScope(IntEnum):
    """CACHE_INVALIDATE ``invalidate_scope`` (spec section 5.4)."""

    WHOLE_SESSION = 0
    NAMESPACE = 1
    OBJECT_KIND = 2
    OBJECT_KEY = 3


class CachePutFlags(IntFlag):
    """Cache Put ``flags``; known mask 0x3, other bits rejected. There is no renew bit."""

    PINNED = 0x01
    REUSABLE = 0x02


class CacheErrorCode(IntEnum):
    """ERROR ``error_code`` cache family 0x0003_xxxx (spec section 7)."""

    NONE = 0x00030000
    CACHE_MISS = 0x00030001
    LEASE_EXPIRED = 0x00030002
    VERSION_MISMATCH = 0x00030003
    DEPENDENCY_INVALID = 0x00030004
    SCHEMA_MISMATCH = 0x00030005


LEASE_POLICY_REJECTED = 0x00010005
"""SESSION_OPEN_ACK ``session_error_code`` for a rejected lease policy."""


class ErrorScope(IntEnum):
    """ERROR ``error_scope``."""

    CONNECTION = 0
    SESSION = 1
    FRAME = 2


class OwnerScope(IntEnum):
    """Lease ``owner_scope`` (spec section 10), a public interoperability contract."""

    CONNECTION = 0
    SESSION = 1
    OPERATION = 2


class SessionFlags(IntFlag):
    """SESSION_OPEN ``session_flags``; bits 4-7 are rejected."""

    ALLOW_RESUME = 0x01
    ALLOW_BACKGROUND_RESULTS = 0x02
    ALLOW_CACHE_LEASES = 0x04
    ALLOW_SCHEMA_OVERRIDE = 0x08


class SessionFlagsAck(IntFlag):
    """SESSION_OPEN_ACK ``session_flags_ack``; mask 0x1f."""

    RESUME_ENABLED = 0x01
    BACKGROUND_RESULTS_ENABLED = 0x02
    CACHE_LEASES_ENABLED = 0x04
    SCHEMA_OVERRIDE_ENABLED = 0x08
    PRIORITY_DOWNGRADED = 0x10


class PriorityClass(IntEnum):
    """SESSION_OPEN ``priority_class``."""

    INTERACTIVE = 0
    BALANCED = 1
    BACKGROUND = 2


class SessionStatus(IntEnum):
    """SESSION_OPEN_ACK ``session_status``."""

    OPENED = 0
    REJECTED = 1
    RETRY_LATER = 2
    RESUMED = 3


class DetailCode(IntEnum):
    """Simulator-local CACHE_ACK ``detail_code`` values (no public registry exists)."""

    NONE = 0
    RENEWED = 1
    KIND_NOT_NEGOTIATED = 2
    OBJECT_TOO_LARGE = 3
    ENTRY_LIMIT_REACHED = 4
    INSUFFICIENT_MEMORY = 5
    LEASES_DISABLED = 6


class ReasonCode(IntEnum):
    """Simulator-local CACHE_INVALIDATE ``reason_code`` values (opaque u32 on the wire)."""

    UNSPECIFIED = 0
    EXPLICIT = 1
    EXPIRED = 2
    EVICTED = 3
    CONTENT_CHANGED = 4
    DEPENDENCY_INVALIDATED = 5
    SERVER_RESTART = 6
    REVOKED = 7
    OWNER_CLOSED = 8


class ReuseScope(IntEnum):
    """CACHE_REFERENCE ``reuse_scope`` (preview4 runtime control, spec sections 10 and 15)."""

    OPERATION = 0
    SESSION = 1
    CONNECTION = 2
    GLOBAL = 3
    TENANT = 4
    PROFILE = 5


class CacheReferenceFlags(IntFlag):
    """CACHE_REFERENCE ``flags``; mask 0x3."""

    LEASE_REQUIRED = 0x1
    BODY_FALLBACK_PRESENT = 0x2


class MissReason(IntEnum):
    """CACHE_MISS ``miss_reason``; 0x8000-0xffff is private and also accepted."""

    UNKNOWN = 0
    NOT_FOUND = 1
    EXPIRED = 2
    INVALIDATED = 3
    SCHEMA_MISMATCH = 4
    PRODUCER_UNAVAILABLE = 5
    LEASE_REQUIRED = 6
    PERMISSION_DENIED = 7


MISS_REASON_PRIVATE_MIN = 0x8000
