"""Workload plans: every session, operation and content change of a run, drawn up front.

Drawing the whole plan with numpy before the simulation starts keeps the SimPy processes thin and
makes a run a pure function of its seed. A plan comes from the synthetic workload description or
from a reference stream (a trace).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np

from nnrpsim.engine import ObjectCatalog
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.namespaces import PRIVATE_NAMESPACE_BASE
from nnrpsim.protocol import CacheObjectKind

from .config import KindMix, WorkloadConfig
from .slot_frames import object_slots, slot_frames


@dataclass
class SessionPlan:
    """One session: who runs it, when, its operations, and how often it expects to reuse objects."""

    session_id: int
    host: int
    start_ms: float
    end_ms: float
    expected_ms: float
    operations: list[tuple[float, list[int]]]
    expected_reuse: dict[int, float] = field(default_factory=dict)


@dataclass
class WorkloadPlan:
    catalog: ObjectCatalog
    sizes: np.ndarray  # bytes per object id
    sessions: list[SessionPlan]
    change_times_ms: np.ndarray
    change_objects: np.ndarray
    shared_reuse_per_operation: np.ndarray  # expected references of each object per operation
    sessions_per_ms: float = 0.0  # mean session arrivals per host
    depends_on: dict[int, int] = field(default_factory=dict)
    """Object -> the object it was made from (spec section 11); most objects have none."""
    python_numbers: bool = False
    """Whether every number a host reads is a Python ``int`` or ``float`` already (the plans
    drawn here): see :func:`with_python_numbers`."""
    slot_framed: bool = False
    """Whether each operation is one FRAME_SUBMIT already (the plans drawn here): see
    :func:`in_slot_frames`."""

    def dependents(self) -> dict[int, list[int]]:
        """Object -> the objects made from it, in id order."""
        made_from: dict[int, list[int]] = {}
        for obj, source in sorted(self.depends_on.items()):
            made_from.setdefault(source, []).append(obj)
        return made_from


def with_python_numbers(plan: WorkloadPlan) -> WorkloadPlan:
    """``plan`` with plain Python numbers wherever a plan built by hand may hold numpy's: the
    compiled model checks the types of what it reads, and refuses an ``np.int64`` object id
    that a Python host would take. Plans drawn here say they hold Python numbers already."""
    if plan.python_numbers:
        return plan
    sessions = [
        replace(
            session,
            session_id=int(session.session_id),
            host=int(session.host),
            start_ms=float(session.start_ms),
            end_ms=float(session.end_ms),
            expected_ms=float(session.expected_ms),
            operations=[
                (float(at), [int(o) for o in objects]) for at, objects in session.operations
            ],
            expected_reuse={int(o): float(n) for o, n in session.expected_reuse.items()},
        )
        for session in plan.sessions
    ]
    depends_on = {int(o): int(source) for o, source in plan.depends_on.items()}
    return replace(plan, sessions=sessions, depends_on=depends_on, python_numbers=True)


def in_slot_frames(plan: WorkloadPlan) -> WorkloadPlan:
    """``plan`` with each operation that names two or more objects of a slotted kind split
    into the frames NNRP/1 carries it in (:mod:`.slot_frames`): both engines run a plan so,
    a plan built by hand too. Plans drawn here are split once, as they are drawn."""
    if plan.slot_framed or (slots := object_slots(plan.catalog.kind)) is None:
        return plan
    sessions = [
        replace(session, operations=slot_frames(session.operations, slots))
        for session in plan.sessions
    ]
    return replace(plan, sessions=sessions, slot_framed=True)


def popularity(n: int, alpha: float) -> np.ndarray:
    """The Zipf probability of each of ``n`` ranks: ``1 / (rank + 1) ** alpha``, normalised. A
    power past the largest float is a weight of 0, as it is (a skew of 1e300 warned)."""
    with np.errstate(over="ignore"):
        weights = 1.0 / (np.arange(n) + 1.0) ** alpha
    return weights / weights.sum() if n else weights


def spread_kinds(mix: KindMix, n: int) -> np.ndarray:
    """``n`` object kinds in the proportions of ``mix``, spread evenly, so that every kind is
    found across the popularity ranks: Tijdeman's chairman assignment. Each position goes,
    among the kinds at least ``c = 1 / (2 (k - 1))`` behind their share of the positions so
    far, to the one whose next position falls due first (ties: the kind listed first); then
    every prefix holds each of the ``k`` kinds within ``1 - c`` of its share (taking the kind
    furthest behind can miss by more than one), and ``((a, 1), (b, 1))`` alternates."""
    kinds = np.array([kind for kind, _ in mix], dtype=np.uint8)
    if len(mix) == 1:
        return np.full(n, kinds[0], dtype=np.uint8)
    weights = np.array([weight for _, weight in mix], dtype=np.float64)
    shares: list[float] = (weights / weights.sum()).tolist()
    behind = 1 / (2 * (len(mix) - 1))
    taken = [0.0] * len(mix)
    chosen = np.empty(n, dtype=np.intp)
    for i in range(n):  # (Python floats: ten times numpy's pace over arrays of a few kinds)
        first_due, j = math.inf, 0
        for candidate, share in enumerate(shares):
            if (i + 1) * share - taken[candidate] >= behind - 1e-9:
                due = (taken[candidate] + 1 - behind) / share
                if due < first_due:
                    first_due, j = due, candidate
        taken[j] += 1
        chosen[i] = j
    return kinds[chosen]


def spread_share(share: float, n: int) -> np.ndarray:
    """Which of ``n`` positions make up ``share`` of them, spread evenly (every prefix holds
    its share, rounded down): position ``i`` is taken when ``floor((i + 1) * share)`` steps up."""
    taken = np.floor((np.arange(n) + 1) * share + 1e-9)
    return np.diff(taken, prepend=0.0) > 0


def size_laws(kinds: np.ndarray, config: WorkloadConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per object of ``kinds``, the log-median and shape of its kind's size distribution
    (``kind_sizes``), or of the workload's."""
    median = np.full(len(kinds), float(config.object_size_median))
    sigma = np.full(len(kinds), config.object_size_sigma)
    for kind, kind_median, kind_sigma in config.kind_sizes:
        median[kinds == kind], sigma[kinds == kind] = kind_median, kind_sigma
    return np.log(median), sigma


