"""The NNRP client: connections, sessions and operations; a local view of its leases; the cache
policy's inline / install / reference decisions; renewal, invalidation handling and fallback."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import simpy

from nnrpsim.engine import CacheLimits
from nnrpsim.protocol import (
    CACHE_OBJECT_BITMAP_MASK,
    OBJECT_REFERENCE,
    CacheAckStatus,
    MessageType,
    OwnerScope,
    ReasonCode,
    frame_submit_bytes,
    packet_bytes,
)
from nnrpsim.protocol.layouts import HEADER_LEN

from .records import CAUSE_OF_REASON, InstallCause, RefOutcome
from .window import OperationWindow
from .workload import SessionPlan

if TYPE_CHECKING:
    from .simulation import Simulation

# Final: compiled, each is a constant in C rather than a look-up in the module's dict per use
PUT_OVERHEAD: Final = packet_bytes(MessageType.CACHE_PUT)
ACK_BYTES: Final = packet_bytes(MessageType.CACHE_ACK)
ERROR_BYTES: Final = packet_bytes(MessageType.ERROR)
RESULT_BYTES: Final = packet_bytes(MessageType.RESULT_PUSH)
ORB_BYTES: Final = OBJECT_REFERENCE.size
FRAME_SUBMIT_OVERHEAD: Final = frame_submit_bytes((), 0)
"""Header, metadata and region prelude of a FRAME_SUBMIT: its bytes besides objects and ORBs."""
FrameSizes = tuple[int, int, int]
"""A FRAME_SUBMIT burst's bytes on the uplink, its inline object blocks, its renewal bodies."""
# per PUT, C statics too (where ``OwnerScope.SESSION`` is a look-up on the class per use)
SESSION_OWNED: Final = OwnerScope.SESSION
CONNECTION_OWNED: Final = OwnerScope.CONNECTION
REJECTED: Final = CacheAckStatus.REJECTED
_NO_CAUSE: Final = InstallCause.NONE


def _total(sizes: list[int], objects: list[int]) -> int:
    """The sizes of ``objects`` added up (compiled, a loop in C; ``sum`` is a Python call)."""
    total = 0
    for obj in objects:
        total += sizes[obj]
    return total


class LocalLease:
    """The host's view of one lease: valid until told otherwise or until its TTL runs out.
    (A plain class: compiled, a dataclass's constructor is its Python ``__init__``, called
    through an argument tuple and a keyword dict.)"""

    __slots__ = (
        "acked",
        "cause",
        "expires_ms",
        "inlined_since_invalid",
        "renew_from_ms",
        "valid",
        "version",
    )

    def __init__(self, version: int, expires_ms: float, renew_from_ms: float, acked: int) -> None:
        self.version = version
        self.expires_ms = expires_ms
        self.renew_from_ms = renew_from_ms  # the policy's proactive renewal starts here
        self.valid = True
        self.cause: InstallCause = _NO_CAUSE
        self.inlined_since_invalid = False
        # where its CACHE_ACK stands among what servers sent (``Simulation.sent``)
        self.acked = acked


