"""The server's cache limits: what the handshake and the GPU memory budget allow."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnrpsim.protocol import CACHE_OBJECT_BITMAP_MASK, U32_MAX

from .eviction import policy_key

RENEWALS = ("touch", "extend")


@dataclass(frozen=True, slots=True)
class CacheLimits:
    """Admission limits for CACHE_PUT.

    ``max_cache_entries`` 0 means unlimited (as in nnrp-rs); ``max_object_bytes`` is a per-object
    ceiling (the handshake's ``max_cache_bytes``); ``capacity_bytes`` is the GPU memory budget for
    all objects together (None: unlimited). TTLs are clamped to ``[ttl_floor_ms, ttl_ceiling_ms]``.
    A renewal restarts the lease at the TTL it asks for (``renewal="touch"``, the reference FFI's
    rule, which may shorten a lease another holder relies on) or at the longer of that and what
    is left (``"extend"``, a what-if: a renewal never shortens a lease).
    """

    object_kind_bitmap: int = CACHE_OBJECT_BITMAP_MASK
    max_object_bytes: int = U32_MAX
    max_cache_entries: int = 0
    capacity_bytes: int | None = None
    ttl_floor_ms: int = 0
    ttl_ceiling_ms: int = U32_MAX
    eviction: str = "lru"
    renewal: str = "touch"

    def __post_init__(self) -> None:
        if not 0 <= self.ttl_floor_ms <= self.ttl_ceiling_ms <= U32_MAX:
            raise ValueError(
                f"ttl_floor_ms ({self.ttl_floor_ms}) must be <= ttl_ceiling_ms "
                f"({self.ttl_ceiling_ms}) <= {U32_MAX}"
            )
        if self.capacity_bytes is not None and not self.capacity_bytes >= 0:  # (NaN too)
            raise ValueError(f"capacity_bytes must be >= 0, got {self.capacity_bytes}")
        policy_key(self.eviction)  # a known policy, or ValueError naming them
        if self.renewal not in RENEWALS:
            raise ValueError(f"renewal must be one of {RENEWALS}, got {self.renewal!r}")
        if self.max_cache_entries < 0:
            raise ValueError(f"max_cache_entries must be >= 0, got {self.max_cache_entries}")

    def allows(self, kind, size):
        """Whether this ceiling lets objects of ``kind`` and ``size`` be cached: the kind
        negotiated, the size within ``max_object_bytes`` (scalars, or numpy arrays of many)."""
        if type(kind) is int and type(size) is int:  # one object: a DES host's question, in ints
            return (
                self.object_kind_bitmap >> (kind - 1)
            ) & 1 == 1 and size <= self.max_object_bytes
        negotiated = (self.object_kind_bitmap >> (np.asarray(kind, dtype=np.int64) - 1)) & 1
        return (negotiated == 1) & (np.asarray(size) <= self.max_object_bytes)
