"""The NNRP client: connections, sessions and operations; a local view of its leases; the cache
policy's inline / install / reference decisions; renewal, invalidation handling and fallback."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nnrpsim.engine import CacheLimits
from nnrpsim.protocol import (
    CACHE_OBJECT_BITMAP_MASK,
    OBJECT_REFERENCE,
    MessageType,
    OwnerScope,
    ReasonCode,
    frame_submit_bytes,
    inline_object_bytes,
    packet_bytes,
)
from nnrpsim.protocol.layouts import HEADER_LEN

from .records import CAUSE_OF_REASON, InstallCause, RefOutcome
from .workload import SessionPlan

if TYPE_CHECKING:
    from .simulation import Simulation

PUT_OVERHEAD = packet_bytes(MessageType.CACHE_PUT)
ACK_BYTES = packet_bytes(MessageType.CACHE_ACK)
ERROR_BYTES = packet_bytes(MessageType.ERROR)
RESULT_BYTES = packet_bytes(MessageType.RESULT_PUSH)
ORB_BYTES = OBJECT_REFERENCE.size

_HIT, _NO_CAUSE = RefOutcome.HIT, InstallCause.NONE


@dataclass
class LocalLease:
    """The host's view of one lease: valid until told otherwise or until its TTL runs out."""

    version: int
    expires_ms: float
    ttl_ms: int
    valid: bool = True
    cause: InstallCause = InstallCause.NONE
    inlined_since_invalid: bool = False


