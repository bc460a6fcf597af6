"""The scalar lease rules of spec section 10: saturating expiry, liveness and version checks.

The engine applies the same rules to whole arrays; these scalar forms are the contract that the
engine's tests and the reference model compare against.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .codes import CacheErrorCode, OwnerScope
from .identity import U32_MAX, U64_MAX, CacheIdentity, check_uint


def saturating_add_u64(a: int, b: int) -> int:
    """``a + b`` clamped to ``2**64 - 1``, as the spec computes ``expires_at_ms``."""
    check_uint("a", a, U64_MAX)
    check_uint("b", b, U64_MAX)
    return min(a + b, U64_MAX)


def saturating_add_u64_array(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Element-wise saturating u64 add: wrap-around is detected and replaced by the maximum."""
    a = np.asarray(a, dtype=np.uint64)
    total = np.add(a, b, dtype=np.uint64)  # (no u64 copy of a u32 operand)
    # Nothing wraps unless the largest of each sums past U64_MAX: two reads, cheaper than a
    # comparison of every item (a table's millisecond clocks are far below it)
    if int(a.max(initial=0)) > U64_MAX - int(np.max(b, initial=0)):
        wrapped = total < a
        total[wrapped] = U64_MAX  # (rare: patched in place rather than a third array built)
    return total


def expires_at_ms(granted_at_ms: int, ttl_ms: int) -> int:
    """The first instant at which the lease is expired."""
    return saturating_add_u64(granted_at_ms, check_uint("ttl_ms", ttl_ms, U32_MAX))


def is_live(now_ms: int, granted_at_ms: int, ttl_ms: int) -> bool:
    """Live iff ``now_ms < expires_at``: TTL 0 is expired at once, and so is
    ``now == expires_at``."""
    return check_uint("now_ms", now_ms, U64_MAX) < expires_at_ms(granted_at_ms, ttl_ms)


@dataclass(frozen=True, slots=True)
class Lease:
    """A granted lease. Renewal keeps ``lease_id``; a new grant gets a new one."""

    identity: CacheIdentity
    object_version: int
    lease_id: int
    owner_scope: OwnerScope
    owner_id: int
    granted_at_ms: int
    ttl_ms: int

    def __post_init__(self) -> None:
        check_uint("object_version", self.object_version, U64_MAX)
        check_uint("lease_id", self.lease_id, U64_MAX)
        object.__setattr__(self, "owner_scope", OwnerScope(self.owner_scope))
        check_uint("owner_id", self.owner_id, U64_MAX)
        check_uint("granted_at_ms", self.granted_at_ms, U64_MAX)
        check_uint("ttl_ms", self.ttl_ms, U32_MAX)

    @property
    def expires_at_ms(self) -> int:
        return expires_at_ms(self.granted_at_ms, self.ttl_ms)

    def is_live(self, now_ms: int) -> bool:
        return is_live(now_ms, self.granted_at_ms, self.ttl_ms)

    def check(self, now_ms: int, expected_version: int | None = None) -> CacheErrorCode:
        """The outcome of using this lease now: expiry is checked before the version."""
        if not self.is_live(now_ms):
            return CacheErrorCode.LEASE_EXPIRED
        if expected_version is not None and expected_version != self.object_version:
            return CacheErrorCode.VERSION_MISMATCH
        return CacheErrorCode.NONE

    def renewed(self, now_ms: int, ttl_ms: int) -> Lease:
        """The same lease (same ``lease_id``) re-granted at ``now_ms`` for ``ttl_ms``."""
        return replace(self, granted_at_ms=now_ms, ttl_ms=ttl_ms)
