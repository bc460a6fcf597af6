"""What a reference or a CACHE_PUT comes to, as small integer codes for numpy arrays."""

from __future__ import annotations

from enum import IntEnum

from nnrpsim.protocol import CacheErrorCode


class Outcome(IntEnum):
    """The result of resolving one object reference (spec section 7 error codes, plus hit)."""

    HIT = 0
    CACHE_MISS = 1
    LEASE_EXPIRED = 2
    VERSION_MISMATCH = 3
    DEPENDENCY_INVALID = 4

    @property
    def error_code(self) -> CacheErrorCode:
        """The ERROR ``error_code`` a server sends for this outcome (``NONE`` for a hit)."""
        return CacheErrorCode(CacheErrorCode.NONE + self.value)


class EndReason(IntEnum):
    """Why an object's last lease ended: decides cache_miss versus lease_expired afterwards.

    Keeping this per object makes a lookup's outcome independent of when the expiry sweep ran.
    """

    NEVER_INSTALLED = 0
    EXPIRED = 1
    INVALIDATED = 2
    EVICTED = 3
    RELEASED = 4
