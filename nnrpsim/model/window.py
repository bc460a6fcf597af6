"""A session's operations in flight: SESSION_OPEN's ``max_in_flight_operations``.

An operation may start at its planned time while at most ``limit - 1`` others are outstanding
(started, reply not yet arrived); otherwise it waits for a reply. One process at a time holds the
dispatch: it starts each operation when it may and runs it. If the next operation falls due while
the holder waits on the network, the holder passes the dispatch to a new process first, so
operations overlap exactly when the plan and the limit make them, and a session whose operations
never overlap costs no process beyond its own.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Generator
from typing import Final

import simpy

# Final: compiled, each a C static, where ``heapq.heappush`` is a look-up on the module per use
_heappush: Final = heapq.heappush
_heappop: Final = heapq.heappop


class OperationWindow:
    __slots__ = (
        "_changed",
        "due",
        "env",
        "holder",
        "last_reply",
        "limit",
        "next",
        "operations",
        "replies",
        "running",
        "spawn",
    )

    def __init__(
        self,
        env: simpy.Environment,
        operations: list[tuple[float, list[int]]],
        limit: int,
        spawn: Callable[[int], object],
    ) -> None:
        """``spawn(holder)`` starts a process that takes the dispatch as ``holder``."""
        self.env = env
        self.operations = operations
        self.limit = limit
        self.next = 0  # the operation to start next
        self.due = operations[0][0] if operations else math.inf  # when it is planned
        self.running = 0  # started operations whose reply time is not known yet
        self.replies: list[float] = []  # a heap of the others' reply times, pruned as they pass
        self.last_reply = env.now
        self.holder = 0
        self.spawn = spawn
        self._changed: simpy.Event | None = None

    @property
    def finished(self) -> bool:
        return self.next == len(self.operations) and not self.running

    def changed(self) -> simpy.Event:
        """An event that fires when a running operation learns its reply time."""
        if self._changed is None:
            self._changed = self.env.event()
        return self._changed

    def pass_on(self, holder: int) -> None:
        """``holder`` is about to wait past the next operation's planned time: if that one may
        run beside the holder's, a new process takes the dispatch."""
        if self.holder == holder and self.limit > 1:
            self.holder += 1
            self.spawn(self.holder)

    def start(self, now: float) -> list[int] | None:
        """Start the next operation, due by ``now`` (the current time), if a slot is free;
        return its objects."""
        replies = self.replies
        while replies and replies[0] <= now:
            _heappop(replies)
        if self.running + len(replies) >= self.limit:
            return None
        index = self.next = self.next + 1
        operations = self.operations
        self.due = operations[index][0] if index < len(operations) else math.inf
        self.running += 1
        return operations[index - 1][1]

    def slot(self) -> Generator[simpy.Event, object, list[int]]:
        """Wait until a slot is free, then start the next operation (it is due); return its
        objects."""
        env = self.env
        while (objects := self.start(env.now)) is None:
            now = env.now
            excess = self.running + len(self.replies) - self.limit + 1  # replies to wait for
            known = (
                heapq.nsmallest(excess, self.replies)[-1]
                if excess <= len(self.replies)
                else math.inf
            )
            if not self.running:
                yield env.timeout(known - now)
            elif known < math.inf:  # a running operation may yet reply sooner
                yield env.timeout(known - now) | self.changed()
            else:
                yield self.changed()
        return objects

    def finish(self, reply_at: float) -> None:
        """A running operation's last frame was handled: its reply arrives at ``reply_at``."""
        self.running -= 1
        _heappush(self.replies, reply_at)
        if reply_at > self.last_reply:
            self.last_reply = reply_at
        if self._changed is not None:
            changed, self._changed = self._changed, None
            changed.succeed()
