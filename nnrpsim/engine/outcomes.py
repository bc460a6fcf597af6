"""What a reference or a CACHE_PUT comes to, as small integer codes for numpy arrays."""

from __future__ import annotations

from enum import IntEnum


class Outcome(IntEnum):
    """The result of resolving one object reference: a hit, or the cache error a server
    answers it with (spec section 7; each code's low bits, ``CACHE_MISS`` 0x0003_0001)."""

    HIT = 0
    CACHE_MISS = 1
    LEASE_EXPIRED = 2
    VERSION_MISMATCH = 3
    DEPENDENCY_INVALID = 4


class EndReason(IntEnum):
    """Why an object's last lease ended: decides cache_miss versus lease_expired afterwards.

    Keeping this per object makes a lookup's outcome independent of when the expiry sweep ran.
    """

    NEVER_INSTALLED = 0
    EXPIRED = 1
    INVALIDATED = 2
    EVICTED = 3
    RELEASED = 4
