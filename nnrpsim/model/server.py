"""The NNRP runtime: negotiates the cache ceiling, grants leases, resolves references, and tells
hosts when it drops an object. Every cache decision is the lease engine's; this adds wiring."""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np

from nnrpsim.engine import CacheLimits, InstallAck, LeaseTable, ObjectCatalog
from nnrpsim.engine.table import KIND_CODES
from nnrpsim.protocol import CacheAckStatus, MessageType, OwnerScope, ReasonCode, packet_bytes

from .config import ServerConfig
from .held_memory import HeldMemory

if TYPE_CHECKING:
    from .simulation import Simulation

INVALIDATE_BYTES: Final = packet_bytes(MessageType.CACHE_INVALIDATE)  # (a C constant, compiled)
# per PUT and frame, each a C static, compiled (an enum's member, a module's function: a look-up
# per use)
_REJECTED: Final = CacheAckStatus.REJECTED
_EXPIRED: Final = ReasonCode.EXPIRED
_EVICTED: Final = ReasonCode.EVICTED
_heapreplace: Final = heapq.heapreplace


def session_lease_ttl_ms(config: ServerConfig, hint_ms: int) -> int:
    """SESSION_OPEN_ACK ``lease_ttl_ms``: the host's hint (or the server's default) clamped to
    the TTL floor and ceiling."""
    limits = config.limits
    requested = hint_ms or config.default_lease_ttl_ms
    return int(min(max(requested, limits.ttl_floor_ms), limits.ttl_ceiling_ms))


