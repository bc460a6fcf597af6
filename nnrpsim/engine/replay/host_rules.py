"""The hosts' side of a sequential replay, alike on both paths (:mod:`.ordered`,
:mod:`.on_table`): what a DES host sends inline instead of referencing or putting.

- Its inline turn: after the server ended a lease under it (invalidated or evicted, with
  ``inline_once``), the next reference's body goes inline and the one after reinstalls.
- Its back-off: after a refused CACHE_PUT, no PUT of that object for ``backoff_ms``.
- Dependencies: what a frame makes from a source that goes inline in that frame (its turn, its
  back-off, a refused PUT) goes inline too; where the source's PUT was refused, it is put in
  the same burst all the same (``put_anyway``).

The paths differ only in how they hold the server's leases: each tells these rules why an
object holds no usable lease, its *lapse* (the :class:`EndReason` of its last lease), or None
while it holds one.
"""

from __future__ import annotations

from .result import INVALIDATED


class HostRules:
    """The hosts' state in one replay run, and the inline turns and back-offs it counts."""

    def __init__(self, n_objects: int, inline_once: bool, backoff_ms: int) -> None:
        """``n_objects``: to count each object's inline references (0: no per-object count)."""
        self.inline_once = inline_once
        self.backoff_ms = backoff_ms
        self.told: set[int] = set()  # with inline_once: leases the server ended under their host
        self.until: dict[int, int] = {}  # with a back-off: object -> no PUT of it before then
        # object -> its next reference goes inline, its source refused or backing off: the
        # EndReason charged, and whether backing off (a source with no follower, -1, blocks none)
        self.blocked: dict[int, tuple[int, bool]] = {}
        # The frame under way (set by the path as each begins): "this frame" below is this
        # operation at this time; without operations, the references of one millisecond.
        self.frame = -1
        # object -> the frame that last had a PUT of it refused (:attr:`frame`, time): what
        # that frame makes from it goes inline too (put all the same where it needs a lease),
        # with no second PUT of it
        self.refused_at: dict[int, tuple[int, int]] = {}
        # of those blocked, the ones whose source's PUT the frame's burst had refused: the DES
        # host put them in that burst all the same (a lease, or a refusal), bodies inline anyway
        self.put_anyway: set[int] = set()
        # object -> (the frame whose reference last sent it inline, and that frame's time, the
        # EndReason charged, whether backing off): what the same frame made from it goes
        # inline too (``frame_source``)
        self.inlined_at: dict[int, tuple[int, int, int, bool]] = {}
        self.inlined = self.inlined_bytes = self.backed_off = self.backed_off_bytes = 0
        self.inlined_of = [0] * n_objects

    def counts(self) -> dict[str, int]:
        """The inline references counted, as :data:`COUNTS` names them."""
        return {
            "inlined_after_invalidate": self.inlined,
            "inlined_bytes": self.inlined_bytes,
            "backed_off": self.backed_off,
            "backed_off_bytes": self.backed_off_bytes,
        }

    def ended_under_host(self, objects) -> None:
        """The server ended these leases under their hosts (not by expiry): with
        ``inline_once``, each one's next reference is its inline turn."""
        if self.inline_once:
            self.told.update(objects)

    def send_inline(self, obj: int, size: int, now: int, reason: int, backing_off: bool) -> None:
        """The reference's body goes inline instead of a PUT: an inline turn, or a back-off."""
        if backing_off:
            self.backed_off += 1
            self.backed_off_bytes += size
        else:
            self.inlined += 1
            self.inlined_bytes += size
        if self.inlined_of:
            self.inlined_of[obj] += 1
        self.inlined_at[obj] = (self.frame, now, reason, backing_off)

    def follow_source(
        self, obj: int, source: int, now: int, live: bool, source_lapse: int | None
    ) -> None:
        """``obj`` is made from ``source``, which its frame references too: it goes inline if
        the source went inline earlier in the frame, or comes later and will (its inline
        turn, its back-off). Its own inline turn comes first, and so does its own back-off
        when it holds no ``live`` lease: the DES host decides an object by its own lease
        before it looks at the source, so the miss is charged to the object's own lapse."""
        if obj in self.told or (not live and now < self.until.get(obj, now)):
            return
        went = self.inlined_at.get(source)
        if went is not None and went[0] == self.frame and went[1] == now:
            self.blocked[obj] = went[2:]
            if self.refused_at.get(source) == (self.frame, now):
                self.put_anyway.add(obj)
        elif source_lapse is not None:
            if source in self.told:
                self.blocked[obj] = (INVALIDATED, False)
            elif now < self.until.get(source, now):
                self.blocked[obj] = (source_lapse, True)

    def puts_along(self, source: int, follower: int, now: int, lapse: int) -> bool:
        """Whether the host puts ``source``, which holds no usable lease, along for
        ``follower``, made from it: not while the follower goes inline (its turn, its
        back-off), nor while the source is refused for this frame already or backed off
        from, which sends the follower inline."""
        if follower in self.told or now < self.until.get(follower, now):
            return False
        if self.refused_at.get(source) == (self.frame, now):
            self._orphan(follower)
            return False
        if now < self.until.get(source, now):
            self.blocked[follower] = (lapse, True)
            return False
        return True

    def refused(self, obj: int, now: int, follower: int | None = None) -> None:
        """A PUT of ``obj`` was refused: the host backs off from it, and what the frame makes
        from it goes inline. ``follower``: the object a source made along was put for, put
        in the same burst all the same."""
        if self.backoff_ms:
            self.until[obj] = now + self.backoff_ms
        self.refused_at[obj] = (self.frame, now)
        if follower is None:
            self.inlined_at[obj] = (self.frame, now, INVALIDATED, False)
        else:
            self._orphan(follower)

    def _orphan(self, obj: int) -> None:
        """``obj``'s source was refused for its frame: its body goes inline, though the host
        puts it all the same where it needs a lease."""
        self.blocked[obj] = (INVALIDATED, False)
        self.put_anyway.add(obj)

    def take_blocked(self, obj: int, live: bool) -> tuple[int, bool] | None:
        """If ``obj``'s source keeps it from its frame, (the EndReason charged, whether backing
        off): its body goes inline, its lease untouched. One put all the same is taken by
        :meth:`take_orphan` instead, unless its lease is live."""
        if obj in self.blocked and (live or obj not in self.put_anyway):
            self.put_anyway.discard(obj)
            return self.blocked.pop(obj)
        return None

    def take_orphan(self, obj: int) -> bool:
        """Whether ``obj`` is put all the same, its source refused: a PUT no reference follows."""
        if obj in self.put_anyway:
            self.put_anyway.discard(obj)
            del self.blocked[obj]
            return True
        return False

    def goes_inline(self, obj: int, size: int, now: int, lapse: int) -> bool:
        """Whether the miss's body goes inline without a PUT: its inline turn, or its back-off."""
        if obj in self.told:
            self.told.discard(obj)
            self.send_inline(obj, size, now, lapse, False)
            return True
        if now < self.until.get(obj, now):
            self.send_inline(obj, size, now, lapse, True)
            return True
        return False
