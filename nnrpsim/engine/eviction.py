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


FRONT_SIZE = 64
"""Least keys an LRU or FIFO table keeps between evictions (:class:`EvictionFront`)."""


class EvictionFront:
    """The FRONT_SIZE least keys of an LRU or FIFO table as they stood when last sorted, to
    take victims from without sorting the table at each eviction (a capacity study evicts at
    nearly every install). A key only ever grows: a touch, a renewal or a grant takes the
    table's next operation number. So an entry whose slot holds the same key, still
    occupied, is still among the least, and the first unpinned one is the least of all;
    an entry whose key changed, or whose slot was freed, is gone for good."""

    __slots__ = ("at", "entries", "policy")

    def __init__(self) -> None:
        self.policy: str | None = None
        self.entries: list[tuple[int, int]] = []  # (key, slot), least first
        self.at = 0  # the entries before this are gone for good

    def victims(
        self, table: LeaseTable, policy: str, bytes_needed: int, entries_needed: int
    ) -> list[int] | None:
        """The fewest unpinned slots in ``policy`` order (lru or fifo) that free
        ``bytes_needed`` bytes and ``entries_needed`` entries (one at least); None when the
        front runs out first, and the caller sorts the table instead."""
        if policy != self.policy or self.at >= len(self.entries):
            self._sort(table, policy)
        c = table.scalars
        keys = c.last_access_seq if policy == "lru" else c.installed_seq
        occupied, pinned, size, entries = c.occupied, c.pinned, c.size, self.entries
        chosen: list[int] = []
        freed, head = 0, True
        for i in range(self.at, len(entries)):
            key, slot = entries[i]
            if keys[slot] != key or not occupied[slot]:
                if head:
                    self.at = i + 1
                continue
            head = False
            if pinned[slot]:  # (it may be unpinned later, its key as it was)
                continue
            chosen.append(slot)
            freed += size[slot]
            if freed >= bytes_needed and len(chosen) >= entries_needed:
                return chosen
        self.at = len(entries)  # used up: the next eviction sorts again
        return None

    def _sort(self, table: LeaseTable, policy: str) -> None:
        slots = np.flatnonzero(table.occupied)
        keys = policy_key(policy)(table, slots)
        least = (
            np.argpartition(keys, FRONT_SIZE - 1)[:FRONT_SIZE]
            if len(slots) > FRONT_SIZE
            else np.arange(len(slots))
        )
        least = least[np.argsort(keys[least])]
        self.entries = list(zip(keys[least].tolist(), slots[least].tolist(), strict=True))
        self.policy, self.at = policy, 0
