"""Columnar records of a run: appended as plain lists, handed out as numpy arrays.

The runner turns these into pandas frames; the model itself never imports pandas.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

import numpy as np

from nnrpsim.protocol import ReasonCode


class RefOutcome(IntEnum):
    """What happened to one object reference of an operation.

    Codes 1-4 are the server's cache errors, each followed by an inline resubmission (fallback).
    """

    HIT = 0
    CACHE_MISS = 1
    LEASE_EXPIRED = 2
    VERSION_MISMATCH = 3
    DEPENDENCY_INVALID = 4
    INLINED_BY_POLICY = 5
    INSTALLED = 6
    INSTALL_REJECTED = 7
    INLINED_AFTER_INVALIDATE = 8  # the lease ended while the operation was under way


class InstallCause(IntEnum):
    """Why the host had to send an object's body again (or for the first time)."""

    NONE = 0
    COLD = 1
    EXPIRED = 2
    INVALIDATED = 3
    EVICTED = 4
    SERVER_RESTART = 5
    MISS = 6  # learned from a cache error
    OTHER = 7  # released with its owner or revoked


# per recorded reference, C statics, compiled (where a member is a look-up on its class per use)
_HIT: Final = RefOutcome.HIT
_NO_CAUSE: Final = InstallCause.NONE

CAUSE_OF_REASON = {
    ReasonCode.EXPIRED: InstallCause.EXPIRED,
    ReasonCode.EVICTED: InstallCause.EVICTED,
    ReasonCode.CONTENT_CHANGED: InstallCause.INVALIDATED,
    ReasonCode.DEPENDENCY_INVALIDATED: InstallCause.INVALIDATED,
    ReasonCode.EXPLICIT: InstallCause.INVALIDATED,
    ReasonCode.SERVER_RESTART: InstallCause.SERVER_RESTART,
}

WIRE_CLASSES = ("inline", "put_body", "reference", "cache_control", "control")
"""Bytes by class: inline object blocks, CACHE_PUT bodies, 24-byte references, the cache's own
control frames (PUT/ACK/INVALIDATE/ERROR headers and fallback resubmissions), everything else."""


class WireBytes:
    """The bytes sent so far, one counter per class of :data:`WIRE_CLASSES`. Compiled, each is
    an int in the object's C struct: a frame adds to several (a dict's item is a hash look-up
    and a Python int each time)."""

    __slots__ = WIRE_CLASSES

    def __init__(self) -> None:
        self.inline = 0
        self.put_body = 0
        self.reference = 0
        self.cache_control = 0
        self.control = 0

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in WIRE_CLASSES}


class Columns:
    """Named columns of equal length, appended row by row (one tuple per row: cheap to append)."""

    def __init__(self, *names: str) -> None:
        self.names = names
        self.rows: list[tuple] = []

    def append(self, *values) -> None:
        self.rows.append(values)

    def arrays(self) -> dict[str, np.ndarray]:
        columns = zip(*self.rows, strict=True) if self.rows else [()] * len(self.names)
        return {name: np.asarray(column) for name, column in zip(self.names, columns, strict=True)}


class OperationLog:
    """A row per completed operation, and through it a record per object reference.

    The references of one operation share its time, session and server, and most are plain hits
    with no install cause; so a row per operation, the objects, and only the other references
    one by one are kept, and :meth:`references` expands them with numpy.
    """

    def __init__(self) -> None:
        # per operation, a list each (numpy turns a list of numbers into an array ten times as
        # fast as a list of tuples): start_ms, latency_ms, fallback, session, server, objects
        # referenced
        self._start: list[float] = []
        self._latency: list[float] = []
        self._fallback: list[bool] = []
        self._session: list[int] = []
        self._server: list[int] = []
        self._counts: list[int] = []
        self._objects: list[int] = []
        # the references that were not a plain hit: their rows, outcomes and causes
        self._other_rows: list[int] = []
        self._other_outcomes: list[int] = []
        self._other_causes: list[int] = []

    def append(
        self,
        start_ms: float,
        latency_ms: float,
        fallback: bool,
        session: int,
        server: int,
        objects: list[int],
        outcome: dict[int, RefOutcome],
        cause: dict[int, InstallCause],
    ) -> None:
        """Record one operation and its references; ``outcome`` and ``cause`` hold only the
        objects that were not a plain hit."""
        self._start.append(start_ms)
        self._latency.append(latency_ms)
        self._fallback.append(fallback)
        self._session.append(session)
        self._server.append(server)
        self._counts.append(len(objects))
        if outcome or cause:
            first = len(self._objects)
            for i in range(len(objects)):  # (compiled: an index loop; enumerate is a call)
                obj = objects[i]
                if obj in outcome or obj in cause:
                    self._other_rows.append(first + i)
                    self._other_outcomes.append(outcome.get(obj, _HIT))
                    self._other_causes.append(cause.get(obj, _NO_CAUSE))
        self._objects.extend(objects)

    def operations(self) -> dict[str, np.ndarray]:
        """Per operation: start, latency (submit to the last reply), whether it fell back, and
        its session."""
        return {
            "start_ms": np.array(self._start, dtype=np.float64),
            "latency_ms": np.array(self._latency, dtype=np.float64),
            "fallback": np.array(self._fallback, dtype=bool),
            "session": np.array(self._session, dtype=np.int64),
        }

    def references(self) -> dict[str, np.ndarray]:
        """Per object reference: time, session, server, object, outcome and install cause."""
        counts = np.array(self._counts, dtype=np.int64)
        columns = {
            "time_ms": np.repeat(np.array(self._start, dtype=np.float64), counts),
            "session": np.repeat(np.array(self._session, dtype=np.int64), counts),
            "server": np.repeat(np.array(self._server, dtype=np.int64), counts),
            "object": np.array(self._objects, dtype=np.int64),
            "outcome": np.full(len(self._objects), int(RefOutcome.HIT), dtype=np.int64),
            "cause": np.full(len(self._objects), int(InstallCause.NONE), dtype=np.int64),
        }
        rows = np.array(self._other_rows, dtype=np.int64)
        columns["outcome"][rows] = np.array(self._other_outcomes, dtype=np.int64)
        columns["cause"][rows] = np.array(self._other_causes, dtype=np.int64)
        return columns


class Recorder:
    """Everything a run measures."""

    def __init__(self) -> None:
        self.operations = OperationLog()
        self.memory = Columns(
            "time_ms",
            "server",
            "live_bytes",
            "held_bytes",
            "mean_held_bytes",
            "objects",
            "link_load",
            "server_load",
        )
        self.held_by_kind = Columns("time_ms", "server", "kind", "held_bytes", "mean_held_bytes")
        self.wire = WireBytes()
        self.accepted_ttl_ms: list[int] = []
        self.invalidations = dict.fromkeys((int(r) for r in ReasonCode), 0)
        self.installs = 0
        self.renewals = 0
        self.refused_puts = 0  # CACHE_ACKs that refused (installs, renewals, sources alike)
        self.evictions = 0  # live leases the servers evicted for room (PUTs, memory pressure)
        self.operations_waited = 0  # operations that waited for an in-flight slot to start
        self.reinstalls_after_expiry = 0
        self.hot_path_frames = 0
        # what the operations' object blocks would take inline, each operation's as it starts:
        # what the cache's bytes are measured against (the operations still on their way at the
        # end too, whose bytes the wire counts, and which no reference record has yet)
        self.all_inline_bytes = 0
