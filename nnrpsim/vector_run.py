"""One run on the vector engine: a workload plan flattened into a reference stream, replayed
by the lease engine at the TTL the hosts would ask for, measured as the DES runs are."""

from __future__ import annotations

import numpy as np

from .engine.replay import replay
from .engine.stream import ReferenceStream
from .metrics import vector_kind_metrics, vector_metrics
from .model import ModelConfig, make_policy
from .model.workload import WorkloadPlan


def cacheable_objects(plan: WorkloadPlan, config: ModelConfig) -> np.ndarray:
    """Per object id, whether a host caches it, as the DES hosts decide: the policy's size
    threshold and the handshake's cache ceiling (negotiated kinds, ``max_object_bytes``),
    and, for an object made from another, its source too (a reference needs its source)."""
    policy, limits = make_policy(config.policy), config.server.limits
    by_size = {s: policy.should_cache(s, np.inf) for s in np.unique(plan.sizes).tolist()}
    cacheable = limits.allows(plan.catalog.kind, plan.sizes) & np.array(
        [by_size[s] for s in plan.sizes.tolist()], dtype=bool
    )
    for obj, source in plan.depends_on.items():
        while cacheable[obj] and source is not None:
            cacheable[obj] = cacheable[source]
            source = plan.depends_on.get(source)
    return cacheable


def plan_stream(plan: WorkloadPlan, cacheable: np.ndarray) -> ReferenceStream:
    """Flatten a plan's operations into a time-ordered reference stream, whose invalidations
    are the plan's content changes and, with each, a change of what was made from the object.

    Before an operation's references come, made ``along``, the sources of the ``cacheable``
    objects it uses that it does not use itself: the DES hosts install those along when no
    lease of them is live, before the frame that relies on them."""
    depends_on = plan.depends_on
    times, objects, along = [], [], []
    for session in plan.sessions:
        for at, refs in session.operations:
            sources = (
                [
                    s
                    for s in dict.fromkeys(depends_on.get(obj) for obj in refs if cacheable[obj])
                    if s is not None and s not in refs
                ]
                if depends_on
                else []
            )
            times.extend([at] * (len(sources) + len(refs)))
            objects.extend(sources)
            objects.extend(refs)
            along.extend([True] * len(sources) + [False] * len(refs))
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
        by_time = np.argsort(change_times, kind="stable")
        change_times, change_objects = change_times[by_time], change_objects[by_time]
    return ReferenceStream(
        times_ms[order],
        objects_arr[order],
        plan.sizes[objects_arr[order]],
        change_times,
        change_objects,
        along=np.asarray(along, dtype=bool)[order] if any(along) else None,
    )


def vector_run(config: ModelConfig, plan: WorkloadPlan) -> tuple[dict[str, float], dict[str, list]]:
    """The run's metrics and its metrics by object kind, on the engine's replay."""
    cacheable = cacheable_objects(plan, config)
    stream = plan_stream(plan, cacheable)
    policy, limits = make_policy(config.policy), config.server.limits
    counted = ~stream.along_mask
    referenced, sizes = stream.object_id[counted], stream.size[counted]
    inlined = ~cacheable[referenced]  # the references the hosts send inline
    replayed = cacheable[stream.object_id]  # the rest, and the sources made along (cacheable)
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
