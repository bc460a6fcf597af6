"""Eviction policies: which unpinned leases go first when an install does not fit.

Each policy maps candidate slots to a sort key (smallest goes first); ties always fall back to
the install order, so the choice is deterministic. Unknown names raise.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .table import LeaseTable, ScalarColumns

PolicyKey = Callable[["LeaseTable", np.ndarray], np.ndarray]


def _lru(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.last_access_seq[slots]


def _fifo(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.installed_seq[slots]


def _ttl(table: LeaseTable, slots: np.ndarray) -> np.ndarray:
    return table.expires[slots]


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
"""Policies whose keys (the table's operation counter) never tie, and only ever grow."""


def _scalar_key(policy: str) -> Callable[[ScalarColumns, int], int | float]:
    """One slot's key as its policy's array key computes it, from the table's scalar views
    (the same arithmetic: the ``size`` key's float division gives the same double)."""
    if policy == "lru":
        return lambda c, slot: c.last_access_seq[slot]
    if policy == "fifo":
        return lambda c, slot: c.installed_seq[slot]
    if policy == "ttl":
        return lambda c, slot: c.expires[slot]
    return lambda c, slot: -(c.size[slot] / (c.hits[slot] + 1.0))


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
"""Least keys a table keeps between evictions (:class:`EvictionFront`)."""

WATCHED = frozenset({"ttl", "size"})
"""Policies whose keys can fall: the table reports their changes to the front."""


class EvictionFront:
    """The least (key, install order, slot) entries of a table, to take victims from without
    sorting the table at each eviction (a capacity study evicts at nearly every install).

    A sort keeps the FRONT_SIZE least entries and their largest, ``bound``. The front then holds
    every occupied slot whose entry is at most ``bound``, in order: an entry whose slot holds
    another key, another lease or none is dropped when met, and a slot whose key changes to at
    most ``bound`` comes in again. Under LRU and FIFO a change takes the table's next operation
    number, beyond ``bound``, so it never does; under ``ttl`` and ``size`` (:data:`WATCHED`) a
    renewal, a hit or a grant may, and the table reports it (:meth:`changed`, or :meth:`clear`
    for a batch). So the first unpinned entries are the least of all, as a sort of the whole
    table would order them."""

    __slots__ = ("bound", "entries", "key_of", "policy", "watch_hits", "watch_renewals")

    def __init__(self) -> None:
        self.policy: str | None = None
        # what the table must report (:meth:`changed`): hits (size), renewals (ttl); and
        # grants, when either is watched
        self.watch_hits = self.watch_renewals = False
        self.key_of = _scalar_key("lru")  # (its policy's from the first sort on)
        self.entries: list[tuple[int | float, int, int]] = []  # (key, installed_seq, slot)
        self.bound: tuple[int | float, int, int] | None = None

    def victims(
        self, table: LeaseTable, policy: str, bytes_needed: int, entries_needed: int
    ) -> list[int] | None:
        """The fewest unpinned slots in ``policy`` order that free ``bytes_needed`` bytes and
        ``entries_needed`` entries (one at least); None when the front runs out first, and the
        caller sorts the table instead."""
        if policy != self.policy or not self.entries:
            self._sort(table, policy)
        c, key_of, entries = table.scalars, self.key_of, self.entries
        seqs, occupied, pinned, size = c.installed_seq, c.occupied, c.pinned, c.size
        chosen: list[int] = []
        freed = i = 0
        while i < len(entries):
            key, seq, slot = entries[i]
            if not occupied[slot] or seqs[slot] != seq or key_of(c, slot) != key:
                del entries[i]  # (its slot comes in again if its key falls back: changed())
                continue
            i += 1
            # (pinned: it may be unpinned later, its key as it was; a slot whose key fell back
            # to an earlier one is in twice, side by side)
            if pinned[slot] or (chosen and chosen[-1] == slot):
                continue
            chosen.append(slot)
            freed += size[slot]
            if freed >= bytes_needed and len(chosen) >= entries_needed:
                return chosen
        self.clear()  # used up: the next eviction sorts again
        return None

    def changed(self, table: LeaseTable, slot: int) -> None:
        """A watched key of ``slot`` (occupied) changed: it comes in if it is at most ``bound``.
        Entries pile up between evictions only so far before the next one sorts again."""
        entry = (self.key_of(table.scalars, slot), table.scalars.installed_seq[slot], slot)
        if self.bound is not None and entry <= self.bound:
            insort(self.entries, entry)
            if len(self.entries) > 5 * FRONT_SIZE:
                self.clear()

    def clear(self) -> None:
        """Forget the entries: the next eviction sorts, and until then nothing comes in. For
        a batch that changed watched keys of many slots at once, and a front used up."""
        self.entries, self.bound = [], None

    def _sort(self, table: LeaseTable, policy: str) -> None:
        key = policy_key(policy)
        if key is None:
            raise ValueError(f"eviction policy {policy!r} never evicts: it has no victims")
        slots = np.flatnonzero(table.occupied)
        keys = key(table, slots)
        if len(slots) > FRONT_SIZE:  # the least keys, with every tie of the largest of them
            pick = np.flatnonzero(keys <= np.partition(keys, FRONT_SIZE - 1)[FRONT_SIZE - 1])
            slots, keys = slots[pick], keys[pick]
        seqs = table.installed_seq[slots]
        least = np.lexsort((seqs, keys))[:FRONT_SIZE]
        self.entries = list(
            zip(keys[least].tolist(), seqs[least].tolist(), slots[least].tolist(), strict=True)
        )
        self.bound = self.entries[-1] if self.entries else None
        self.policy, self.key_of = policy, _scalar_key(policy)
        self.watch_hits, self.watch_renewals = policy == "size", policy == "ttl"