class Host:
    def __init__(self, sim: Simulation, index: int) -> None:
        self.sim = sim
        self.index = index
        self.leases: dict[tuple[int, int], LocalLease] = {}
        self.limits: dict[int, CacheLimits] = {}  # server -> the negotiated cache ceiling

    def connection_id(self, server: int) -> int:
        return (self.index + 1) << 16 | server

    # ------------------------------------------------------------------ messages from servers
    def on_invalidate(self, server: int, objects: list[int] | None, reason: ReasonCode) -> None:
        """Mark the references invalid at once; the next submit inlines or reinstalls them."""
        cause = CAUSE_OF_REASON.get(reason, InstallCause.OTHER)
        if objects is None:
            keys = [key for key in self.leases if key[0] == server]
        else:
            keys = [(server, obj) for obj in objects]
        for key in keys:
            lease = self.leases.get(key)
            if lease is not None and lease.valid:
                lease.valid, lease.cause = False, cause

    # ------------------------------------------------------------------ round trips
    def _round_trip(self, server: int, up_bytes: int, handler):
        """Send ``up_bytes``; on arrival the server handles it (``handler`` returns the answer,
        its processing time and the bytes of the reply); wait for the reply; return the answer."""
        sim = self.sim
        yield sim.timeout(sim.uplinks[self.index][server].transmit(sim.env.now, up_bytes))
        answer, processing, down_bytes = handler()
        downlink = sim.downlinks[self.index][server]
        yield sim.timeout(processing + downlink.transmit(sim.env.now + processing, down_bytes))
        return answer

    def _control(self, server: int, request: MessageType, response: MessageType, handler, *args):
        up, down = packet_bytes(request), packet_bytes(response)
        self.sim.recorder.wire_bytes("control", up + down)
        return (yield from self._round_trip(server, up, lambda: (handler(*args), 0.0, down)))

    # ------------------------------------------------------------------ sessions
    def run_session(self, plan: SessionPlan):
        sim = self.sim
        server = sim.route(plan)
        if server not in self.limits:
            self.limits[server] = yield from self._control(
                server,
                MessageType.CLIENT_HELLO,
                MessageType.SERVER_HELLO_ACK,
                sim.servers[server].hello,
                CACHE_OBJECT_BITMAP_MASK,
            )
        hint = sim.policy.ttl_hint_ms(plan.expected_ms)
        ttl = yield from self._control(
            server,
            MessageType.SESSION_OPEN,
            MessageType.SESSION_OPEN_ACK,
            sim.servers[server].open_session,
            plan.session_id,
            self.connection_id(server),
            hint,
        )
        for at, objects in plan.operations:
            if at > sim.env.now:
                yield sim.timeout(at - sim.env.now)
            yield from self.operation(plan, server, ttl, objects)
        if plan.end_ms > sim.env.now:
            yield sim.timeout(plan.end_ms - sim.env.now)
        yield from self._control(
            server,
            MessageType.SESSION_CLOSE,
            MessageType.SESSION_CLOSE_ACK,
            sim.servers[server].close_session,
            plan.session_id,
        )

    # ------------------------------------------------------------------ operations
    def operation(self, plan: SessionPlan, server: int, ttl: int, objects: list[int]):
        sim, recorder, policy = self.sim, self.sim.recorder, self.sim.policy
        env, start = sim.env, sim.env.now
        recorder.operations_started += 1
        outcome: dict[int, RefOutcome] = {}
        cause: dict[int, InstallCause] = {}
        references, installs, renewals, inline = [], [], [], []
        for obj in objects:
            size = sim.sizes[obj]
            reuse = plan.expected_reuse.get(obj)
            if reuse is None:
                reuse = sim.shared_reuse(obj, plan)
            if not policy.should_cache(size, reuse) or not self._negotiated(server, obj, size):
                inline.append(obj)
                outcome[obj] = RefOutcome.INLINED_BY_POLICY
                continue
            lease = self.leases.get((server, obj))
            if self._usable(server, obj):
                references.append(obj)
                if policy.wants_renewal(lease.expires_ms - env.now, lease.ttl_ms):
                    renewals.append(obj)
                continue
            if self._inline_once(lease):
                inline.append(obj)
                outcome[obj], cause[obj] = RefOutcome.INLINED_AFTER_INVALIDATE, lease.cause
                continue
            installs.append(obj)
            outcome[obj] = RefOutcome.INSTALLED
            cause[obj] = self._install_cause(lease, int(sim.content_version[obj]), env.now)

        if installs:
            accepted = yield from self._install(server, plan, ttl, installs)
            for obj in installs:
                if obj in accepted:
                    references.append(obj)
                else:
                    inline.append(obj)
                    outcome[obj] = RefOutcome.INSTALL_REJECTED

        # The install round trip may have brought CACHE_INVALIDATEs or outlived a lease: a
        # reference is sent only while its lease is still valid, otherwise the body goes inline.
        stale = [o for o in references if not self._usable(server, o)] if installs else ()
        for obj in stale:
            references.remove(obj)
            if obj in renewals:
                renewals.remove(obj)
            inline.append(obj)
            outcome[obj] = RefOutcome.INLINED_AFTER_INVALIDATE
            lease = self.leases[(server, obj)]
            cause[obj] = lease.cause if not lease.valid else InstallCause.EXPIRED
        failed = yield from self._submit(server, plan, ttl, references, inline, renewals, outcome)
        if failed:
            sim.auditor.fallbacks += 1
            yield from self._submit(server, plan, ttl, [], failed, [], outcome, fallback=True)
            sim.auditor.fallbacks_completed += 1
        recorder.operations.append(start, env.now - start, bool(failed))
        session = plan.session_id
        for obj in objects:
            recorder.references.append(
                start, session, server, obj, outcome.get(obj, _HIT), cause.get(obj, _NO_CAUSE)
            )

    def _expiry_estimate(self, sent_at: float, granted: int) -> float:
        """When the host must stop referencing: the server granted no earlier than the PUT was
        sent (in whole milliseconds), and a reference needs the one-way latency to get there."""
        return math.floor(sent_at) + granted - self.sim.config.uplink.latency_ms

    def _negotiated(self, server: int, obj: int, size: int) -> bool:
        """Only kinds and sizes the handshake's cache ceiling allows are worth a CACHE_PUT."""
        limits = self.limits[server]
        kind = int(self.sim.plan.catalog.kind[obj])
        return bool(limits.object_kind_bitmap >> (kind - 1) & 1) and size <= limits.max_object_bytes

    def close_connections(self):
        """CLOSE every connection (header-only both ways: the spec gives CLOSE no metadata
        layout); the server ends the leases the connection owns."""
        for server in sorted(self.limits):
            self.sim.recorder.wire_bytes("control", 2 * HEADER_LEN)
            close = self.sim.servers[server].close_connection
            yield from self._round_trip(
                server,
                HEADER_LEN,
                lambda c=close, s=server: (c(self.connection_id(s)), 0.0, HEADER_LEN),
            )

    def _usable(self, server: int, obj: int) -> bool:
        lease = self.leases.get((server, obj))
        return (
            lease is not None
            and lease.valid
            and lease.version == int(self.sim.content_version[obj])
            and self.sim.env.now < lease.expires_ms
        )

    def _inline_once(self, lease: LocalLease | None) -> bool:
        """After a CACHE_INVALIDATE (or a cache error) the next submit inlines; the one after
        reinstalls. Leases that simply ran out are reinstalled at once."""
        if lease is None or lease.valid or lease.cause == InstallCause.EXPIRED:
            return False
        if not self.sim.policy.inline_after_invalidate or lease.inlined_since_invalid:
            return False
        lease.inlined_since_invalid = True
        return True

    def _install_cause(self, lease: LocalLease | None, version: int, now: float) -> InstallCause:
        if lease is None:
            return InstallCause.COLD
        if not lease.valid:
            return lease.cause
        if now >= lease.expires_ms:
            return InstallCause.EXPIRED
        return InstallCause.INVALIDATED if lease.version != version else InstallCause.NONE

    def _owner(self, plan: SessionPlan, server: int, obj: int) -> tuple[OwnerScope, int]:
        """Session objects are owned by the session; shared ones by the connection."""
        if obj in plan.expected_reuse:
            return OwnerScope.SESSION, plan.session_id
        return OwnerScope.CONNECTION, self.connection_id(server)

    def _put(self, server: int, plan: SessionPlan, ttl: int, objects: list[int], sent_at: float):
        """Server side of a burst of CACHE_PUTs, grouped by owner; returns accepted objects."""
        sim = self.sim
        accepted: dict[int, int] = {}
        groups: dict[tuple[OwnerScope, int], list[int]] = {}
        for obj in objects:
            groups.setdefault(self._owner(plan, server, obj), []).append(obj)
        for (scope, owner), group in groups.items():
            ids = np.array(group, dtype=np.int64)
            result = sim.servers[server].put(
                self.index, ids, sim.content_version[ids], ttl, sim.plan.sizes[ids], scope, owner
            )
            for obj, status, granted in zip(
                group, result.status.tolist(), result.accepted_ttl_ms.tolist(), strict=True
            ):
                if status == 1:
                    continue
                accepted[obj] = granted
                self.leases[(server, obj)] = LocalLease(
                    int(sim.content_version[obj]), self._expiry_estimate(sent_at, granted), granted
                )
        return accepted

    def _install(self, server: int, plan: SessionPlan, ttl: int, objects: list[int]):
        sim, recorder = self.sim, self.sim.recorder
        body = sum(sim.sizes[obj] for obj in objects)
        recorder.wire_bytes("put_body", body)
        recorder.wire_bytes("cache_control", len(objects) * (PUT_OVERHEAD + ACK_BYTES))
        sent_at = sim.env.now
        for obj in objects:
            lease = self.leases.get((server, obj))
            if (
                lease is not None and lease.valid is False and lease.cause == InstallCause.EXPIRED
            ) or (lease is not None and lease.valid and sent_at >= lease.expires_ms):
                recorder.reinstalls_after_expiry += 1
        accepted = yield from self._round_trip(
            server,
            len(objects) * PUT_OVERHEAD + body,
            lambda: (self._put(server, plan, ttl, objects, sent_at), 0.0, len(objects) * ACK_BYTES),
        )
        recorder.installs += len(accepted)
        return accepted

    def _submit(self, server, plan, ttl, references, inline, renewals, outcome, fallback=False):
        """One FRAME_SUBMIT (plus renewal PUTs in the same burst); returns references that failed."""
        sim, recorder, config = self.sim, self.sim.recorder, self.sim.config.server
        sizes = [sim.sizes[obj] for obj in inline]
        frame = frame_submit_bytes(sizes, len(references))
        inline_bytes = sum(inline_object_bytes(n) for n in sizes)
        recorder.hot_path_frames += 1
        recorder.wire_bytes("inline", inline_bytes)
        recorder.wire_bytes("reference", ORB_BYTES * len(references))
        overhead = frame - inline_bytes - ORB_BYTES * len(references)
        recorder.wire_bytes("cache_control" if fallback else "control", overhead)
        renew_body = sum(sim.sizes[obj] for obj in renewals) if sim.policy.renewal_body else 0
        up = frame + len(renewals) * PUT_OVERHEAD + renew_body
        recorder.wire_bytes("put_body", renew_body)
        recorder.wire_bytes("cache_control", len(renewals) * (PUT_OVERHEAD + ACK_BYTES))
        for obj in references:
            lease = self.leases.get((server, obj))
            if lease is None or not lease.valid:
                sim.auditor.reference_after_invalidate += 1
        sent_at = sim.env.now

        def handle():
            failed = []
            if references:
                ids = np.array(references, dtype=np.int64)
                results = sim.servers[server].submit(ids, sim.content_version[ids])
                for obj, code in zip(references, results.tolist(), strict=True):
                    if code:
                        outcome[obj] = RefOutcome(code)
                        failed.append(obj)
                        lease = self.leases[(server, obj)]
                        lease.valid, lease.cause = False, InstallCause.MISS
                        lease.inlined_since_invalid = True  # the fallback below inlines it
            if renewals:
                renewed = self._put(server, plan, ttl, renewals, sent_at)
                recorder.renewals += len(renewed)
            processing = config.per_operation_ms + config.per_inline_byte_ms * inline_bytes
            reply = RESULT_BYTES + len(failed) * ERROR_BYTES + len(renewals) * ACK_BYTES
            recorder.wire_bytes("control", RESULT_BYTES)
            recorder.wire_bytes("cache_control", len(failed) * ERROR_BYTES)
            return failed, processing, reply

        return (yield from self._round_trip(server, up, handle))
