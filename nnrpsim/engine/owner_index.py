"""Which slots each owner was granted: a release by owner reads its candidates, not the table.

A session's close must end the leases it owns. A scan of the owner columns costs the whole
table per close (a capacity study holds a hundred thousand leases and closes thousands of
sessions); the index costs an append per grant. It forgets nothing when a lease ends, so an
owner's list is a superset of the slots it holds (a slot it lost may be another owner's by
now): a release checks each candidate against the table's owner columns. An owner granted
more than twice as many slots as the table has, or a batch of them at once (a replay's bulk
installs), is scanned for instead: the scan then costs less than its grants did, and the
index never holds more than twice the table per owner.
"""

from __future__ import annotations

Owner = tuple[int, int]
"""An owner scope (as an int) and an owner id."""


class OwnerIndex:
    """Per owner, the slots granted to it one at a time since it was last released."""

    def __init__(self) -> None:
        self._granted: dict[Owner, list[int]] = {}
        self._scanned: set[Owner] = set()
        self.scan_above = 0
        """Set by the table to twice its capacity."""

    def add(self, owner: Owner, slot: int) -> None:
        granted = self._granted.get(owner)
        if granted is not None:
            granted.append(slot)
            if len(granted) > self.scan_above:
                self.add_batch(owner)
        elif owner not in self._scanned:
            self._granted[owner] = [slot]

    def add_batch(self, owner: Owner) -> None:
        """A batch of slots went to ``owner``: its release scans the table."""
        self._granted.pop(owner, None)
        self._scanned.add(owner)

    def pop(self, owner: Owner) -> list[int] | None:
        """The slots granted to ``owner`` since its last release (repeats included), or None
        if the table must be scanned for what it holds; forgotten here either way: what the
        release does not end, the owner no longer holds."""
        if owner in self._scanned:
            self._scanned.discard(owner)
            return None
        return self._granted.pop(owner, [])
