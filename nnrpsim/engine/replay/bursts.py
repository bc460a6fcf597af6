"""Which leases a frame's PUTs free their host is told of, as a DES server tells it.

A DES host sends a frame's CACHE_PUTs in bursts, one for each run of PUTs of one owner (its
session's objects, its connection's). After a burst the server announces what it freed
(CACHE_INVALIDATE), but a run-out lease of an object the burst puts itself, and an evicted
one the burst holds again: their host is installing them. It tells the host of an object
once a burst, however often the burst freed it. A sequential replay frees leases one PUT at
a time; this marks, once each burst is in, the spans of those the DES's server announces
(:meth:`~.result.SpanLog.tell`).
"""

from __future__ import annotations

import numpy as np

from .result import SpanLog


class PutBursts:
    """The bursts of a sequential replay's PUTs, over ``log``'s spans. ``connection_owned``:
    per object id, whether its host's connection owns its leases (None: every object is its
    session's, one burst a frame)."""

    def __init__(self, log: SpanLog, connection_owned: np.ndarray | None) -> None:
        self.log = log
        self.owners: list[bool] | None = (
            None if connection_owned is None else connection_owned.tolist()
        )
        self.frame = self.owner = -1
        self.putting: set[int] = set()
        self.freed: list[tuple[int, int, bool]] = []  # (span, object, evicted)
        self.holds: dict[int, bool] = {}  # object -> granted after it was last freed
        self.replaced = (-1, -1, -1)  # (span, object, frame): a lease its own PUT replaces

    def put(self, obj: int, frame: int) -> None:
        """A PUT of ``obj`` in ``frame`` (-1: a frame of its own) is sent: a new burst where
        the frame or the owner changes."""
        self._replaced_by(obj, frame)
        owner = 0 if self.owners is None else int(self.owners[obj])
        if frame != self.frame or owner != self.owner or frame < 0:
            self.end()
            self.frame, self.owner = frame, owner
        self.putting.add(obj)

    def _replaced_by(self, obj: int, frame: int) -> None:
        """A lease ended for its host's PUT is told of unless that PUT is ``obj``'s in
        ``frame`` (its host put it again: it knew; -1, none)."""
        span, replaced, at = self.replaced
        if replaced >= 0 and (replaced != obj or at != frame):  # (its body went inline)
            self.log.tell(span)
        self.replaced = (-1, -1, -1)

    def replacing(self, span: int, obj: int, frame: int) -> None:
        """Span ``span`` of ``obj`` ended as its host puts ``obj`` again in ``frame`` (run
        out, or a version its host knows is old); if the body goes inline instead, the host
        is told."""
        self.replaced = (span, obj, frame)

    def granted(self, obj: int) -> None:
        self.holds[obj] = True

    def ended(self, span: int, obj: int, evicted: bool) -> None:
        """The burst's last PUT freed span ``span`` of ``obj``: evicted, or run out."""
        self.freed.append((span, obj, evicted))
        self.holds[obj] = False

    def end(self) -> None:
        """The burst is in: its host is told of what it freed, but what it puts itself."""
        self._replaced_by(-1, -1)
        told: set[int] = set()
        for span, obj, evicted in self.freed:
            if obj not in told and (obj not in self.putting or (evicted and not self.holds[obj])):
                self.log.tell(span)
                told.add(obj)
        self.putting.clear()
        self.freed.clear()
        self.holds.clear()
        self.frame = -1
