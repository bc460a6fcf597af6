"""Columnar records of a run: appended as plain lists, handed out as numpy arrays.

The runner turns these into pandas frames; the model itself never imports pandas.
"""

from __future__ import annotations

from enum import IntEnum

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
        # (start_ms, latency_ms, fallback, session, server, objects referenced)
        self._rows: list[tuple[float, float, bool, int, int, int]] = []
        self._objects: list[int] = []
        self._others: list[tuple[int, int, int]] = []  # (reference row, outcome, cause)

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
        self._rows.append((start_ms, latency_ms, fallback, session, server, len(objects)))
        if outcome or cause:
            for row, obj in enumerate(objects, len(self._objects)):
                if obj in outcome or obj in cause:
                    self._others.append(
                        (row, outcome.get(obj, RefOutcome.HIT), cause.get(obj, InstallCause.NONE))
                    )
        self._objects.extend(objects)

    def _columns(self) -> np.ndarray:
        return np.array(self._rows, dtype=np.float64).reshape(-1, 6)

    def operations(self) -> dict[str, np.ndarray]:
        """Per operation: start, latency (submit to the last reply), whether it fell back, and
        its session."""
        rows = self._columns()
        return {
            "start_ms": rows[:, 0],
            "latency_ms": rows[:, 1],
            "fallback": rows[:, 2].astype(bool),
            "session": rows[:, 3].astype(np.int64),
        }

    def references(self) -> dict[str, np.ndarray]:
        """Per object reference: time, session, server, object, outcome and install cause."""
        rows = self._columns()
        counts = rows[:, 5].astype(np.int64)
        columns = {
            "time_ms": np.repeat(rows[:, 0], counts),
            "session": np.repeat(rows[:, 3].astype(np.int64), counts),
            "server": np.repeat(rows[:, 4].astype(np.int64), counts),
            "object": np.array(self._objects, dtype=np.int64),
            "outcome": np.full(len(self._objects), int(RefOutcome.HIT), dtype=np.int64),
            "cause": np.full(len(self._objects), int(InstallCause.NONE), dtype=np.int64),
        }
        if self._others:
            rows, outcome, cause = np.array(self._others, dtype=np.int64).T
            columns["outcome"][rows], columns["cause"][rows] = outcome, cause
        return columns


class Recorder:
    """Everything a run measures."""

    def __init__(self) -> None:
        self.operations = OperationLog()
        self.memory = Columns(
            "time_ms", "server", "live_bytes", "held_bytes", "objects", "link_load", "server_load"
        )
        self.held_by_kind = Columns("time_ms", "server", "kind", "held_bytes")
        self.wire = dict.fromkeys(WIRE_CLASSES, 0)
        self.accepted_ttl_ms: list[int] = []
        self.invalidations = dict.fromkeys((int(r) for r in ReasonCode), 0)
        self.installs = 0
        self.renewals = 0
        self.refused_puts = 0  # CACHE_ACKs that refused (installs, renewals, sources alike)
        self.reinstalls_after_expiry = 0
        self.hot_path_frames = 0

    def wire_bytes(self, klass: str, n: int) -> None:
        self.wire[klass] += n