class Host:
    def __init__(self, sim: Simulation, index: int) -> None:
        self.sim = sim
        self.index = index
        self.leases: dict[int, dict[int, LocalLease]] = {}  # server -> object -> lease
        # server -> object -> no CACHE_PUT before this time (the policy's back-off after a
        # CACHE_ACK refused room)
        self.refused: dict[int, dict[int, float]] = {}
        self.limits: dict[int, CacheLimits] = {}  # server -> the negotiated cache ceiling

    def connection_id(self, server: int) -> int:
        return (self.index + 1) << 16 | server

    # ------------------------------------------------------------------ messages from servers
    def on_invalidate(
        self, server: int, objects: list[int] | None, reason: ReasonCode, sent: int
    ) -> None:
        """Mark the references invalid at once; the next submit inlines or reinstalls them. A
        lease the host knows has run out is past that: it is put again at its next use, as any
        expired one (whether the server's sweep had reached it before the notice is the
        server's affair). A notice sent before the CACHE_ACK of the lease the host now holds
        is about an earlier lease: the downlink delivers in order, so the host read it first.
        A restart (every object at once) empties the cache: a back-off after a refusal ends."""
        cause = CAUSE_OF_REASON.get(reason, InstallCause.OTHER)
        leases, now = self.leases.get(server, {}), self.sim.env.now
        if objects is None:
            self.refused.get(server, {}).clear()
        for lease in leases.values() if objects is None else map(leases.get, objects):
            if lease is not None and lease.valid and now < lease.expires_ms and lease.acked < sent:
                lease.valid, lease.cause = False, cause

    # ------------------------------------------------------------------ round trips
    def _sleep(
        self, delay: float, now: float, window: OperationWindow | None, holder: int
    ) -> simpy.Timeout:
        """The event ``delay`` from ``now`` (the current time). An operation about to wait lets
        the session's next one start meanwhile (see :class:`OperationWindow`)."""
        if window is not None and window.due < now + delay:
            window.pass_on(holder)
        return self.sim.timeout(delay)

    def _reply_delay(self, server: int, processing: float, down_bytes: int, now: float) -> float:
        """How long from ``now`` (the current time) until a reply of ``down_bytes``, sent after
        ``processing``, arrives."""
        return self.sim.downlinks[self.index][server].transmit(now, down_bytes, processing)

    def _round_trip(
        self,
        server: int,
        up_bytes: int,
        handler,
        processing: float = 0.0,
        window: OperationWindow | None = None,
        holder: int = 0,
    ):
        """Send ``up_bytes``; when the server takes it up (it may wait for a worker) the server
        handles it (``handler(arrival time)`` returns the answer and the bytes of the reply),
        which leaves ``processing`` later; wait for the reply; return the answer."""
        sim = self.sim
        now = sim.env.now
        delay = sim.uplinks[self.index][server].transmit(now, up_bytes)
        yield self._sleep(delay, now, window, holder)
        now = arrived = now + delay  # the clock, as SimPy computes it (see _operations)
        if processing:
            wait = sim.servers[server].take_up(arrived, processing)
            if wait > 0:
                yield self._sleep(wait, now, window, holder)
                now += wait
        answer, down_bytes = handler(arrived)
        delay = self._reply_delay(server, processing, down_bytes, now)
        yield self._sleep(delay, now, window, holder)
        return answer

    def _control(self, server: int, request: MessageType, response: MessageType, handler, *args):
        up, down = packet_bytes(request), packet_bytes(response)
        self.sim.recorder.wire.control += up + down
        return (yield from self._round_trip(server, up, lambda _: (handler(*args), down)))

    # ------------------------------------------------------------------ sessions
    def run_session(self, plan: SessionPlan):
        """The session, started when it is due (see ``Simulation._sessions``)."""
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
        caches: dict[int, bool] = {}  # the policy's decision per object, for this session
        self.leases.setdefault(server, {})
        self.refused.setdefault(server, {})
        window = OperationWindow(
            sim.env,
            plan.operations,
            sim.config.workload.max_in_flight_operations,
            lambda holder: sim.env.process(
                self._operations(plan, server, ttl, caches, window, holder)
            ),
        )
        yield from self._operations(plan, server, ttl, caches, window, window.holder)
        while not window.finished:
            yield window.changed()
        wait = max(plan.end_ms, window.last_reply) - sim.env.now
        if wait > 0:
            yield sim.timeout(wait)
        yield from self._control(
            server,
            MessageType.SESSION_CLOSE,
            MessageType.SESSION_CLOSE_ACK,
            sim.servers[server].close_session,
            plan.session_id,
            self.index,
        )
        # the session's own leases ended with it: the host knows, and is told nothing
        leases = self.leases[server]
        for obj in plan.expected_reuse:
            leases.pop(obj, None)

    # ------------------------------------------------------------------ operations
    def _operations(
        self,
        plan: SessionPlan,
        server: int,
        ttl: int,
        caches: dict[int, bool],
        window: OperationWindow,
        holder: int,
    ):
        """The session's operations, in turn, while this process holds the dispatch. Each
        decides per object, installs what must be, submits, and falls back inline on a miss."""
        sim, recorder = self.sim, self.sim.recorder
        env, uplink, runtime = sim.env, sim.uplinks[self.index][server], sim.servers[server]
        costs = sim.config.server
        per_operation, per_inline_byte = costs.per_operation_ms, costs.per_inline_byte_ms
        per_put_byte = costs.per_put_byte_ms
        session_id = plan.session_id  # (a plan's attributes are Python look-ups)
        # ``now`` is the clock throughout: after a timeout, the time it was set for, as SimPy
        # computes it (the property is a Python call); read only after waits of unknown length
        now = env.now
        while window.holder == holder and window.due < math.inf:
            wait = window.due - now
            if wait > 0:  # until the next operation is due
                yield sim.timeout(wait)
                now += wait  # what the clock reads now, as SimPy computes it
            objects = window.start(now)
            if objects is None:  # max_in_flight outstanding: it waits for a reply
                recorder.operations_waited += 1
                objects = yield from window.slot()
                now = env.now
            start = now
            recorder.all_inline_bytes += _total(sim.inline_bytes, objects)
            references, installs, renewals, inline, outcome, cause, earliest = self._decide(
                plan, server, objects, caches, start
            )
            if installs:
                accepted = yield from self._install(
                    server, plan, ttl, installs, cause, window, holder
                )
                self._after_install(server, installs, accepted, references, inline, outcome)
                now = env.now
            sizes = self._frame_bytes(references, inline, renewals)
            # Look again if the install round trip took time or a lease may end before the frame
            # is out; otherwise nothing has changed since the decision.
            if installs or earliest <= uplink.last_byte_at(now, sizes[0]):
                sizes = self._drop_late_references(
                    server, references, renewals, inline, outcome, cause, now
                )
            expected = self._frame(server, references, renewals, sizes)
            fell_back = False
            while True:  # the frame, and after cache errors its inline resubmission
                delay = uplink.transmit(now, sizes[0])
                yield self._sleep(delay, now, window, holder)
                # server time: per operation, per inline byte (a hit is cheaper than a resend)
                # and per renewal body byte; the frame may wait its turn for a worker
                now = arrived = now + delay
                processing = per_operation + per_inline_byte * sizes[1] + per_put_byte * sizes[2]
                wait = runtime.take_up(now, processing)
                if wait > 0:
                    yield self._sleep(wait, now, window, holder)
                    now += wait
                failed, reply_delay = self._frame_processed(
                    server,
                    plan,
                    ttl,
                    references,
                    expected,
                    renewals,
                    processing,
                    outcome,
                    arrived,
                    now,
                )
                if not failed:
                    break
                # the reply's ERRORs bring a resubmission with those bodies inline
                sim.auditor.fallbacks += 1
                fell_back = True
                yield self._sleep(reply_delay, now, window, holder)
                now, references, expected, renewals = now + reply_delay, [], [], []
                sizes = self._frame_bytes(references, failed, renewals)
                self._frame(server, references, renewals, sizes, fallback=True)
            sim.auditor.fallbacks_completed += fell_back
            done = now + reply_delay
            window.finish(done)
            recorder.operations.append(
                start, done - start, fell_back, session_id, server, objects, outcome, cause
            )

    def _decide(
        self,
        plan: SessionPlan,
        server: int,
        objects: list[int],
        caches: dict[int, bool],
        now: float,
    ) -> tuple[list[int], list[int], list[int], list[int], dict, dict, float]:
        """Per object: reference it (and maybe renew), inline it, or install it. Returns the
        references, installs, renewals and inline objects, the outcome and install cause of
        every object that will not simply be a hit, and when the first lease referenced runs
        out. A lease is judged as of when the frame could start to leave, after what the host
        has queued already."""
        versions, leases, refused = (
            self.sim.content_version,
            self.leases[server],
            self.refused[server],
        )
        leaves = self.sim.uplinks[self.index][server].free_at(now)
        outcome: dict[int, RefOutcome] = {}
        cause: dict[int, InstallCause] = {}
        references, installs, renewals, inline = [], [], [], []
        earliest = math.inf
        for obj in objects:
            cached = caches.get(obj)
            if cached is None:
                cached = caches[obj] = self.sim.decisions.caches(plan, obj, self.limits[server])
            if not cached:
                inline.append(obj)
                outcome[obj] = RefOutcome.INLINED_BY_POLICY
                continue
            lease = leases.get(obj)
            if (  # self._holds(lease, versions[obj], leaves), spelled out: the hot path
                lease is not None
                and lease.valid
                and lease.version == versions[obj]
                and leaves < lease.expires_ms
            ):
                references.append(obj)
                if lease.expires_ms < earliest:
                    earliest = lease.expires_ms
                if leaves >= lease.renew_from_ms:
                    renewals.append(obj)
                continue
            if lease is not None and self._inline_once(lease):
                inline.append(obj)
                outcome[obj], cause[obj] = RefOutcome.INLINED_AFTER_INVALIDATE, lease.cause
                continue
            cause[obj] = self._install_cause(lease, versions[obj], leaves)
            if refused and leaves < refused.get(obj, -math.inf):  # backing off: no PUT yet
                inline.append(obj)
                outcome[obj] = RefOutcome.INSTALL_REJECTED
                continue
            installs.append(obj)
            outcome[obj] = RefOutcome.INSTALLED
        if self.sim.depends_on:
            earliest = self._sources(
                server,
                objects,
                references,
                installs,
                renewals,
                inline,
                outcome,
                cause,
                leaves,
                earliest,
            )
        return references, installs, renewals, inline, outcome, cause, earliest

    def _sources(
        self,
        server: int,
        objects: list[int],
        references: list[int],
        installs: list[int],
        renewals: list[int],
        inline: list[int],
        outcome: dict[int, RefOutcome],
        cause: dict[int, InstallCause],
        leaves: float,
        earliest: float,
    ) -> float:
        """A reference to an object made from another resolves only while the server holds
        that source at the version it was made from (spec section 11). So a source the host
        holds no usable lease of is installed along, even if the operation does not use it;
        while the operation inlines the source (once, after an invalidation), what was made
        from it goes inline too, neither referenced nor installed in vain. A source is put
        just before the first of the operation's ``objects`` that relies on it (where it
        would have to exist first). Returns the earliest end of a lease the frame relies on,
        sources included."""
        depends_on, leases, versions = (
            self.sim.depends_on,
            self.leases[server],
            self.sim.content_version,
        )
        refused, along = self.refused[server], False
        for obj in (*references, *installs):
            source = depends_on.get(obj)
            if source is None or source in references or source in installs:
                continue
            if source in inline:
                self._goes_inline(obj, references, renewals, installs, inline)
                # for its source's reason: an inline turn after an invalidation, or a back-off
                outcome[obj] = outcome[source]
                cause[obj] = cause.get(source, InstallCause.INVALIDATED)
                continue
            lease = leases.get(source)
            if lease is not None and self._holds(lease, versions[source], leaves):
                earliest = min(earliest, lease.expires_ms)
                continue
            source_cause = self._install_cause(lease, versions[source], leaves)
            if leaves < refused.get(source, -math.inf):  # no PUT of the source yet
                self._goes_inline(obj, references, renewals, installs, inline)
                outcome[obj], cause[obj] = RefOutcome.INSTALL_REJECTED, source_cause
            else:
                installs.append(source)
                cause[source] = source_cause
                along = True
        if along:  # each source just before the first object that relies on it
            position: dict[int, float] = {obj: i for i, obj in enumerate(objects)}
            for obj in objects:
                source = depends_on.get(obj)
                relied_on = obj in references or obj in installs
                if source is not None and source not in position and relied_on:
                    position[source] = position[obj] - 0.5
            installs.sort(key=position.__getitem__)
        return earliest

    @staticmethod
    def _goes_inline(
        obj: int,
        references: list[int],
        renewals: list[int],
        installs: list[int],
        inline: list[int],
    ) -> None:
        """``obj`` leaves the references (and renewals) or the installs for the inline bodies."""
        if obj in references:
            references.remove(obj)
            if obj in renewals:
                renewals.remove(obj)
        else:
            installs.remove(obj)
        inline.append(obj)

    def _after_install(
        self,
        server: int,
        installs: list[int],
        accepted: dict[int, int],
        references: list[int],
        inline: list[int],
        outcome: dict[int, RefOutcome],
    ) -> None:
        """Accepted installs join the references, refused ones go inline (and, with the
        policy's back-off, are not put again for a while); a source installed along (it has no
        outcome: the operation does not use it) joins neither."""
        policy, refused = self.sim.policy, self.refused[server]
        for obj in installs:
            if policy.refused_backoff_ms and obj not in accepted:
                refused[obj] = policy.backed_off_until_ms(self.sim.env.now)
            if obj not in outcome:
                continue
            if obj in accepted:
                references.append(obj)
            else:
                inline.append(obj)
                outcome[obj] = RefOutcome.INSTALL_REJECTED

    def _drop_late_references(
        self,
        server: int,
        references: list[int],
        renewals: list[int],
        inline: list[int],
        outcome: dict[int, RefOutcome],
        cause: dict[int, InstallCause],
        now: float,
    ) -> FrameSizes:
        """The last look before a frame leaves: a reference goes only if no CACHE_INVALIDATE
        came since the decision (an install round trip may have brought one) and its lease will
        still hold when the frame's last byte is on the wire (the host knows its own send
        queue). Otherwise its body goes inline, which lengthens the frame: so look again until
        none is late. Returns the sizes of the frame that leaves."""
        leases, versions = self.leases[server], self.sim.content_version
        uplink, depends_on = self.sim.uplinks[self.index][server], self.sim.depends_on
        while True:
            sizes = self._frame_bytes(references, inline, renewals)
            last_byte = uplink.last_byte_at(now, sizes[0])
            late = [
                obj
                for obj in references
                if not self._holds(leases.get(obj), versions[obj], last_byte)
                or (
                    obj in depends_on
                    and not self._holds(
                        leases.get(depends_on[obj]), versions[depends_on[obj]], last_byte
                    )
                )
            ]
            if not late:
                return sizes
            for obj in late:
                references.remove(obj)
                if obj in renewals:
                    renewals.remove(obj)
                inline.append(obj)
                lease = leases[obj]
                outcome[obj] = RefOutcome.INLINED_AFTER_INVALIDATE
                if not lease.valid:  # told since the decision: this inline body is its turn
                    cause[obj] = lease.cause
                    lease.inlined_since_invalid = True
                elif last_byte >= lease.expires_ms:
                    cause[obj] = InstallCause.EXPIRED
                else:  # its content changed, or its source's lease will not hold
                    cause[obj] = InstallCause.INVALIDATED

    @staticmethod
    def _holds(lease: LocalLease | None, version: int, until: float) -> bool:
        """Whether the host may count on ``lease`` at ``version`` until ``until``."""
        return (
            lease is not None
            and lease.valid
            and lease.version == version
            and until < lease.expires_ms
        )

    def _expiry_estimate(self, arrived_at: float, granted: int) -> float:
        """When the host must stop referencing: the server granted when the PUT arrived (in
        whole milliseconds), and a reference needs the one-way latency to get there. The host
        knows that arrival: its own queue, the PUT's last byte and resends, plus the latency."""
        return math.floor(arrived_at) + granted - self.sim.config.uplink.latency_ms

    def close_connections(self):
        """CLOSE every connection (header-only both ways: the spec gives CLOSE no metadata
        layout); the server ends the leases the connection owns."""
        for server in sorted(self.limits):
            self.sim.recorder.wire.control += 2 * HEADER_LEN
            close = self.sim.servers[server].close_connection
            yield from self._round_trip(
                server,
                HEADER_LEN,
                lambda _, c=close, s=server: (c(self.connection_id(s), self.index), HEADER_LEN),
            )

    def _inline_once(self, lease: LocalLease) -> bool:
        """After a CACHE_INVALIDATE (or a cache error) the next submit inlines; the one after
        reinstalls. Leases that simply ran out are reinstalled at once."""
        if lease.valid or lease.cause == InstallCause.EXPIRED:
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
            return SESSION_OWNED, plan.session_id
        return CONNECTION_OWNED, self.connection_id(server)

    def _put(self, server: int, plan: SessionPlan, ttl: int, objects: list[int], arrived_at: float):
        """Server side of a burst of CACHE_PUTs, in order, as the server takes it up (each run
        of PUTs for one owner at once); returns the accepted objects. The host's view of each
        lease counts from ``arrived_at``, when the burst reached the server: the host cannot
        see a wait for a worker."""
        sim, leases, versions = self.sim, self.leases[server], self.sim.content_version
        accepted: dict[int, int] = {}
        runs: list[tuple[tuple[OwnerScope, int], list[int]]] = []
        for obj in objects:
            owner = self._owner(plan, server, obj)
            if runs and runs[-1][0] == owner:
                runs[-1][1].append(obj)
            else:
                runs.append((owner, [obj]))
        depends_on = sim.depends_on
        for (scope, owner_id), group in runs:
            made_from = {  # made from the content current now
                obj: (depends_on[obj], versions[depends_on[obj]])
                for obj in group
                if obj in depends_on
            }
            acks, sent = sim.servers[server].put(
                self.index,
                group,
                [versions[obj] for obj in group],
                sim.policy.put_ttl_ms(ttl, scope == CONNECTION_OWNED),
                [sim.sizes[obj] for obj in group],
                scope,
                owner_id,
                made_from,
            )
            for i, obj in enumerate(group):  # (compiled: an index loop; a strict zip is a call)
                ack, acked = acks[i], sent[i]
                if ack.status == REJECTED:
                    continue
                granted = ack.accepted_ttl_ms
                accepted[obj] = granted
                expires = self._expiry_estimate(arrived_at, granted)
                leases[obj] = LocalLease(
                    versions[obj], expires, sim.policy.renew_from_ms(expires, granted), acked
                )
        return accepted

    def _install(
        self,
        server: int,
        plan: SessionPlan,
        ttl: int,
        objects: list[int],
        cause: dict[int, InstallCause],
        window: OperationWindow,
        holder: int,
    ):
        sim, recorder = self.sim, self.sim.recorder
        body = _total(sim.sizes, objects)
        wire = recorder.wire
        wire.put_body += body
        wire.cache_control += len(objects) * (PUT_OVERHEAD + ACK_BYTES)
        recorder.reinstalls_after_expiry += sum(
            cause[obj] == InstallCause.EXPIRED for obj in objects
        )
        accepted = yield from self._round_trip(
            server,
            len(objects) * PUT_OVERHEAD + body,
            lambda arrived: (
                self._put(server, plan, ttl, objects, arrived),
                len(objects) * ACK_BYTES,
            ),
            sim.config.server.per_put_byte_ms * body,
            window,
            holder,
        )
        recorder.installs += len(accepted)
        return accepted

    def _frame_bytes(
        self, references: list[int], inline: list[int], renewals: list[int]
    ) -> FrameSizes:
        """The bytes a FRAME_SUBMIT (plus renewal PUTs in the same burst) puts on the uplink,
        and of those its inline object blocks and its renewal bodies."""
        sim = self.sim
        inline_bytes = _total(sim.inline_bytes, inline)
        up = FRAME_SUBMIT_OVERHEAD + inline_bytes + ORB_BYTES * len(references)
        renew_body = 0
        if renewals:
            if sim.policy.renewal_body:
                renew_body = _total(sim.sizes, renewals)
            up += len(renewals) * PUT_OVERHEAD + renew_body
        return up, inline_bytes, renew_body

    def _frame(
        self,
        server: int,
        references: list[int],
        renewals: list[int],
        sizes: FrameSizes,
        fallback: bool = False,
    ) -> list[int]:
        """A FRAME_SUBMIT of ``sizes`` (from :meth:`_frame_bytes`) leaves: its bytes by class.
        Returns the versions its ORBs carry."""
        sim, wire, leases = self.sim, self.sim.recorder.wire, self.leases[server]
        _, inline_bytes, renew_body = sizes
        sim.recorder.hot_path_frames += 1
        wire.inline += inline_bytes
        wire.reference += ORB_BYTES * len(references)
        if fallback:
            wire.cache_control += FRAME_SUBMIT_OVERHEAD
        else:
            wire.control += FRAME_SUBMIT_OVERHEAD
        if renewals:
            wire.put_body += renew_body
            wire.cache_control += len(renewals) * (PUT_OVERHEAD + ACK_BYTES)
        # The ORBs carry the versions of the host's leases; none may be one it knows is invalid.
        expected, versions = [], sim.content_version
        for obj in references:
            lease = leases.get(obj)
            if lease is None or not lease.valid:
                sim.auditor.reference_after_invalidate += 1
            expected.append(versions[obj] if lease is None else lease.version)
        return expected

    def _frame_processed(
        self,
        server: int,
        plan: SessionPlan,
        ttl: int,
        references: list[int],
        expected: list[int],
        renewals: list[int],
        processing: float,
        outcome: dict[int, RefOutcome],
        arrived_at: float,
        now: float,
    ) -> tuple[list[int], float]:
        """The server takes up ``now`` the frame that reached it ``arrived_at``: it resolves its
        references and renews. Returns the references that failed (their leases are invalid
        from now on) and the delay until the reply arrives, ``processing`` from now."""
        sim, wire = self.sim, self.sim.recorder.wire
        failed = []
        if references:
            leases = self.leases[server]
            codes = sim.servers[server].submit(int(now), references, expected)
            for i, obj in enumerate(references):  # (compiled: an index loop)
                code = codes[i]
                if code:
                    outcome[obj] = RefOutcome(code)
                    failed.append(obj)
                    lease = leases[obj]
                    lease.valid, lease.cause = False, InstallCause.MISS
                    lease.inlined_since_invalid = True  # the fallback below inlines it
                    if code == RefOutcome.DEPENDENCY_INVALID:  # its source is not as it was
                        source = leases.get(sim.depends_on[obj])
                        if source is not None and source.valid:
                            source.valid, source.cause = False, InstallCause.MISS
                            source.inlined_since_invalid = True  # reinstall it, no inline turn
        if renewals:
            renewed = self._put(server, plan, ttl, renewals, arrived_at)
            sim.recorder.renewals += len(renewed)
        reply = RESULT_BYTES + len(failed) * ERROR_BYTES + len(renewals) * ACK_BYTES
        wire.control += RESULT_BYTES
        wire.cache_control += len(failed) * ERROR_BYTES
        return failed, self._reply_delay(server, processing, reply, now)
