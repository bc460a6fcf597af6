"""One run on the vector engine: a workload plan flattened into a reference stream, replayed
by the lease engine at the TTL the hosts would ask for, measured as the DES runs are."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import chain
from typing import NamedTuple

import numpy as np

from .engine.replay import COUNTS, ReplayResult, replay_after
from .engine.replay.result import SPAN_FIGURES
from .engine.stream import ReferenceStream
from .metrics import memory_settled_s, vector_kind_metrics, vector_metrics
from .model import ModelConfig, make_policy
from .model.decisions import CacheDecisions
from .model.routing import route_sessions
from .model.server import session_lease_ttl_ms
from .model.session_bytes import session_frame_bytes
from .model.workload import SessionPlan, WorkloadPlan, in_slot_frames, with_python_numbers
from .warmup import held_per_sample


def session_ttl_ms(config: ModelConfig, expected_ms: float) -> int:
    """The lease TTL a session of ``expected_ms`` gets, as on the DES: its host's hint (the
    policy's fraction of that length, or its fixed hint), clamped by the server."""
    return session_lease_ttl_ms(config.server, make_policy(config.policy).ttl_hint_ms(expected_ms))


def base_ttl_ms(plan: WorkloadPlan, config: ModelConfig) -> int:
    """The replay's TTL: a session's of the plan's mean expected length (for a trace, its one
    session spans the whole trace). Each reference asks for its own session's, as a multiple
    of this (``ReferenceStream.ttl_scale``)."""
    expected = [session.expected_ms for session in plan.sessions]
    mean = float(np.mean(expected)) if expected else config.workload.session_duration_ms
    return session_ttl_ms(config, mean)


