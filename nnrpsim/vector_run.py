"""One run on the vector engine: a workload plan flattened into a reference stream, replayed
by the lease engine at the TTL the hosts would ask for, measured as the DES runs are."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .engine.replay import COUNTS, ReplayResult, replay_after
from .engine.stream import ReferenceStream
from .metrics import vector_kind_metrics, vector_metrics
from .model import ModelConfig, make_policy
from .model.decisions import CacheDecisions
from .model.routing import route_sessions
from .model.server import session_lease_ttl_ms
from .model.workload import WorkloadPlan, with_python_numbers


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


def plan_stream(plan: WorkloadPlan, config: ModelConfig) -> tuple[ReferenceStream, np.ndarray]:
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
    of the objects it cached of its own."""
    policy = make_policy(config.policy)
    decisions = CacheDecisions(policy, config.workload, plan)
    limits, depends_on = config.server.limits, plan.depends_on
    base = base_ttl_ms(plan, config)
    # the connection's objects (not the session's own) ask for the policy's connection TTL
    connection_ttl = min(
        max(policy.put_ttl_ms(base, True), limits.ttl_floor_ms), limits.ttl_ceiling_ms
    )
    times, objects, along, cached, scales, sources, frames = [], [], [], [], [], [], []
    closes, released = [], []  # session ends, and the objects whose leases they end
    for session in plan.sessions:
        caches: dict[int, bool] = {}  # the decision per object, for this session
        # the TTLs its PUTs ask for, against the replay's: of the objects the session owns,
        # and of the others (the connection's)
        session_ttl = session_ttl_ms(config, session.expected_ms)
        own_scale = session_ttl / base if base > 0 else 1.0
        shared_scale = own_scale if policy.connection_ttl_ms is None else connection_ttl / base
        own = session.expected_reuse
        for at, refs in session.operations:
            made = 0  # the sources made along in this operation
            for obj in refs:
                if obj not in caches:
                    caches[obj] = decisions.caches(session, obj, limits)
                source = depends_on.get(obj) if caches[obj] else None
                if source is not None and source not in refs:
                    made += 1
                    objects.append(source)
                    along.append(True)
                    cached.append(True)
                    scales.append(own_scale if source in own else shared_scale)
                    sources.append(-1)
                objects.append(obj)
                along.append(False)
                cached.append(caches[obj])
                scales.append(own_scale if obj in own else shared_scale)
                sources.append(-1 if source is None or source not in refs else source)
            times.extend([at] * (len(refs) + made))
            frames.extend([len(times)] * (len(refs) + made))  # (one number per operation)
        if session.end_ms < config.duration_ms:
            owned = [obj for obj, c in caches.items() if c and obj in session.expected_reuse]
            closes.extend([session.end_ms] * len(owned))
            released.extend(owned)
    times = np.asarray(times, dtype=np.float64)
    times_ms = times.astype(np.int64)
    objects_arr = np.asarray(objects, dtype=np.int64)
    # in time order, as the DES runs them: two sessions' references within one millisecond
    # keep their order (an operation's share its time, and keep theirs)
    order = np.argsort(times, kind="stable")
    changes = _lease_ends(plan, config, closes, released, times[order])
    stream = ReferenceStream(
        times_ms[order],
        objects_arr[order],
        plan.sizes[objects_arr[order]],
        *changes[:2],
        operation=np.asarray(frames, dtype=np.int64)[order],
        along=np.asarray(along, dtype=bool)[order] if any(along) else None,
        ttl_scale=np.asarray(scales)[order] if any(x != 1.0 for x in scales) else None,
        invalidation_kept=changes[2] if changes[2].any() else None,
        invalidation_through=changes[3] if (changes[3] >= 0).any() else None,
        frame_source=np.asarray(sources, dtype=np.int64)[order]
        if max(sources, default=-1) >= 0
        else None,
        invalidation_position=changes[4],
    )
    return stream, np.asarray(cached, dtype=bool)[order]


def _lease_ends(
    plan: WorkloadPlan,
    config: ModelConfig,
    closes: list[float],
    released: list[int],
    reference_times: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What ends leases, as the stream's invalidations (times, objects, kept, through,
    positions): the plan's content changes; with each, a change of what was made from the
    object (through the server's cascade, or kept without it: the hosts see the change
    themselves); and the session closes ``closes`` of the objects ``released``. Content
    changes come on the millisecond, before its references; a close comes after the
    references made before it (``reference_times``, in order, as the DES runs them), also
    within one millisecond."""
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
    )


def vector_run(config: ModelConfig, plan: WorkloadPlan) -> tuple[dict[str, float], dict[str, list]]:
    """The run's metrics and its metrics by object kind, on the engine's replay, counted after
    the warm-up as the DES's are (``peak_gpu_bytes`` is the whole run's). Each server replays
    the sessions routed to it, in its own memory; their counts and bytes add up, and so do
    their peaks (each server's budget that never evicts)."""
    plan = with_python_numbers(plan)  # the hosts' decisions are compiled code
    server_of = route_sessions(plan.sessions, config.servers, config.routing)
    parts = [
        _server_replay(
            config,
            replace(plan, sessions=[s for s in plan.sessions if server_of[s.session_id] == k]),
        )
        for k in range(config.servers)
    ]
    result = _summed([part.result for part in parts])
    referenced, sizes, inlined = (
        np.concatenate([getattr(part, name) for part in parts])
        for name in ("referenced", "sizes", "inlined")
    )
    policy = make_policy(config.policy)
    metrics = vector_metrics(result, 0, sizes, plan.sizes, inlined, policy.renewal_body)
    kinds = vector_kind_metrics(result, 0, plan.catalog.kind, plan.sizes, referenced, inlined)
    return metrics, kinds


@dataclass(frozen=True)
class _ServerReplay:
    """One server's replay, and its references counted: their objects and sizes, and which
    the hosts sent inline by policy."""

    result: ReplayResult
    referenced: np.ndarray
    sizes: np.ndarray
    inlined: np.ndarray


def _server_replay(config: ModelConfig, plan: WorkloadPlan) -> _ServerReplay:
    stream, replayed = plan_stream(plan, config)  # what the hosts cache, sources made along
    policy, limits = make_policy(config.policy), config.server.limits
    # the references counted: made by the operations (not along), after the warm-up
    counted = ~stream.along_mask & (stream.time_ms >= config.warmup_ms)
    # the window is the run's, as the DES samples it: from 0 to its end
    cached = replace(
        stream.references(replayed), start_ms=0, end_ms=max(stream.end_ms, int(config.duration_ms))
    )
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
    )
    return _ServerReplay(
        result, stream.object_id[counted], stream.size[counted], ~replayed[counted]
    )


def _summed(results: list[ReplayResult]) -> ReplayResult:
    """Several servers' replays as one: counts, live bytes and peaks added, per object too."""
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
        mean_live_bytes=sum(result.mean_live_bytes for result in results),
        peak_live_bytes=sum(result.peak_live_bytes for result in results),
        **{
            name: per_object(name)
            for name in ("object_hits", "object_live_bytes", "object_rejected", "object_inlined")
        },
    )