class Server:
    def __init__(self, sim: Simulation, index: int, config: ServerConfig, catalog: ObjectCatalog):
        self.sim = sim
        self.index = index
        self.config = config
        self.catalog = catalog
        self.table = LeaseTable(catalog, config.limits)
        self.held = HeldMemory(KIND_CODES)  # (advanced to the instant of each change of table)
        self.holders: dict[int, set[int]] = {}  # object -> hosts holding a lease view of it
        self.session_connection: dict[int, int] = {}
        # When each worker is next free (a heap); empty: no limit, a frame is taken up on arrival
        self.workers_free_at = [0.0] * (config.workers or 0)
        self.busy_ms = 0.0  # processing time of every frame and CACHE_PUT burst so far

    # ------------------------------------------------------------------ handshake
    def hello(self, client_object_bitmap: int) -> CacheLimits:
        """SERVER_HELLO_ACK: the cache ceiling, kinds as a subset of the client's bitmap."""
        limits = self.config.limits
        return replace(limits, object_kind_bitmap=limits.object_kind_bitmap & client_object_bitmap)

    def open_session(self, session_id: int, connection_id: int, hint_ms: int) -> int:
        """SESSION_OPEN_ACK ``lease_ttl_ms``: the hint (or the default) clamped to floor/ceiling."""
        self.table.register_session(session_id, connection_id)
        self.session_connection[session_id] = connection_id
        return session_lease_ttl_ms(self.config, hint_ms)

    def close_connection(self, connection_id: int, host: int) -> None:
        """CLOSE from ``host``: the connection's leases end, with its sessions' and their
        operations'; the other hosts that hold any of them are told."""
        self.held.advance(self.sim.env.now, self.table)
        self.notify(
            self.table.release_owner(OwnerScope.CONNECTION, connection_id),
            ReasonCode.OWNER_CLOSED,
            host,
        )

    def close_session(self, session_id: int, host: int) -> None:
        """SESSION_CLOSE from ``host``: the session's leases end; the other hosts that hold
        any of them are told."""
        self.session_connection.pop(session_id, None)
        self.held.advance(self.sim.env.now, self.table)
        self.notify(
            self.table.release_owner(OwnerScope.SESSION, session_id), ReasonCode.OWNER_CLOSED, host
        )

    # ------------------------------------------------------------------ cache frames
    def take_up(self, now: float, processing_ms: float) -> float:
        """Charge ``processing_ms`` of server time to a frame (or CACHE_PUT burst) arriving
        ``now``; return how long it waits for a worker: with a worker limit, first come first
        served on the worker free first, else no wait. Processing times are known on arrival,
        so the turn is too."""
        self.busy_ms += processing_ms
        free = self.workers_free_at
        if not free:
            return 0.0
        start = now if now > free[0] else free[0]
        _heapreplace(free, start + processing_ms)
        return start - now

    def put(
        self,
        host: int,
        objects: list[int],
        versions: list[int],
        ttl_ms: int,
        sizes: list[int],
        owner_scope: OwnerScope,
        owner_id: int,
        dependencies: dict[int, tuple[int, int]],
    ) -> tuple[list[InstallAck], list[int]]:
        """A burst of CACHE_PUTs -> CACHE_ACKs, in order, and where each ACK stands among what
        the servers sent (``Simulation.sent``): each PUT's ACK, then the CACHE_INVALIDATEs of
        what it expired or evicted, except leases the burst itself renews or grants again (the
        host is installing). A lease the burst granted and then evicted for a later PUT of the
        burst is announced: its host learns of it before it references the object.
        ``dependencies`` declares, per object made from another, that object and the version it
        was made from."""
        # (compiled, index loops and direct calls: a strict zip and a bound method are
        # generic Python calls)
        now, table = int(self.sim.env.now), self.table
        self.held.advance(self.sim.env.now, table)
        acks = [
            table.install_one(
                obj,
                now,
                ttl_ms,
                sizes[i],
                version=versions[i],
                owner_scope=owner_scope,
                owner_id=owner_id,
            )
            for i, obj in enumerate(objects)
        ]
        holders, recorder = self.holders, self.sim.recorder
        for i, obj in enumerate(objects):
            ack = acks[i]
            if ack.status == _REJECTED:
                recorder.refused_puts += 1
            else:
                if obj in dependencies:
                    self.table.set_dependencies(obj, [dependencies[obj]])
                if obj in holders:
                    holders[obj].add(host)
                else:
                    holders[obj] = {host}
        installing, sim = set(objects), self.sim
        sent = []
        for ack in acks:
            sim.sent += 1
            sent.append(sim.sent)
            recorder.evictions += len(ack.evicted)
            if ack.expired:
                self.notify([obj for obj in ack.expired if obj not in installing], _EXPIRED)
            if ack.evicted:
                self.notify(
                    [o for o in ack.evicted if o not in installing or not table.holds(o, now)],
                    _EVICTED,
                )
        recorder.accepted_ttl_ms.extend(ack.accepted_ttl_ms for ack in acks)
        return acks, sent

    def submit(self, now: int, objects: list[int], versions: list[int]) -> list[int]:
        """Resolve a FRAME_SUBMIT's object references at ``now`` (an :class:`Outcome` code each,
        one at a time: a frame carries a handful); the auditor re-checks every hit."""
        table, auditor, current = self.table, self.sim.auditor, self.sim.content_version
        outcomes = []
        for i, obj in enumerate(objects):  # (compiled: an index loop and direct calls)
            expected = versions[i]
            code = table.resolve(obj, now, expected)
            if code == 0:
                expires, version = table.terms(obj)
                if expires <= now or version != expected or version != current[obj]:
                    auditor.check_hit(now, expires, version, expected, current[obj])
            outcomes.append(code)
        return outcomes

    # ------------------------------------------------------------------ server-side events
    def notify(self, objects: list[int], reason: ReasonCode, closer: int = -1) -> None:
        """Send CACHE_INVALIDATE(object_key, reason) to every host that holds the object, but
        ``closer``, whose own close ended the lease: it knows."""
        for obj in objects:
            for host in self.holders.pop(obj, ()):
                if host != closer:
                    self.sim.deliver_invalidate(self.index, host, [obj], reason)

    def change_content(self, obj: int) -> None:
        """The object's content changed: its lease ends, and with ``cascade_dependencies`` the
        leases of what was made from it (the engine's cascade). A lease that had run out
        before, which no sweep had reached, is freed too, and announced as the sweep would:
        a change falls on a whole millisecond, as the sweep does, and whether its holders
        heard of it had depended on which of the two SimPy ran first."""
        now, table = int(self.sim.env.now), self.table
        self.held.advance(self.sim.env.now, table)
        run_out = table.run_out(obj, now)
        freed = table.invalidate_objects(
            np.array([obj]), now, cascade=self.config.cascade_dependencies
        )
        if run_out:
            self.notify([obj], _EXPIRED)
        self.notify([o for o in freed if o == obj], ReasonCode.CONTENT_CHANGED)
        self.notify([o for o in freed if o != obj], ReasonCode.DEPENDENCY_INVALIDATED)

    def sweep(self):
        """Periodic expiry sweep: frees expired leases in one pass and announces them."""
        while True:
            yield self.sim.timeout(self.config.sweep_interval_ms)
            self.held.advance(self.sim.env.now, self.table)
            self.notify(self.table.expire(int(self.sim.env.now)).tolist(), ReasonCode.EXPIRED)

    def restart(self, announce: bool) -> None:
        """Drop the whole cache. Hosts learn it from CACHE_INVALIDATE or from cache misses."""
        self.held.advance(self.sim.env.now, self.table)
        self.table = LeaseTable(self.catalog, self.config.limits)
        for session_id, connection_id in self.session_connection.items():
            self.table.register_session(session_id, connection_id)
        holders, self.holders = self.holders, {}
        if announce:
            for host in sorted(set().union(*holders.values()) if holders else set()):
                self.sim.deliver_invalidate(self.index, host, None, ReasonCode.SERVER_RESTART)

    def shrink_memory(self, fraction: float) -> None:
        """Memory pressure: a smaller budget from now on, evicting down to it at once."""
        limits = self.table.limits
        if limits.capacity_bytes is None:
            return
        capacity = int(limits.capacity_bytes * fraction)
        self.held.advance(self.sim.env.now, self.table)
        self.table.limits = replace(limits, capacity_bytes=capacity)
        excess = self.table.held_bytes - capacity
        if excess > 0:
            evicted = self.table.evict(excess) or []
            self.sim.recorder.evictions += len(evicted)
            self.notify(evicted, ReasonCode.EVICTED)
