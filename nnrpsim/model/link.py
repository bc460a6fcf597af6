"""A one-way link: latency, bandwidth with queueing, loss with retransmission.

Each transmission is one delay computed when it is booked (the link is one timeout, not a chain
of stores): it waits for the link, serialises at the bandwidth, and every lost attempt costs a
retransmission timeout and another serialisation. Bytes on the wire include resends.

A reply is booked when its frame arrives, to leave when processing ends: later than now. So a
link keeps the idle stretches such bookings leave before them, and a frame booked afterwards
that is ready to leave earlier uses that idle time if it fits there, delaying no frame already
booked; otherwise it goes after the last. Frames booked to leave now (everything a host sends)
are first come first served.
"""

from __future__ import annotations

import numpy as np

from .config import LinkConfig


class Link:
    def __init__(self, config: LinkConfig, rng: np.random.Generator) -> None:
        self.config = config
        # per frame, read as native attributes (compiled: a config's are Python look-ups)
        self.latency_ms = config.latency_ms
        self.bandwidth_bytes_per_ms = config.bandwidth_bytes_per_ms
        self.loss = config.loss
        self.retransmit_timeout_ms = config.retransmit_timeout_ms
        self.rng = rng
        self.busy_until = 0.0
        self.idle: list[tuple[float, float]] = []  # (start, end), in order, before busy_until
        self.bytes_sent = 0
        self.retransmissions = 0
        self.bytes_resent = 0  # (in bytes_sent too)

    def free_at(self, now: float) -> float:
        """When a frame queued ``now`` starts to leave, at the latest: after the frames ahead."""
        return now if now > self.busy_until else self.busy_until

    def last_byte_at(self, now: float, n_bytes: int) -> float:
        """When the last of ``n_bytes`` queued ``now`` leaves, at the latest, if nothing is lost."""
        return self.free_at(now) + n_bytes / self.bandwidth_bytes_per_ms

    def transmit(self, now: float, n_bytes: int, after: float = 0.0) -> float:
        """The delay from ``now`` until ``n_bytes``, ready to leave ``after`` ms from now (a
        reply: when processing ends), have arrived at the far end."""
        busy = n_bytes / self.bandwidth_bytes_per_ms
        delay = after + self.latency_ms
        if self.loss:
            attempts = int(self.rng.geometric(1.0 - self.loss))
            self.retransmissions += attempts - 1
            self.bytes_resent += n_bytes * (attempts - 1)
            n_bytes *= attempts
            busy *= attempts
            delay += (attempts - 1) * self.retransmit_timeout_ms
        self.bytes_sent += n_bytes
        idle, until, at = self.idle, self.busy_until, now + after
        if idle and idle[0][1] <= now:  # stretches gone by
            gone = 1
            while gone < len(idle) and idle[gone][1] <= now:
                gone += 1
            del idle[:gone]
        if at >= until:
            if after and at > until:  # left idle until then: usable by a frame ready earlier
                idle.append((until if until > now else now, at))
            self.busy_until = at + busy
            return delay + busy
        return self._fit(at, busy) - at + delay + busy

    def _fit(self, at: float, busy: float) -> float:
        """Book ``busy`` ms from ``at`` or later, while the link is booked beyond ``at``: in
        the first idle stretch it fits, else after the last booking. Returns the start."""
        idle = self.idle
        for i, (start, end) in enumerate(idle):
            begin = start if start > at else at
            if begin + busy <= end:
                idle[i : i + 1] = [
                    stretch
                    for stretch in ((start, begin), (begin + busy, end))
                    if stretch[1] > stretch[0]
                ]
                return begin
        begin, self.busy_until = self.busy_until, self.busy_until + busy
        return begin
