"""A one-way link: latency, bandwidth with FIFO queueing, loss with retransmission.

Each transmission is one delay computed at send time (the link is one timeout, not a chain of
stores): it waits for the frames ahead of it, serialises at the bandwidth, and every lost attempt
costs a retransmission timeout and another serialisation. Bytes on the wire include resends.
"""

from __future__ import annotations

import numpy as np

from .config import LinkConfig


class Link:
    def __init__(self, config: LinkConfig, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.busy_until = 0.0
        self.bytes_sent = 0
        self.retransmissions = 0

    def free_at(self, now: float) -> float:
        """When a frame queued ``now`` starts to leave: after the frames ahead of it."""
        return now if now > self.busy_until else self.busy_until

    def last_byte_at(self, now: float, n_bytes: int) -> float:
        """When the last of ``n_bytes`` queued ``now`` leaves, if nothing is lost."""
        return self.free_at(now) + n_bytes / self.config.bandwidth_bytes_per_ms

    def transmit(self, now: float, n_bytes: int) -> float:
        """The delay until ``n_bytes`` sent at ``now`` have arrived at the far end."""
        config = self.config
        serialise = n_bytes / config.bandwidth_bytes_per_ms
        start = now if now > self.busy_until else self.busy_until  # free_at, without the call
        if not config.loss:  # the common case, without the retransmission arithmetic
            self.busy_until = start + serialise
            self.bytes_sent += n_bytes
            return self.busy_until - now + config.latency_ms
        attempts = int(self.rng.geometric(1.0 - config.loss))
        self.busy_until = start + attempts * serialise
        self.bytes_sent += attempts * n_bytes
        self.retransmissions += attempts - 1
        waiting = (attempts - 1) * config.retransmit_timeout_ms
        return self.busy_until - now + waiting + config.latency_ms
