"""One run on the vector engine: a workload plan flattened into a reference stream, replayed
by the lease engine at the TTL the hosts would ask for, measured as the DES runs are."""

from __future__ import annotations

import numpy as np

from .engine.replay import replay
from .engine.stream import ReferenceStream
from .metrics import vector_kind_metrics, vector_metrics
from .model import ModelConfig, make_policy
from .model.decisions import CacheDecisions
from .model.workload import WorkloadPlan


def plan_stream(plan: WorkloadPlan, config: ModelConfig) -> tuple[ReferenceStream, np.ndarray]:
    """Flatten a plan's operations into a time-ordered reference stream, whose invalidations
    are the plan's content changes and, with each, a change of what was made from the object;
    and, per reference, whether its host caches the object in that session (the DES hosts'
    decision: :class:`CacheDecisions`).

    Before an operation's references come, made ``along``, the sources of the cached objects
    it uses that it does not use itself: the DES hosts install those along when no lease of
    them is live, before the frame that relies on them. A session's end (before the run's)
    ends the leases it owns, of the objects it cached of its own: that too is an end of
    leases, in the stream's invalidations."""
    decisions = CacheDecisions(make_policy(config.policy), config.workload, plan)
    limits, depends_on = config.server.limits, plan.depends_on
    times, objects, along, cached = [], [], [], []
    closes, released = [], []  # session ends, and the objects whose leases they end
    for session in plan.sessions:
        caches: dict[int, bool] = {}  # the decision per object, for this session
        for at, refs in session.operations:
            decided = []
            for obj in refs:
                if obj not in caches:
                    caches[obj] = decisions.caches(session, obj, limits)
                decided.append(caches[obj])
            sources = [
                source
                for source in dict.fromkeys(
                    depends_on.get(obj) for obj, c in zip(refs, decided, strict=True) if c
                )
                if source is not None and source not in refs
            ]
            times.extend([at] * (len(sources) + len(refs)))
            objects.extend(sources)
            objects.extend(refs)
            along.extend([True] * len(sources) + [False] * len(refs))
            cached.extend([True] * len(sources) + decided)
        if session.end_ms < config.duration_ms:
            owned = [obj for obj, c in caches.items() if c and obj in session.expected_reuse]
            closes.extend([session.end_ms] * len(owned))
            released.extend(owned)
    times_ms = np.asarray(times, dtype=np.float64).astype(np.int64)
    objects_arr = np.asarray(objects, dtype=np.int64)
    order = np.argsort(times_ms, kind="stable")
    change_times, change_objects = plan.change_times_ms.astype(np.int64), plan.change_objects
    made_from = plan.dependents()
    if made_from:
        changed_along = [made_from.get(obj, []) for obj in change_objects.tolist()]
        counts = np.array([len(made) for made in changed_along], dtype=np.int64)
        change_times = np.concatenate([change_times, np.repeat(change_times, counts)])
        change_objects = np.concatenate(
            [
                change_objects,
                np.array([o for made in changed_along for o in made], dtype=np.int64),
            ]
        )
    change_times = np.concatenate([change_times, np.asarray(closes, np.float64).astype(np.int64)])
    change_objects = np.concatenate([change_objects, np.asarray(released, dtype=np.int64)])
    stream = ReferenceStream(
        times_ms[order],
        objects_arr[order],
        plan.sizes[objects_arr[order]],
        change_times,
        change_objects,
        along=np.asarray(along, dtype=bool)[order] if any(along) else None,
    )
    return stream, np.asarray(cached, dtype=bool)[order]


def vector_run(config: ModelConfig, plan: WorkloadPlan) -> tuple[dict[str, float], dict[str, list]]:
    """The run's metrics and its metrics by object kind, on the engine's replay."""
    stream, replayed = plan_stream(plan, config)  # what the hosts cache, sources made along
    policy, limits = make_policy(config.policy), config.server.limits
    counted = ~stream.along_mask
    referenced, sizes = stream.object_id[counted], stream.size[counted]
    inlined = ~replayed[counted]  # the references the hosts send inline
    cached = ReferenceStream(
        stream.time_ms[replayed],
        stream.object_id[replayed],
        stream.size[replayed],
        stream.invalidation_time_ms,
        stream.invalidation_object_id,
        stream.start_ms,
        max(stream.end_ms, int(config.duration_ms)),
        along=None if stream.along is None else stream.along[replayed],
    )
    # The hint the DES hosts would ask for: a fraction of the sessions' expected length (for a
    # trace, its one session spans the whole trace).
    expected = [session.expected_ms for session in plan.sessions]
    hint = policy.ttl_hint_ms(
        np.mean(expected) if expected else config.workload.session_duration_ms
    )
    ttl = int(min(max(hint, limits.ttl_floor_ms), limits.ttl_ceiling_ms))
    # The hosts renew proactively: on a use within the last renew_margin of the lease.
    margin = policy.renew_margin
    result = replay(
        cached,
        [ttl],
        "reset" if margin > 0 else "non_reset",
        limits.capacity_bytes,
        limits.eviction,
        per_object=True,
        renew_margin=margin or 1.0,
    )
    metrics = vector_metrics(result, 0, sizes, plan.sizes, inlined, policy.renewal_body)
    kinds = vector_kind_metrics(result, 0, plan.catalog.kind, plan.sizes, referenced, inlined)
    return metrics, kinds