OBJECT_SIZE_RANGE = (1, 0xFFFF_FFFF)
"""Object sizes as drawn: at least a byte, at most what an inline block's u32 length carries."""


MOST_DRAWS = np.iinfo(np.int64).max
"""The most draws a multinomial takes: beyond, every object of a catalog comes at least once
all but surely (one of probability 1e-15 stays out with odds of exp(-9,200))."""


def _drawn(
    rng: np.random.Generator, n_ops: int, draws: int, n: int, p: np.ndarray | None = None
) -> np.ndarray:
    """For each of ``n_ops`` operations, ``draws`` objects of ``n`` with replacement (by
    ``p``, or uniformly): an array of a row per operation holding each object drawn at least
    once (a repeat, which the operation's set drops, fills a row out). Beyond ``n`` draws a
    row is drawn as the count of each object, a multinomial, which gives the objects drawn
    the same law at the cost of ``n``, not of ``draws``: 99999999999999999999 draws an
    operation had no array to fill."""
    if draws <= n:
        if p is None:
            return rng.integers(0, max(n, 1), (n_ops, draws))
        return rng.choice(n, size=(n_ops, draws), p=p)
    counts = rng.multinomial(min(draws, MOST_DRAWS), np.full(n, 1 / n) if p is None else p, n_ops)
    drawn = counts > 0
    return np.where(drawn, np.arange(n), drawn.argmax(axis=1)[:, None])


