"""The exact reference for every replay path: the stream drives a :class:`LeaseTable`, one
reference at a time."""

from __future__ import annotations

from itertools import count, repeat
from typing import cast

import numpy as np

from nnrpsim.protocol import CacheAckStatus

from ..catalog import ObjectCatalog
from ..columns import column_items
from ..limits import CacheLimits
from ..outcomes import EndReason
from ..stream import ReferenceStream
from ..table import LeaseTable
from .bursts import PutBursts
from .frame import Frame
from .host_rules import HostRules
from .modes import renewal_margin
from .result import COUNTS, INVALIDATED, ExpirySweeps, SpanLog, counted_after, tally


def replay_on_table(
    stream: ReferenceStream,
    ttl: int,
    mode: str,
    limits: CacheLimits,
    renew_margin: float = 1.0,
    inline_after_invalidate: bool = False,
    refused_backoff_ms: int = 0,
    from_ms: int | None = None,
    sample_times: np.ndarray | None = None,
    sweep_ms: float | None = None,
) -> dict[str, float]:
    """Drive a :class:`LeaseTable` with the stream: the exact reference for every replay path.
    Counted from ``from_ms`` on (None: the stream's start; see :func:`~.sweep.replay_after`);
    the live bytes and leases at ``sample_times`` too, and with ``sweep_ms`` the held ones
    (:meth:`~.result.LeaseSpans.figures`).

    Live bytes are integrated as the ordered path does: a lease is live from its install until
    its expiry (moved by renewals) or its end, whichever comes first."""
    n_objects = stream.n_objects
    kinds = np.full(n_objects, 7, dtype=np.uint8)
    ids = np.arange(n_objects, dtype=np.uint64)
    table = LeaseTable(ObjectCatalog.from_arrays(np.zeros(n_objects), ids, ids, kinds), limits)
    margin = renewal_margin(mode, renew_margin)
    misses = [0] * len(EndReason)
    host = HostRules(n_objects, inline_after_invalidate, refused_backoff_ms)
    # COUNTS but the misses by cause (from ``misses``) and the hosts' inline references
    counts = dict.fromkeys((c for c in COUNTS if not c.endswith("_misses")), 0)
    for name in host.counts():
        del counts[name]
    object_hits = np.zeros(n_objects, dtype=np.int64)
    object_rejected = np.zeros(n_objects, dtype=np.int64)
    object_live_ms_bytes = [0] * n_objects
    # obj -> (installed, expires, size, the TTL last granted)
    leases: dict[int, tuple[int, int, int, int]] = {}
    spans = SpanLog()  # each lease's span
    bursts = PutBursts(spans, stream.connection_owned)  # which its host was told of
    # the server's sweeps, where a shortfall may reclaim what they free
    short = limits.capacity_bytes is not None or limits.max_cache_entries > 0
    sweeps = ExpirySweeps(sweep_ms if short else None)

    cut_ms = cast(int, stream.start_ms) if from_ms is None else from_ms

    def ended(objects: list[int], now: int, first: bool = False) -> list[int]:
        """Book the leases of ``objects`` ended at ``now``, by what came ``first`` in that
        millisecond or not (:meth:`~.result.SpanLog.book`); their spans' indices."""
        booked = []
        for gone in objects:
            stale.discard(gone)
            start, expires, gone_size, _ = leases.pop(gone)
            end = min(expires, now)
            if end > cut_ms:  # (its part from the cut on)
                object_live_ms_bytes[gone] += (end - max(start, cut_ms)) * gone_size
            booked.append(spans.book(gone, start, expires, now, gone_size, first))
        return booked

    def lapse(obj: int, now: int) -> int | None:
        """Why ``obj`` holds no usable lease (None: it does): as the ordered path judges."""
        if not table.holds(obj, now):  # run out (not yet reclaimed), or ended
            return table.why_not_live(obj)
        return INVALIDATED if obj in stale else None

    def replace_stale(obj: int, now: int, op: int) -> None:
        """A lease a kept change left in place ends as its host puts the new version, in
        frame ``op`` (a body sent inline instead leaves it untouched)."""
        if obj in stale and table.holds(obj, now):
            table.invalidate_objects(np.array([obj]), now)
            bursts.replacing(ended([obj], now)[0], obj, op)

    def put(obj: int, now: int, asked: int, size: int, op: int) -> bool:
        """A CACHE_PUT of frame ``op`` for a new lease: book what it ended and the lease;
        whether accepted."""
        bursts.put(obj, op)
        ack = table.install_one(obj, now, asked, size)
        for span, gone in zip(ended(ack.expired, now), ack.expired, strict=True):
            bursts.ended(span, gone, False)
        for span, gone in zip(ended(ack.evicted, now), ack.evicted, strict=True):
            bursts.ended(span, gone, True)
        counts["evictions"] += len(ack.evicted)
        evicted_in_frame.extend(ack.evicted)  # its hosts are told once its references are decided
        if ack.status == CacheAckStatus.REJECTED:
            return False
        bursts.granted(obj)
        leases[obj] = (now, now + ack.accepted_ttl_ms, size, ack.accepted_ttl_ms)
        return True

    def held(obj: int) -> bool:  # (resolving may reallocate the columns: look each time)
        return table.scalars.slot_of[obj] >= 0

    def hit(obj: int, now: int) -> bool:
        """The server resolves a frame's hit; whether its renewal is due."""
        table.resolve(obj, now)
        object_hits[obj] += 1
        _, expires, _, granted = leases[obj]
        return bool(margin) and now >= expires - margin * granted

    def resolve_install(obj: int, now: int) -> None:  # the server counts it a hit of the lease
        table.resolve(obj, now)

    def renew(obj: int, now: int, size: int, asked: int) -> None:
        installed_at = leases[obj][0]
        granted = table.install_one(obj, now, asked, size).accepted_ttl_ms
        leases[obj] = (installed_at, now + granted, size, granted)

    # without operations, each reference is a frame of its own
    frame = Frame(
        host,
        misses,
        stream.operation_starts(),
        held,
        hit,
        resolve_install,
        renew,
        named=stream.operation is not None,
    )
    pending, installed, evicted_in_frame = frame.pending, frame.installed, frame.evicted
    along_source, put_along = frame.along_source, frame.put_along

    # (arrays and ints once the stream is made; its hints are its constructor's)
    inv_t: np.ndarray = stream.invalidation_time_ms
    inv_o: np.ndarray = stream.invalidation_object_id
    inv_pos, kept, through = stream.invalidation_positions(), stream.kept_mask, stream.through
    within = stream.within_mask
    stale: set[int] = set()  # leases a kept change left in place: their hosts put new versions
    live_end: dict[int, int] = {}  # object -> when a change last ended a live lease of it

    def changes_before(k: int, position: int) -> int:
        """The invalidations from the ``k``-th on that come before reference ``position``;
        returns the next's index."""
        while k < len(inv_t) and inv_pos[k] <= position:
            target, at, via = int(inv_o[k]), int(inv_t[k]), int(through[k])
            # a cascade runs through the source's lease (live now, or until now)
            cascades = via < 0 or table.holds(via, at) or live_end.get(via) == at
            if kept[k] or not cascades:
                if table.holds(target, at):
                    stale.add(target)
            elif table.scalars.slot_of[target] >= 0:  # freed now, live or already expired
                if table.holds(target, at):
                    live_end[target] = at
                    host.ended_under_host((target,))
                table.invalidate_objects(inv_o[k : k + 1], at)
                ended([target], at, not within[k])
            k += 1
        return k

    def totals() -> dict[str, float]:
        """The counts so far, every frame before the one under way done (see
        :func:`~.result.counted_after`)."""
        now = dict(counts)
        for name in ("hits", "hit_bytes", "renewals", "renewal_bytes"):
            now[name] += getattr(frame, name)
        now["installs"] -= frame.unput  # put, yet their bodies inline: PUTs no reference follows
        now["install_bytes"] -= frame.unput_bytes
        now["along_puts"] += frame.unput
        now["along_put_bytes"] += frame.unput_bytes
        return tally(
            list(misses),
            **now,
            **host.counts(),
            object_hits=object_hits.copy(),
            object_rejected=object_rejected.copy(),
            object_inlined=np.array(host.inlined_of, dtype=np.int64),
        )

    k = 0
    # the counts before the first reference counted (``from_ms`` on): taken away at the end
    cut = int(np.searchsorted(stream.time_ms, cut_ms, side="left"))
    early: dict[str, float] | None = None
    # a frame's references are decided before any of its PUTs (see ordered_capacity)
    object_ids = stream.object_id_list()
    for i, t, obj, size, only_along, asked, follower, made_from, op in zip(
        count(),
        column_items(stream.time_ms),
        object_ids,
        column_items(stream.size),
        # (without references made along or TTLs of their own: constants, not columns)
        repeat(False) if stream.along is None else column_items(stream.along),
        repeat(ttl) if stream.ttl_scale is None else column_items(stream.ttls(ttl)),
        repeat(-1) if stream.along is None else column_items(stream.along_for()),
        repeat(-1) if stream.frame_source is None else column_items(stream.frame_source),
        # without operations, each reference is a frame of its own
        count() if stream.operation is None else column_items(stream.operation),
        strict=False,  # (the counts and the constants never end)
    ):
        new_frame = op != frame.op
        if new_frame:
            frame.begin(op, t)  # (the frame before it done)
        if i == cut:
            early = totals()
        k = changes_before(k, i)
        if t >= sweeps.next:  # (after the changes: one at a sweep's instant comes first)
            for reads, over in sweeps.take(t):
                ended(table.expire(reads).tolist(), over)
        if new_frame:
            at_start = frame.decide(lapse, object_ids, i)
        if made_from >= 0:
            source_lapse = at_start.get(made_from, lapse(made_from, t))
            host.follow_source(obj, made_from, t, at_start[obj] is None, source_lapse)
        # one reference at a time: the scalar calls, which keep the batch calls' rules
        if only_along:
            along_source[follower] = obj
            lapsed = at_start[obj]
            if obj in put_along or lapsed is None or not host.puts_along(obj, follower, t, lapsed):
                continue
            put_along.add(obj)
            counts["along_puts"] += 1
            counts["along_put_bytes"] += size
            replace_stale(obj, t, op)
            if put(obj, t, asked, size, op):
                host.told.discard(obj)  # a fresh lease (a refused PUT leaves the turn to come)
            else:
                counts["along_rejected"] += 1
                host.refused(obj, t, follower)
            continue
        live = at_start[obj] is None
        if obj in host.blocked and (went := host.take_blocked(obj, live)):
            misses[went[0]] += 1  # no source for it: inline, its lease untouched
            host.send_inline(obj, size, t, *went)
            continue
        source = made_from if made_from >= 0 else along_source.get(obj, -1)
        if live:  # it waits for the frame's PUTs
            pending.append((obj, size, asked, source))
            continue
        orphan = host.take_orphan(obj)  # (put, yet inline: no source)
        replace_stale(obj, t, op)
        lapsed = table.why_not_live(obj)
        if host.goes_inline(obj, size, t, lapsed):  # its inline turn, or backing off: no PUT
            misses[lapsed] += 1
            continue
        accepted = put(obj, t, asked, size, op)
        if accepted and orphan:  # a PUT no reference follows: the body goes inline
            misses[INVALIDATED] += 1
            counts["along_puts"] += 1
            counts["along_put_bytes"] += size
            host.send_inline(obj, size, t, INVALIDATED, False)
            continue
        misses[lapsed] += 1
        if accepted:
            counts["installs"] += 1
            counts["install_bytes"] += size
            installed.append((obj, size, lapsed, source))
        else:
            counts["rejected"] += 1
            object_rejected[obj] += 1
            host.refused(obj, t)
    frame.done()
    bursts.end()
    whole = totals()
    changes_before(k, len(stream))  # those after the last reference end leases too
    end_ms = cast(int, stream.end_ms)
    ended(list(leases), end_ms)
    object_live = np.array(object_live_ms_bytes, dtype=np.float64) / (end_ms - cut_ms)
    return {
        **counted_after(whole, whole if early is None else early),
        "mean_live_bytes": float(object_live.sum()),
        "object_live_bytes": object_live,
        **spans.spans().figures(sample_times, sweep_ms, (cut_ms, end_ms, n_objects)),
    }
