"""The canonical cache identity ``(cache_namespace, cache_key_hi, cache_key_lo, object_kind)``.

The two key words are one opaque 128-bit key: neither is ever truncated and no second key is
derived. ``object_kind`` travels beside the identity; the ORB carries it as a checked u16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .codes import CacheObjectKind
from .errors import WireError

# Final: compiled code (setup.py) takes their values as constants, not global look-ups
U16_MAX: Final = 0xFFFF
U32_MAX: Final = 0xFFFF_FFFF
U64_MAX: Final = 0xFFFF_FFFF_FFFF_FFFF
U128_MAX: Final = (1 << 128) - 1


def check_uint(field: str, value: object, maximum: int) -> int:
    """Return ``value`` if it is an int in ``[0, maximum]``; otherwise raise naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(field, f"must be an integer, got {type(value).__name__}")
    if not 0 <= value <= maximum:
        raise WireError(field, f"{value} is out of range 0..{maximum}")
    return value


def check_object_kind(field: str, value: object) -> CacheObjectKind:
    """A cache object kind 1-9; 0 and anything above 9 are rejected, never coerced."""
    check_uint(field, value, U32_MAX)
    try:
        return CacheObjectKind(value)
    except ValueError:
        raise WireError(field, f"unknown cache object kind {value} (valid: 1-9)") from None


@dataclass(frozen=True, slots=True)
class CacheIdentity:
    """One cached object's identity, widths enforced at construction."""

    cache_namespace: int
    cache_key_hi: int
    cache_key_lo: int
    object_kind: CacheObjectKind

    def __post_init__(self) -> None:
        check_uint("cache_namespace", self.cache_namespace, U32_MAX)
        check_uint("cache_key_hi", self.cache_key_hi, U64_MAX)
        check_uint("cache_key_lo", self.cache_key_lo, U64_MAX)
        object.__setattr__(self, "object_kind", check_object_kind("object_kind", self.object_kind))

    @classmethod
    def from_key(cls, cache_namespace: int, key: int, object_kind: int) -> CacheIdentity:
        """Build from the 128-bit key as one value."""
        check_uint("cache_key", key, U128_MAX)
        return cls(cache_namespace, key >> 64, key & U64_MAX, CacheObjectKind(object_kind))

    @property
    def key(self) -> int:
        """The 128-bit key: ``(cache_key_hi << 64) | cache_key_lo``."""
        return (self.cache_key_hi << 64) | self.cache_key_lo

    @property
    def orb_object_kind(self) -> int:
        """The u16 projection carried by the Object Reference Block, checked rather than masked."""
        return check_uint("object_kind", int(self.object_kind), U16_MAX)

    def orb_fields(self) -> dict[str, int]:
        """The fields of a 24-byte Object Reference Block that references this object."""
        return {
            "object_kind": self.orb_object_kind,
            "ref_flags": 0,
            "cache_namespace": self.cache_namespace,
            "cache_key_hi": self.cache_key_hi,
            "cache_key_lo": self.cache_key_lo,
        }
