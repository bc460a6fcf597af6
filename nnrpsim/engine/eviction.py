"""Eviction policies: which unpinned leases go first when an install does not fit.

Each policy maps candidate slots to a sort key (smallest goes first); ties always fall back to
the install order, so the choice is deterministic. Unknown names raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .table import LeaseTable

PolicyKey = Callable[["LeaseTable", np.ndarray], np.ndarray]


def _lru(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.last_access_seq[slots]


def _fifo(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.installed_seq[slots]


def _ttl(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.expires_at(slots)


def _size_aware(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    """Largest bytes per hit first (GDSF-like without the ageing term)."""
    return -(table.size[slots] / (table.hits[slots] + 1.0))


POLICIES: dict[str, PolicyKey | None] = {
    "lru": _lru,
    "fifo": _fifo,
    "ttl": _ttl,
    "size": _size_aware,
    "none": None,  # never evict: reject the install instead
}


UNIQUE_KEYS = frozenset({"lru", "fifo"})
"""Policies whose keys (the table's operation counter) never tie: the least is the first victim
without a sort."""


def policy_key(name: str) -> PolicyKey | None:
    """The key function of a registered policy; raises ``ValueError`` on an unknown name."""
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(
            f"unknown eviction policy {name!r} (known: {', '.join(sorted(POLICIES))})"
        ) from None


def victim_order(table: LeaseTable, slots: np.ndarray, name: str) -> np.ndarray:
    """``slots`` sorted into eviction order for policy ``name``."""
    key = policy_key(name)
    if key is None or not len(slots):
        return slots[:0]
    if name in UNIQUE_KEYS:  # no ties to break: one key sorts (in half a lexsort's time)
        return slots[key(table, slots).argsort()]
    return slots[np.lexsort((table.installed_seq[slots], key(table, slots)))]
