"""One run of the discrete-event model: wire hosts, servers and links, run, collect records."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import simpy

from nnrpsim.engine.table import KIND_CODES
from nnrpsim.gc_pause import cyclic_gc_paused
from nnrpsim.protocol import ReasonCode, inline_object_bytes

from .auditor import Auditor
from .config import ModelConfig
from .decisions import CacheDecisions
from .held_memory import HeldMark
from .host import Host
from .link import Link
from .policies import make_policy
from .records import Recorder
from .routing import route_sessions
from .server import INVALIDATE_BYTES, Server
from .workload import (
    SessionPlan,
    WorkloadPlan,
    in_slot_frames,
    synthetic_plan,
    with_python_numbers,
)

Seed: TypeAlias = "np.random.SeedSequence | int | np.integer"
"""A run's seed: numpy's integers too (a notebook loops over ``np.arange``), which a compiled
function whose hint says ``int`` would refuse."""

Progress: TypeAlias = Callable[[float], None]
"""Told the share of a run's simulated time done, from above 0 to 1: a progress bar's."""

PROGRESS_STEPS = 100
"""How many parts a run told of its progress is run in: a run of ten minutes tells it every
six seconds, a run of a tenth of a second spends a few microseconds a part."""


@dataclass
class ModelResult:
    """Everything a run produced, as plain arrays and numbers (the runner makes frames of them)."""

    config: ModelConfig
    references: dict[str, np.ndarray]
    operations: dict[str, np.ndarray]
    memory: dict[str, np.ndarray]
    held_by_kind: dict[str, np.ndarray]
    """Per sample, server and object kind it holds: the bytes of that kind then and on average
    since the sample before (time_ms, server, kind, held_bytes, mean_held_bytes); a kind a
    server holds nothing of, then or since the sample before, has no row."""
    wire: dict[str, int]
    wire_bytes_total: int
    all_inline_bytes: int
    """What the object blocks of the operations started would take inline, counted as each
    starts: an operation still on its way at the end has its bytes on the wire and no
    reference records yet."""
    link_utilisation: float
    """The busiest link's offered load over the run: bytes sent (resends included) over what its
    bandwidth carries in ``duration_ms``. At 1 or more its queue only grows."""
    server_busy_ms: list[float]
    """Each server's processing time of FRAME_SUBMITs and CACHE_PUT bursts over the run, the
    operations it drained after the end included: the processing the run's operations offered
    it."""
    accepted_ttl_ms: np.ndarray
    invalidations: dict[str, int]
    counters: dict[str, int]
    audit: dict[str, int]
    violations: int
    fallback_success_rate: float
    wall_s: float
    events: int = 0
    operations_behind: int = 0
    """Operations never completed by sessions still running at the end: they fell behind their
    plan because a link, or the session's own transfers (its max_in_flight window), could not
    keep up."""
    at_warmup: dict[str, float] = field(default_factory=dict)
    """Cumulative wire bytes and counters when the warm-up ended, to subtract from the totals."""
    held: list[tuple[HeldMark, HeldMark]] = field(default_factory=list)
    """Per server, its memory held integrated by kind to the warm-up's end and to the run's
    end (``duration_ms``), the second mark's peak counted since the warm-up: what the time
    average of the bytes held over the measured window, by kind and in all, and their most
    at once come from."""


class Simulation:
    def __init__(
        self,
        config: ModelConfig,
        seed: Seed,
        plan: WorkloadPlan | None = None,
    ) -> None:
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        plan_seed, link_seed = seq.spawn(2)
        self.config = config
        self.plan = (
            synthetic_plan(config.workload, config.hosts, config.duration_ms, plan_seed)
            if plan is None
            else with_python_numbers(in_slot_frames(plan))
        )
        self.env = simpy.Environment()
        self.recorder = Recorder()
        self.auditor = Auditor()
        self.policy = make_policy(config.policy)
        self.decisions = CacheDecisions(self.policy, config.workload, self.plan)
        # Per-object values the hot path reads one at a time: plain lists, not numpy scalars.
        self.content_version: list[int] = [1] * len(self.plan.catalog)
        self.sizes = self.decisions.sizes
        self.inline_bytes: list[int] = inline_object_bytes(self.plan.sizes).tolist()
        self.depends_on = self.plan.depends_on
        self._made_from = self.plan.dependents()
        self.servers = [
            Server(self, i, config.server, self.plan.catalog) for i in range(config.servers)
        ]
        hosts = max(config.hosts, 1 + max((s.host for s in self.plan.sessions), default=0))
        self.hosts = [Host(self, i) for i in range(hosts)]
        link_seeds, rng = iter(link_seed.spawn(2 * hosts * config.servers)), np.random.default_rng
        self.uplinks = [
            [Link(config.uplink, rng(next(link_seeds))) for _ in self.servers] for _ in self.hosts
        ]
        self.downlinks = [
            [Link(config.downlink, rng(next(link_seeds))) for _ in self.servers] for _ in self.hosts
        ]
        self._server_of = route_sessions(self.plan.sessions, config.servers, config.routing)
        self.timeout = self.env.timeout  # every delay of the model is a SimPy timeout
        self.events = 0  # SimPy events the run processed: timeouts, process starts and ends, ...
        # what servers have sent so far: CACHE_ACKs and CACHE_INVALIDATEs reach a host in this
        # order over its downlink (see Host.on_invalidate)
        self.sent = 0
        # each server's memory held, integrated to the warm-up's end and to the run's
        self._held_at_warmup: list[HeldMark] = []
        self._held_at_end: list[HeldMark] | None = None

    # ------------------------------------------------------------------ wiring helpers
    def route(self, plan: SessionPlan) -> int:
        """The server of a session, by the configured routing rule."""
        return self._server_of[plan.session_id]

    def deliver_invalidate(
        self, server: int, host: int, objects: list[int] | None, reason: ReasonCode
    ) -> None:
        """CACHE_INVALIDATE over the downlink; the host reacts when it arrives."""
        count = 1 if objects is None else len(objects)
        self.recorder.invalidations[int(reason)] += count
        self.recorder.wire.cache_control += count * INVALIDATE_BYTES
        delay = self.downlinks[host][server].transmit(self.env.now, count * INVALIDATE_BYTES)
        self.sent += 1
        sent = self.sent
        event = self.timeout(delay)
        event.callbacks.append(
            lambda _: self.hosts[host].on_invalidate(server, objects, reason, sent)
        )

    # ------------------------------------------------------------------ processes
    def _sampler(self):
        """Per server, at each of the run's sample times (whole milliseconds, as the vector
        engine's: ``ModelConfig.sample_times_ms``): memory (then, and the bytes held on
        average since the last sample: the first, then), in all and by kind; the load since
        the last sample of the busiest link to or from it (bytes sent over what the link
        carries meanwhile); and its own load (processing booked meanwhile over the interval:
        frames processed at once)."""
        sent = {id(link): 0 for row in (*self.uplinks, *self.downlinks) for link in row}
        busy = [0.0] * len(self.servers)
        marked = [[0.0] * KIND_CODES for _ in self.servers]  # (the integrals at the last sample)
        last = -1
        for now in self.config.sample_times_ms():
            if now > self.env.now:
                yield self.timeout(now - self.env.now)
            # (the first sample has no interval before it: its loads are of nothing, 0)
            width = float(now - last) if last >= 0 else self.config.sample_interval_ms
            for server in self.servers:
                table, load = server.table, 0.0
                kinds = table.held_kind_bytes
                integrals = server.held.mark(float(now), table).kind_ms_bytes
                before = marked[server.index]
                means = (
                    [(integrals[k] - before[k]) / width for k in range(KIND_CODES)]
                    if last >= 0
                    else [float(held) for held in kinds]
                )
                marked[server.index] = integrals
                for row in (*self.uplinks, *self.downlinks):
                    link = row[server.index]
                    carried = link.config.bandwidth_bytes_per_ms * width
                    load = max(load, (link.bytes_sent - sent[id(link)]) / carried)
                    sent[id(link)] = link.bytes_sent
                self.recorder.memory.append(
                    now,
                    server.index,
                    table.live_bytes(now),
                    table.held_bytes,
                    sum(means),
                    table.held_objects,
                    load,
                    (server.busy_ms - busy[server.index]) / width,
                )
                busy[server.index] = server.busy_ms
                for kind, held in enumerate(kinds):
                    if held or means[kind]:
                        self.recorder.held_by_kind.append(
                            now, server.index, kind, held, means[kind]
                        )
            last = now

    def _content_changes(self):
        """Each content change first among its instant's events but the warm-up's mark and
        the faults: before the frames (as the vector engine puts a change before the
        references of its millisecond), the sweep and the memory sample due then, whatever
        order SimPy had queued them in."""
        for at, obj in zip(
            self.plan.change_times_ms.tolist(), self.plan.change_objects.tolist(), strict=True
        ):
            if at > self.env.now:
                yield self._first_at(at - self.env.now)
            self.content_version[obj] += 1
            for dependent in self._made_from.get(obj, ()):  # made from it: changed with it
                self.content_version[dependent] += 1
            for server in self.servers:
                server.change_content(obj)

    def _mark_warmup(self) -> None:
        self._at_warmup = self._totals()
        self._held_at_warmup = self._held_marks()
        for server in self.servers:
            server.held.restart_peak(self.env.now)

    def _held_marks(self) -> list[HeldMark]:
        return [server.held.mark(self.env.now, server.table) for server in self.servers]

    def _mark_end(self) -> None:
        self._held_at_end = self._held_marks()

    def _totals(self) -> dict[str, float]:
        recorder = self.recorder
        links = [link for row in (*self.uplinks, *self.downlinks) for link in row]
        return {
            **{f"wire_{name}": n for name, n in recorder.wire.as_dict().items()},
            "wire_bytes_total": sum(link.bytes_sent for link in links),
            "wire_bytes_resent": sum(link.bytes_resent for link in links),
            "all_inline_bytes": recorder.all_inline_bytes,
            "installs": recorder.installs,
            "renewals": recorder.renewals,
            "refused_puts": recorder.refused_puts,
            "evictions": recorder.evictions,
            "operations_waited": recorder.operations_waited,
            "invalidations": sum(recorder.invalidations.values()),
            "reinstalls_after_expiry": recorder.reinstalls_after_expiry,
            **{f"server_busy_ms_{server.index}": server.busy_ms for server in self.servers},
        }

    def _sessions(
        self,
        host: Host,
        plans: list[tuple[int, SessionPlan]],
        processes: list[simpy.Process | None],
    ):
        """A host's sessions (``(index, plan)``, by start), each started when due into
        ``processes[index]``; when the last has ended the host closes its connections. (A
        session waiting to start would sit in SimPy's event queue all along, and every push
        and pop there pays for the queue's depth.)"""
        env, started = self.env, []
        for index, plan in plans:
            if plan.start_ms > env.now:
                yield self.timeout(plan.start_ms - env.now)
            started.append(env.process(host.run_session(plan)))
            processes[index] = started[-1]
        yield env.all_of(started)
        yield from host.close_connections()

    def _first_at(self, delay: float) -> simpy.Event:
        """A timeout processed before the other events of its instant but those queued this
        way earlier: at SimPy's ``URGENT`` priority, as ``env.run(until=...)`` schedules its
        stop."""
        event = simpy.Event(self.env)
        event._ok, event._value = True, None
        self.env.schedule(event, simpy.core.URGENT, delay)
        return event

    def _at(self, when: float, action):
        """``action`` at ``when``, before the frames and content changes due then."""
        yield self._first_at(when)
        action()

    def _run_until(self, until: float, progress: Progress | None) -> None:
        """``env.run(until=until)``, counting the events it processes without a step of its
        own: SimPy schedules each event once, numbering them in turn (its ``_eid`` counter,
        read before and after), so those processed are those queued before or scheduled
        since, less those still queued and each ``env.run``'s own stop event. With
        ``progress``, in parts (:func:`progress_ends`), each told to it as it ends: a stop
        pauses SimPy between two events, which then run in the same order as in one part.
        SimPy 4.1 schedules each stop event again, to run first when the next part starts:
        those are left out of the count too."""
        env = self.env
        queued, first = len(env._queue), next(env._eid)
        ends = [until] if progress is None else progress_ends(until)
        put_back = 0
        for end in ends:
            env.run(until=end)
            if progress is not None:
                progress(end / until)
                queue = env._queue  # (no model event has a priority below SimPy's URGENT, 0)
                if end != until and queue and queue[0][1] < 0:
                    put_back += 1
        scheduled = next(env._eid) - first - 1
        self.events = queued + scheduled - len(env._queue) - len(ends) - put_back

    def run(self, progress: Progress | None = None) -> ModelResult:
        """Run to the end and collect the records; ``progress`` is told the share of the
        simulated time done, :data:`PROGRESS_STEPS` times."""
        config, env = self.config, self.env
        plans: dict[int, list[tuple[int, SessionPlan]]] = {host.index: [] for host in self.hosts}
        for index, plan in enumerate(self.plan.sessions):
            plans[plan.host].append((index, plan))
        processes: list[simpy.Process | None] = [None] * len(self.plan.sessions)
        for host in self.hosts:
            by_start = sorted(plans[host.index], key=lambda item: item[1].start_ms)
            env.process(self._sessions(host, by_start, processes))
        for server in self.servers:
            env.process(server.sweep())
        env.process(self._sampler())
        self._at_warmup = self._totals()
        self._held_at_warmup = self._held_marks()
        if config.warmup_ms > 0:
            env.process(self._at(config.warmup_ms, self._mark_warmup))
        if config.operation_timeout_ms > 0:  # (else the run stops at its end: marked there)
            env.process(self._at(config.duration_ms, self._mark_end))
        faults = config.faults
        if faults.restart_at_ms is not None:
            env.process(
                self._at(
                    faults.restart_at_ms, lambda: self.servers[0].restart(faults.announce_restart)
                )
            )
        if faults.memory_pressure_at_ms is not None:
            env.process(
                self._at(
                    faults.memory_pressure_at_ms,
                    lambda: self.servers[0].shrink_memory(faults.memory_pressure_fraction),
                )
            )
        # (after the warm-up's mark and the faults: at one instant they come first)
        env.process(self._content_changes())
        start = time.perf_counter()
        with cyclic_gc_paused():
            self._run_until(config.duration_ms + config.operation_timeout_ms, progress)
        wall = time.perf_counter() - start
        return self._result(wall, processes)

    def _reference_columns(self) -> dict[str, np.ndarray]:
        """Per-reference records plus what each object weighs, sent inline or as a body."""
        columns = self.recorder.operations.references()
        sizes = self.plan.sizes[columns["object"]]
        columns["kind"] = self.plan.catalog.kind[columns["object"]]
        columns["size"] = sizes
        columns["inline_bytes"] = inline_object_bytes(sizes)
        return columns

    def _result(self, wall: float, processes: list[simpy.Process | None]) -> ModelResult:
        recorder, auditor = self.recorder, self.auditor
        operations = recorder.operations.operations()
        # An operation is recorded when its last frame is handled, with the time its reply
        # arrives: one whose reply would come after the run ended never completed. So did one
        # planned before the end that its session never got to start.
        completed = operations["start_ms"] + operations["latency_ms"] <= self.env.now
        done = Counter(operations["session"][completed].tolist())
        missing = [
            sum(at < self.config.duration_ms for at, _ in plan.operations) - done[plan.session_id]
            for plan in self.plan.sessions
        ]
        auditor.operation_never_completed = sum(missing)
        behind = sum(  # (a session not started by the end had nothing planned before it)
            n
            for n, process in zip(missing, processes, strict=True)
            if process is not None and process.is_alive
        )
        links = [link for row in (*self.uplinks, *self.downlinks) for link in row]
        return ModelResult(
            config=self.config,
            references=self._reference_columns(),
            operations=operations,
            memory=recorder.memory.arrays(),
            held_by_kind=recorder.held_by_kind.arrays(),
            wire=recorder.wire.as_dict(),
            wire_bytes_total=sum(link.bytes_sent for link in links),
            all_inline_bytes=recorder.all_inline_bytes,
            server_busy_ms=[server.busy_ms for server in self.servers],
            link_utilisation=max(
                link.bytes_sent / (link.config.bandwidth_bytes_per_ms * self.config.duration_ms)
                for link in links
            ),
            accepted_ttl_ms=np.asarray(recorder.accepted_ttl_ms, dtype=np.int64),
            invalidations={
                ReasonCode(r).name.lower(): n for r, n in recorder.invalidations.items()
            },
            counters={
                "installs": recorder.installs,
                "renewals": recorder.renewals,
                "refused_puts": recorder.refused_puts,
                "evictions": recorder.evictions,
                "operations_waited": recorder.operations_waited,
                "reinstalls_after_expiry": recorder.reinstalls_after_expiry,
                "hot_path_frames": recorder.hot_path_frames,
                "retransmissions": sum(link.retransmissions for link in links),
                "wire_bytes_resent": sum(link.bytes_resent for link in links),
            },
            audit=auditor.as_dict(),
            violations=auditor.violations,
            fallback_success_rate=auditor.fallback_success_rate,
            wall_s=wall,
            events=self.events,
            operations_behind=behind,
            at_warmup=self._at_warmup,
            held=list(
                zip(self._held_at_warmup, self._held_at_end or self._held_marks(), strict=True)
            ),
        )


def progress_ends(until: float) -> list[float]:
    """Where the parts of a run to ``until`` told of its progress end: whole milliseconds
    (SimPy stops at ``now + (end - now)``, which is ``end`` itself when ``now`` is whole), and
    ``until`` last; fewer parts in a run shorter than :data:`PROGRESS_STEPS` ms."""
    ends = [float(until * step // PROGRESS_STEPS) for step in range(1, PROGRESS_STEPS)]
    return [*sorted(end for end in set(ends) if 0 < end < until), until]


def simulate(
    config: ModelConfig,
    seed: Seed,
    plan: WorkloadPlan | None = None,
    progress: Progress | None = None,
) -> ModelResult:
    """Run the model once: same config, seed and plan give the same records, whether or not
    ``progress`` is told how far the run has got."""
    return Simulation(config, seed, plan).run(progress)