def plan_stream(
    plan: WorkloadPlan, config: ModelConfig, host_done_ms: float | None = None
) -> tuple[ReferenceStream, np.ndarray]:
    """Flatten a plan's operations into a time-ordered reference stream whose invalidations
    are what ends leases (:func:`_lease_ends`); and, per reference, whether its host caches
    the object in that session (the DES hosts' decision: :class:`CacheDecisions`).

    Just before each cached object of an operation made from a source the operation does
    not use itself comes a reference to that source made ``along``: the DES hosts install
    the source along when no lease of it is live, before the frame that relies on it, for
    any of the objects made from it that the frame references (the first may go inline).
    A reference to an object whose source the operation uses itself names that source
    (``frame_source``). Each reference asks for its session's TTL (``ttl_scale``, of
    :func:`base_ttl_ms`), or for an object its connection owns the policy's connection TTL
    when it sets one. Each operation is one frame (``operation``): a DES host decides its
    references before it sends its PUTs. A session's end (before the run's) ends the leases
    of the objects it cached of its own; once the host's last session has ended
    (``host_done_ms``, None: the last of ``plan``'s; a host's sessions may be routed to
    several servers), before the run's end, it closes its connections, and every lease left
    ends (the one host the vector engine replays owns them all). Each object is owned by its
    session (its private objects) or by its connection (``connection_owned``): a DES host
    sends an operation's PUTs in one burst per run of one owner, which decides what its
    server announces."""
    width = max(len(plan.sizes), 1)  # a (session, object) pair is session * width + object
    laid = _LaidOut.of(plan, config, width)
    # a session's end (before the run's) ends the leases of the objects it cached of its own,
    # in the order it first used them
    pairs = laid.pairs
    end_ms = np.array([s.end_ms for s in plan.sessions], dtype=np.float64)
    ending = (
        laid.decided & (end_ms < config.duration_ms)[pairs // width] & _member(pairs, laid.owned)
    )
    by_first_use = np.argsort(laid.first[ending], kind="stable")
    released = (pairs[ending] % width)[by_first_use]
    closes = end_ms[pairs[ending] // width][by_first_use]
    done_ms = end_ms.max(initial=np.inf) if host_done_ms is None else host_done_ms
    if done_ms < config.duration_ms:
        left = np.unique(laid.objects)
        released = np.concatenate([released, left])
        closes = np.concatenate([closes, np.full(len(left), done_ms)])
    # in time order, as the DES runs them: two sessions' references within one millisecond
    # keep their order (an operation's share its time, and keep theirs)
    order = np.argsort(laid.times, kind="stable")
    changes = _lease_ends(plan, config, closes, released, laid.times[order])
    objects, scales, sources, along = laid.objects, laid.scales, laid.sources, laid.along
    connection_owned = np.ones(width, dtype=bool)  # (what no session owns: its connection)
    connection_owned[laid.owned % width] = False
    stream = ReferenceStream(
        laid.times.astype(np.int64)[order],
        objects[order],
        plan.sizes[objects[order]],
        *changes[:2],
        operation=laid.frames[order],
        along=along[order] if along.any() else None,
        ttl_scale=scales[order] if (scales != 1.0).any() else None,
        invalidation_kept=changes[2] if changes[2].any() else None,
        invalidation_through=changes[3] if (changes[3] >= 0).any() else None,
        frame_source=sources[order] if (sources >= 0).any() else None,
        invalidation_position=changes[4],
        invalidation_within=changes[5] if changes[5].any() else None,
        connection_owned=connection_owned,
    )
    return stream, laid.replayed[order]


@dataclass(frozen=True)
class _LaidOut:
    """A plan's references as its stream lays them out, in plan order (each just after the
    one to its source made along, if any), and its hosts' decisions; made by one call, so
    that the arrays it needs on the way go before the stream is made (they were most of its
    peak: 181 bytes a reference, now 140)."""

    objects: np.ndarray
    times: np.ndarray  # (ms, as planned)
    frames: np.ndarray  # each operation's one frame
    along: np.ndarray
    replayed: np.ndarray  # cached by its host, or made along
    sources: np.ndarray  # the source the operation uses itself, -1 for none
    scales: np.ndarray  # the TTL it asks for, against the replay's
    # each (session, object) pair: the policy's decision, and its first reference
    pairs: np.ndarray
    decided: np.ndarray
    first: np.ndarray
    owned: np.ndarray  # the pairs of the objects each session owns

    @classmethod
    def of(cls, plan: WorkloadPlan, config: ModelConfig, width: int) -> _LaidOut:
        policy = make_policy(config.policy)
        limits, sessions, depends_on = config.server.limits, plan.sessions, plan.depends_on
        base = base_ttl_ms(plan, config)
        # the TTLs a session's PUTs ask for, against the replay's: of the objects it owns,
        # and of the others (the connection's: with a connection TTL, the policy's, clamped)
        own_scale = np.array(
            [session_ttl_ms(config, s.expected_ms) / base if base > 0 else 1.0 for s in sessions]
        )
        shared_scale = own_scale
        if policy.connection_ttl_ms is not None:
            connection_ttl = min(
                max(policy.put_ttl_ms(base, True), limits.ttl_floor_ms), limits.ttl_ceiling_ms
            )
            shared_scale = np.full(len(sessions), connection_ttl / base)
        refs = _References.of(plan)
        # the policy's decision, once per session and object
        pairs, first, inverse = _unique_with_first(refs.session * width + refs.obj)
        decisions = CacheDecisions(policy, config.workload, plan)
        decided = np.array(
            [decisions.caches(sessions[p // width], p % width, limits) for p in pairs.tolist()],
            dtype=bool,
        )
        cached = decided[inverse]
        # a cached object made from a source: the source is in its operation, or made along
        source_of = np.full(width, -1, dtype=np.int64)
        source_of[list(depends_on)] = list(depends_on.values())
        source = np.where(cached, source_of[refs.obj], -1)
        in_operation = (source >= 0) & _member(
            refs.operation * width + source, refs.operation * width + refs.obj
        )
        made_along = (source >= 0) & ~in_operation
        # each reference, just after the one to its source made along if any
        at_ref = np.arange(len(refs.obj)) + np.cumsum(made_along)
        at_along = at_ref[made_along] - 1
        n = len(refs.obj) + len(at_along)
        objects, operation = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        objects[at_ref], objects[at_along] = refs.obj, source[made_along]
        operation[at_ref], operation[at_along] = refs.operation, refs.operation[made_along]
        along, replayed = np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
        along[at_along], replayed[at_ref] = True, cached
        sources = np.full(n, -1, dtype=np.int64)
        sources[at_ref] = np.where(in_operation, source, -1)
        session = refs.session_of_operation[operation]
        owned = _owned_pairs(sessions, width)
        own = _member(session * width + objects, owned)
        n_operations = len(refs.time_of_operation)
        return cls(
            objects,
            refs.time_of_operation[operation],
            # numbered by how many references there are up to its end
            np.cumsum(np.bincount(operation, minlength=n_operations))[operation],
            along,
            replayed,
            sources,
            np.where(own, own_scale[session], shared_scale[session]),
            pairs,
            decided,
            first,
            owned,
        )


@dataclass(frozen=True)
class _References:
    """A plan's references in plan order (session by session, operation by operation): each
    one's object and operation, and each operation's session and planned time."""

    obj: np.ndarray
    operation: np.ndarray
    session_of_operation: np.ndarray
    time_of_operation: np.ndarray

    @property
    def session(self) -> np.ndarray:
        return self.session_of_operation[self.operation]

    @classmethod
    def of(cls, plan: WorkloadPlan) -> _References:
        operations = [op for session in plan.sessions for op in session.operations]
        counts = np.fromiter((len(refs) for _, refs in operations), np.int64, len(operations))
        return cls(
            np.fromiter(
                chain.from_iterable(refs for _, refs in operations), np.int64, int(counts.sum())
            ),
            np.repeat(np.arange(len(operations)), counts),
            np.repeat(
                np.arange(len(plan.sessions)), [len(s.operations) for s in plan.sessions]
            ).astype(np.int64),
            np.fromiter((at for at, _ in operations), np.float64, len(operations)),
        )


def _unique_with_first(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(keys, return_index=True, return_inverse=True)`` by a stable sort: numpy
    2.4's unique hashes, several times slower on the million keys of a long run."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.ones(len(keys), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], order[starts], inverse


def _member(keys: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Per key, whether ``among`` holds it (``np.isin``, by a sort and a binary search)."""
    if not len(among):
        return np.zeros(len(keys), dtype=bool)
    among = np.sort(among)
    return among[np.minimum(np.searchsorted(among, keys), len(among) - 1)] == keys


def _owned_pairs(sessions: list[SessionPlan], width: int) -> np.ndarray:
    """The (session, object) pairs of the objects each session owns: its expected reuses."""
    return np.fromiter(
        (i * width + obj for i, session in enumerate(sessions) for obj in session.expected_reuse),
        np.int64,
    )


def _lease_ends(
    plan: WorkloadPlan,
    config: ModelConfig,
    closes: list[float],
    released: list[int],
    reference_times: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What ends leases, as the stream's invalidations (times, objects, kept, through,
    positions, within): the plan's content changes; with each, a change of what was made from
    the object (through the server's cascade, or kept without it: the hosts see the change
    themselves); and the closes ``closes`` (of sessions, and of the host's connections) of
    the objects ``released``. Content changes come first in their millisecond, before its
    references and its memory sample; a close comes within its millisecond, after the
    references made before it (``reference_times``, in order, as the DES runs them), and
    after the sample."""
    times, objects = plan.change_times_ms.astype(np.int64), plan.change_objects
    made_from = plan.dependents()
    made = [made_from.get(obj, []) for obj in objects.tolist()]
    counts = np.array([len(dependents) for dependents in made], dtype=np.int64)
    n_made, n_released = int(counts.sum()), len(released)
    cascade = config.server.cascade_dependencies
    changed = np.concatenate([times, np.repeat(times, counts)])
    close_times = np.asarray(closes, np.float64)
    return (
        np.concatenate([changed, np.floor(close_times).astype(np.int64)]),
        np.concatenate(
            [
                objects,
                np.array([o for dependents in made for o in dependents], dtype=np.int64),
                np.asarray(released, dtype=np.int64),
            ]
        ),
        np.concatenate(
            [np.zeros(len(objects), bool), np.full(n_made, not cascade), np.zeros(n_released, bool)]
        ),
        np.concatenate(
            [np.full(len(objects), -1), np.repeat(objects, counts), np.full(n_released, -1)]
        ).astype(np.int64),
        np.concatenate(
            [
                np.searchsorted(reference_times, changed, side="left"),
                np.searchsorted(reference_times, close_times, side="right"),
            ]
        ),
        np.concatenate([np.zeros(len(changed), bool), np.ones(n_released, bool)]),
    )


class VectorRun(NamedTuple):
    """What a vector run reports, as a DES run's tables have it."""

    metrics: dict[str, float]
    kinds: dict[str, list]
    """The run's metrics by object kind (:func:`~nnrpsim.metrics.vector_kind_metrics`)."""
    memory: dict[str, np.ndarray]
    """Per sample time and server, the DES's columns: ``time_ms``, ``server``,
    ``live_bytes``, ``held_bytes`` (with the leases that ran out until the server's expiry
    sweep, or something else, frees them), ``mean_held_bytes``, ``objects`` (leases held),
    and ``link_load`` and ``server_load`` NaN (no network and no processing, as its
    latencies)."""


def vector_run(config: ModelConfig, plan: WorkloadPlan, steady_load: bool = True) -> VectorRun:
    """The run's metrics, its metrics by object kind and its memory over time, on the
    engine's replay, counted after the warm-up as the DES's are (the memory over time is the
    whole run's). Each server replays the sessions routed to it, in its own memory; their
    counts and bytes add up, and so do their peaks (each server's own, as the DES's).
    ``memory_settled_s`` needs a load that settles (as :func:`~nnrpsim.metrics.des_metrics`):
    NaN for a run whose sessions or references follow a log (``steady_load`` false). The
    vector engine refuses faults: the whole run is judged."""
    plan = with_python_numbers(in_slot_frames(plan))  # (the hosts' decisions: compiled code)
    server_of = route_sessions(plan.sessions, config.servers, config.routing)
    times = np.array(config.sample_times_ms(), dtype=np.int64)
    host_done_ms = max((s.end_ms for s in plan.sessions), default=math.inf)
    parts = [
        _server_replay(
            config,
            replace(plan, sessions=[s for s in plan.sessions if server_of[s.session_id] == k]),
            times,
            host_done_ms,
        )
        for k in range(config.servers)
    ]
    result = _summed([part.result for part in parts])
    referenced, sizes, inlined = (
        np.concatenate([getattr(part, name) for part in parts])
        for name in ("referenced", "sizes", "inlined")
    )
    policy = make_policy(config.policy)
    # a frame an operation since the warm-up, one that references nothing too
    warmup = config.warmup_ms
    frames = sum(at >= warmup for session in plan.sessions for at, _ in session.operations)
    session_bytes = session_frame_bytes(plan.sessions, server_of, warmup)
    metrics = vector_metrics(
        result, 0, sizes, plan.sizes, inlined, policy.renewal_body, frames, session_bytes
    )
    kinds = vector_kind_metrics(result, 0, plan.catalog.kind, plan.sizes, referenced, inlined)

    # (in the DES's order: by time, then server)
    def per_sample(name: str) -> np.ndarray:
        return np.stack([getattr(part.result, name)[0] for part in parts], axis=1).ravel()

    live = per_sample("live_samples")
    memory = {
        "time_ms": np.repeat(times, len(parts)),
        "server": np.tile(np.arange(len(parts)), len(times)),
        "live_bytes": live,
        "held_bytes": per_sample("held_samples"),
        "mean_held_bytes": per_sample("held_means"),
        "objects": per_sample("held_lease_samples"),
        "link_load": np.full(len(live), np.nan),
        "server_load": np.full(len(live), np.nan),
    }
    metrics["memory_settled_s"] = memory_settled_s(*held_per_sample(memory), None, steady_load)
    return VectorRun(metrics, kinds, memory)


@dataclass(frozen=True)
class _ServerReplay:
    """One server's replay, and its references counted: their objects and sizes, and which
    the hosts sent inline by policy."""

    result: ReplayResult
    referenced: np.ndarray
    sizes: np.ndarray
    inlined: np.ndarray


def _server_replay(
    config: ModelConfig, plan: WorkloadPlan, times: np.ndarray, host_done_ms: float
) -> _ServerReplay:
    # what the hosts cache, sources made along
    stream, replayed = plan_stream(plan, config, host_done_ms)
    policy, limits = make_policy(config.policy), config.server.limits
    # the references counted: made by the operations (not along), after the warm-up
    counted = ~stream.along_mask & (stream.time_ms >= config.warmup_ms)
    referenced, sizes, inlined = stream.object_id[counted], stream.size[counted], ~replayed[counted]
    # the window is the run's, as the DES samples it: from 0 to its end
    cached = replace(
        stream.references(replayed), start_ms=0, end_ms=max(stream.end_ms, int(config.duration_ms))
    )
    # (not held beside the copy the replay reads: the Mooncake trace 16 times over, 641 MiB
    # at the run's peak, 573 without it)
    del stream
    # The hosts renew proactively: on a use within the last renew_margin of the lease.
    margin = policy.renew_margin
    result = replay_after(
        cached,
        int(config.warmup_ms),
        [base_ttl_ms(plan, config)],
        "reset" if margin > 0 else "non_reset",
        limits.capacity_bytes,
        limits.eviction,
        per_object=True,
        renew_margin=margin or 1.0,
        inline_after_invalidate=policy.inline_after_invalidate,
        # the DES host's back-off, in whole milliseconds (CachePolicy.backed_off_until_ms)
        refused_backoff_ms=math.ceil(policy.refused_backoff_ms),
        max_cache_entries=limits.max_cache_entries,
        renewal=limits.renewal,
        sample_times=times,
        sweep_ms=config.server.sweep_interval_ms,
    )
    return _ServerReplay(result, referenced, sizes, inlined)


SUMMED_FIGURES = ("mean_live_bytes", *SPAN_FIGURES)
"""What several servers' replays add up to of their live and held bytes: their means, their
peaks (each server's own) and their memory over time."""
PER_OBJECT = (
    "object_hits",
    "object_live_bytes",
    "object_held_bytes",
    "object_rejected",
    "object_inlined",
)
"""What several servers' replays add up to per object."""


def _summed(results: list[ReplayResult]) -> ReplayResult:
    """Several servers' replays as one: counts and :data:`SUMMED_FIGURES` added, per object
    too."""
    if len(results) == 1:
        return results[0]
    n_objects = max(result.object_hits.shape[1] for result in results)

    def per_object(name: str) -> np.ndarray:
        total = np.zeros((1, n_objects), dtype=getattr(results[0], name).dtype)
        for result in results:
            values = getattr(result, name)
            total[:, : values.shape[1]] += values
        return total

    return replace(
        results[0],
        references=sum(result.references for result in results),
        **{name: sum(getattr(result, name) for result in results) for name in COUNTS},
        **{name: sum(getattr(result, name) for result in results) for name in SUMMED_FIGURES},
        **{name: per_object(name) for name in PER_OBJECT},
    )
