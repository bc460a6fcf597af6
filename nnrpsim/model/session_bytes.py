"""The bytes of a host's frames for its sessions and connections rather than their operations,
counted from the plan for the vector engine, which replays none of them; the DES's hosts send
them (:meth:`~nnrpsim.model.host.Host.run_session`, ``close_connections``)."""

from __future__ import annotations

import math

from nnrpsim.protocol import MessageType, packet_bytes
from nnrpsim.protocol.layouts import HEADER_LEN

from .workload import SessionPlan

HELLO_BYTES = packet_bytes(MessageType.CLIENT_HELLO) + packet_bytes(MessageType.SERVER_HELLO_ACK)
OPEN_BYTES = packet_bytes(MessageType.SESSION_OPEN) + packet_bytes(MessageType.SESSION_OPEN_ACK)
CLOSE_BYTES = packet_bytes(MessageType.SESSION_CLOSE) + packet_bytes(MessageType.SESSION_CLOSE_ACK)
CONNECTION_CLOSE_BYTES = 2 * HEADER_LEN  # (CLOSE both ways, header only)


def session_frame_bytes(
    sessions: list[SessionPlan], server_of: dict[int, int], since_ms: float
) -> int:
    """The bytes of those frames sent at ``since_ms`` or later, as the DES's hosts send them
    over instant links: a connection's hello as its host's first session on its server
    starts, a session's open as it starts and its close as it ends, and a connection's close
    once its host's last session has ended (``server_of``: each session's server)."""
    total = 0
    first: dict[tuple[int, int], float] = {}  # (host, server) -> its first session's start
    done: dict[int, float] = {}  # host -> its last session's end
    for session in sessions:
        key = (session.host, server_of[session.session_id])
        first[key] = min(first.get(key, math.inf), session.start_ms)
        done[session.host] = max(done.get(session.host, -math.inf), session.end_ms)
        total += OPEN_BYTES * (session.start_ms >= since_ms)
        total += CLOSE_BYTES * (session.end_ms >= since_ms)
    for (host, _), start in first.items():
        total += HELLO_BYTES * (start >= since_ms)
        total += CONNECTION_CLOSE_BYTES * (done[host] >= since_ms)
    return total