def _lognormal_sizes(rng: np.random.Generator, laws: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """A size per object, drawn from its law (see :func:`size_laws`) and cut to the range."""
    return np.clip(rng.lognormal(*laws), *OBJECT_SIZE_RANGE).astype(np.int64)


def _durations(rng: np.random.Generator, n: int, config: WorkloadConfig) -> np.ndarray:
    mean, cv = config.session_duration_ms, config.session_duration_cv
    if cv == 0:
        return np.full(n, mean)
    sigma2 = np.log1p(cv * cv)
    return rng.lognormal(np.log(mean) - sigma2 / 2, np.sqrt(sigma2), n)


def _poisson_times(rng: np.random.Generator, rate_per_ms: float, start: float, end: float):
    if rate_per_ms <= 0 or end <= start:
        return np.zeros(0)
    count = rng.poisson(rate_per_ms * (end - start))
    return np.sort(start + rng.random(count) * (end - start))


def synthetic_plan(
    config: WorkloadConfig,
    hosts: int,
    duration_ms: float,
    seed: np.random.SeedSequence,
    arrivals_ms: np.ndarray | None = None,
) -> WorkloadPlan:
    """Sessions arrive per host as a Poisson process, or at ``arrivals_ms`` (a trace's, the
    hosts taking them in turn); each references its private objects and Zipf-popular shared
    objects of one namespace (system prompts, tool schemas)."""
    shared_seed, session_seed, change_seed = seed.spawn(3)
    rng = np.random.default_rng(shared_seed)
    n_shared = config.namespaces * config.shared_objects_per_namespace
    kinds = np.tile(
        spread_kinds(config.shared_kinds, config.shared_objects_per_namespace), config.namespaces
    )
    sizes = [_lognormal_sizes(rng, size_laws(kinds, config))]
    zipf = popularity(config.shared_objects_per_namespace, config.zipf_alpha)
    shared_reuse = np.tile(zipf, config.namespaces) * config.shared_refs_per_operation

    rng = np.random.default_rng(session_seed)
    op_rate = config.operation_rate_per_s / 1000.0
    # the ids as Python ints, one int object an object: a reference's own, from tolist(), held
    # 32 bytes apiece in the operations' lists for the whole run
    shared_ints = np.arange(n_shared).astype(object)
    sessions: list[SessionPlan] = []
    if arrivals_ms is not None:
        arrivals_ms = arrivals_ms[arrivals_ms < duration_ms]
        sessions_per_ms = len(arrivals_ms) / hosts / duration_ms
    else:
        sessions_per_ms = config.session_rate_per_s / 1000.0
    private_kinds = spread_kinds(config.private_kinds, config.private_objects_per_session)
    private_laws = size_laws(private_kinds, config)
    made_from_shared = np.flatnonzero(
        spread_share(config.private_dependency_share, config.private_objects_per_session)
    ).tolist()
    depends_on: dict[int, int] = {}
    # a session's namespace is drawn only where it references shared objects: a draw that
    # picks nothing would still move the draws after it, so a key that means nothing there
    # (workload.objects.namespaces) would move the numbers
    shared_used = config.shared_objects_per_namespace > 0 and (
        config.shared_refs_per_operation > 0 or bool(made_from_shared)
    )
    for host in range(hosts):
        starts = (
            _poisson_times(rng, sessions_per_ms, 0.0, duration_ms)
            if arrivals_ms is None
            else arrivals_ms[host::hosts]
        )
        for start, length in zip(starts, _durations(rng, len(starts), config), strict=True):
            session_id = len(sessions) + 1
            n_private = config.private_objects_per_session
            first_private = n_shared + (session_id - 1) * n_private
            sizes.append(_lognormal_sizes(rng, private_laws))
            namespace = int(rng.integers(config.namespaces)) if shared_used else 0
            end = min(start + length, duration_ms)
            op_times = _poisson_times(rng, op_rate, start, end)
            n_ops = len(op_times)
            per_namespace = config.shared_objects_per_namespace
            for i in made_from_shared:  # on the namespace's most popular shared object
                depends_on[first_private + i] = namespace * per_namespace
            shared = (
                namespace * per_namespace
                + _drawn(rng, n_ops, config.shared_refs_per_operation, per_namespace, zipf)
                if per_namespace
                else np.zeros((n_ops, 0), dtype=np.int64)  # nothing shared to reference
            )
            private = _drawn(
                rng, n_ops, config.private_refs_per_operation if n_private else 0, n_private
            )
            private_ints = np.arange(first_private, first_private + n_private).astype(object)
            refs = np.concatenate([shared_ints[shared], private_ints[private]], axis=1).tolist()
            operations = [
                (t, sorted(set(row))) for t, row in zip(op_times.tolist(), refs, strict=True)
            ]
            expected_ops = op_rate * length
            reuse = {
                first_private + i: expected_ops * config.private_refs_per_operation / n_private
                for i in range(n_private)
            }
            sessions.append(
                SessionPlan(
                    session_id, host, float(start), float(end), float(length), operations, reuse
                )
            )
    all_sizes = np.concatenate(sizes)
    hosts_of = [session.host for session in sessions]
    catalog = _synthetic_catalog(config, kinds, private_kinds, hosts_of)
    # a private object exists for its session only: a change before its start or after its
    # end would reach no lease (session close ends them), and drawing one for every object
    # over the whole run made a run's changes grow with the square of its length
    per_session = config.private_objects_per_session
    starts = np.repeat(np.array([s.start_ms for s in sessions], np.float64), per_session)
    ends = np.repeat(np.array([s.end_ms for s in sessions], np.float64), per_session)
    born = np.concatenate([np.zeros(n_shared), starts])
    gone = np.concatenate([np.full(n_shared, duration_ms), ends])
    times, objs = _content_changes(np.random.default_rng(change_seed), config, born, gone)
    return in_slot_frames(
        WorkloadPlan(
            catalog,
            all_sizes,
            sessions,
            times,
            objs,
            shared_reuse,
            sessions_per_ms,
            depends_on,
            python_numbers=True,
        )
    )


def with_content_changes(
    plan: WorkloadPlan,
    config: WorkloadConfig,
    seed: np.random.SeedSequence,
    duration_ms: float,
    window: ReferenceStream,
) -> WorkloadPlan:
    """A trace's ``plan`` (of its run's ``window``) with its objects' content changes at
    ``config``'s rate, beside any the trace gives: so ``invalidations.rate_per_s`` sweeps a
    trace too. Each object's are a Poisson process from its first reference to the run's
    end: no lease of it exists before (drawn over the whole run, as a synthetic plan's shared
    objects' are, the changes of a trace whose objects appear evenly idled by half).

    A change comes on its millisecond, before the requests within it (as the vector engine
    orders them); a trace's requests fall on whole milliseconds too, where a synthetic
    plan's never do, and one on the very instant of a change would race its CACHE_INVALIDATE
    on the DES. So a change drawn on a request's instant comes at the next free millisecond
    (one past the run's end is dropped)."""
    if not config.content_change_rate_per_s:
        return plan
    born = window.first_references_ms(duration_ms)
    times, objects = _content_changes(
        np.random.default_rng(seed), config, born, np.full(len(born), duration_ms)
    )
    requests = {at for session in plan.sessions for at, _ in session.operations}
    for i, at in enumerate(times.tolist()):
        while at in requests:
            at += 1.0
        times[i] = at
    kept = times < duration_ms
    times, objects = times[kept], objects[kept]
    times = np.concatenate([plan.change_times_ms, times])
    objects = np.concatenate([plan.change_objects.astype(np.int64), objects])
    order = np.lexsort((objects, times))
    return replace(plan, change_times_ms=times[order], change_objects=objects[order])


def _content_changes(
    rng: np.random.Generator, config: WorkloadConfig, starts_ms: np.ndarray, ends_ms: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each object's content changes, a Poisson process of its own over its life (object i
    from ``starts_ms[i]`` to ``ends_ms[i]``), as (times, objects) in time order on the
    millisecond clock of the protocol's times: a change comes before the references of its
    millisecond, as the vector engine's reference streams order them."""
    rate = config.content_change_rate_per_s / 1000.0
    lives = ends_ms - starts_ms
    counts = rng.poisson(rate * lives) if rate else np.zeros(len(lives), dtype=np.int64)
    objects = np.repeat(np.arange(len(lives), dtype=np.int64), counts)
    times = np.floor(starts_ms[objects] + rng.random(len(objects)) * lives[objects])
    order = np.lexsort((objects, times))
    return times[order], objects[order]


def _synthetic_catalog(
    config: WorkloadConfig,
    shared_kinds: np.ndarray,
    private_kinds: np.ndarray,
    session_hosts: list[int],
) -> ObjectCatalog:
    """Every object of a synthetic plan, made at once (interning each session's in turn
    copied the columns at every session, and kept a dict of identities no run may ask for):
    the shared objects, key (rank, 0) in namespaces 1, 2, ...; then each session's private
    ones, key (session id, index) in its host's private namespace. All are distinct."""
    per_namespace, n_private = config.shared_objects_per_namespace, len(private_kinds)
    n_sessions = len(session_hosts)
    namespace = np.concatenate(
        [
            np.repeat(np.arange(1, config.namespaces + 1, dtype=np.uint32), per_namespace),
            np.repeat(PRIVATE_NAMESPACE_BASE + np.asarray(session_hosts, np.uint32), n_private),
        ]
    )
    key_hi = np.concatenate(
        [
            np.tile(np.arange(per_namespace, dtype=np.uint64), config.namespaces),
            np.repeat(np.arange(1, n_sessions + 1, dtype=np.uint64), n_private),
        ]
    )
    key_lo = np.concatenate(
        [
            np.zeros(config.namespaces * per_namespace, np.uint64),
            np.tile(np.arange(n_private, dtype=np.uint64), n_sessions),
        ]
    )
    kinds = np.concatenate([shared_kinds, np.tile(private_kinds, n_sessions)])
    return ObjectCatalog.from_arrays(namespace, key_hi, key_lo, kinds)


def stream_plan(stream: ReferenceStream) -> WorkloadPlan:
    """One host, one session covering the stream: an operation per request (an object it
    names twice is referenced once), a content change per invalidation. Every object
    referenced is expected to be reused (the policy decides the rest)."""
    n_objects = stream.n_objects
    ids = np.arange(n_objects, dtype=np.uint64)
    kinds = (
        np.full(n_objects, CacheObjectKind.PROMPT_SEGMENT)
        if stream.object_kind is None
        else stream.object_kind[:n_objects]
    )
    catalog = ObjectCatalog.from_arrays(np.ones(n_objects), ids, ids, kinds)
    sizes = np.zeros(n_objects, dtype=np.int64)
    sizes[stream.object_id] = stream.size
    times, objects, bounds = (
        stream.time_ms.tolist(),
        stream.object_id_list(),
        stream.operation_bounds().tolist(),
    )
    operations = [
        (float(times[first]), list(dict.fromkeys(objects[first:end])))
        for first, end in pairwise(bounds)
    ]
    session = SessionPlan(
        1,
        0,
        float(stream.start_ms),
        float(stream.end_ms),
        float(stream.duration_ms),
        operations,
        # (the objects referenced, by the ints the operations hold: those of the ids between
        # them, or only invalidated, would be an int and an entry each that nothing looks up)
        dict.fromkeys(sorted(set(objects)), float("inf")),
    )
    return in_slot_frames(
        WorkloadPlan(
            catalog,
            sizes,
            [session],
            stream.invalidation_time_ms.astype(np.float64),
            stream.invalidation_object_id,
            np.zeros(n_objects),
            python_numbers=True,
        )
    )
