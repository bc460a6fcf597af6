"""A server's memory held over time, integrated exactly: the DES's mean and peak GPU memory.

The samples of the memory fall on the expiry sweep's ticks or between them as the run's length
sets, and the bytes held swing with the sweep (leases run out pile up until it frees them):
read at the samples, a mean of them moved by a fifth with the run's length alone. Integrated
over every change of the lease table instead, the mean is the bytes held over time, wherever
the sweep's ticks fall."""

from __future__ import annotations

from dataclasses import dataclass

from nnrpsim.engine import LeaseTable


@dataclass
class HeldMark:
    """What a server had held by an instant: byte-milliseconds by object kind (the table's
    codes; their sum, in all), and the most bytes held for any time since
    :meth:`HeldMemory.restart_peak`."""

    kind_ms_bytes: list[float]
    peak_bytes: int


class HeldMemory:
    """The integrals of one server's bytes held by kind, and their peak. Each span
    the table held the same bytes is added once, when the bytes change: calls that change
    nothing (a content change of an object no server holds) leave the sums, to the last bit,
    as they were."""

    def __init__(self, kinds: int) -> None:
        self.kind_ms_bytes = [0.0] * kinds
        self.peak_bytes = 0
        self.since = 0.0  # when the table came to hold ``kind_value``
        self.kind_value = [0] * kinds  # (its bytes of each kind)
        self.last = 0.0  # the last call: any change of the table since came at that instant

    def advance(self, now: float, table: LeaseTable) -> None:
        """Called at ``now``, before a change of ``table``: if the one at the last call
        changed what it holds, the span of what it held before ends there."""
        kinds = table.held_kind_bytes
        if kinds != self.kind_value:
            self._close(self.last)
            self.kind_value = list(kinds)
        self.last = now

    def _close(self, at: float) -> None:
        """Add the span of ``kind_value`` from ``since`` to ``at``; the next begins there."""
        elapsed = at - self.since
        if elapsed > 0.0:
            by_kind = self.kind_ms_bytes
            for kind, held in enumerate(self.kind_value):
                if held:
                    by_kind[kind] += held * elapsed
            self.peak_bytes = max(self.peak_bytes, sum(self.kind_value))
        self.since = at

    def mark(self, now: float, table: LeaseTable) -> HeldMark:
        """The integrals up to ``now``, and the peak over them (the spans as they stand)."""
        self.advance(now, table)
        elapsed = now - self.since
        by_kind = [
            done + held * elapsed
            for done, held in zip(self.kind_ms_bytes, self.kind_value, strict=True)
        ]
        peak = max(self.peak_bytes, sum(self.kind_value)) if elapsed > 0.0 else self.peak_bytes
        return HeldMark(by_kind, peak)

    def restart_peak(self, now: float) -> None:
        """Count the peak from ``now`` on (the warm-up's end): the span under way from here."""
        self._close(now)
        self.peak_bytes = 0
