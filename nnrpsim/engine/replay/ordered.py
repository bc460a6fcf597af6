"""LRU or FIFO with a byte capacity, one reference at a time, with an ordered map: the fast
sequential path, by the lease table's rules (:mod:`.on_table` drives the table itself)."""

from __future__ import annotations

import heapq
from collections import OrderedDict
from itertools import chain, count, islice, repeat

import numpy as np

from ..columns import column_items
from ..outcomes import EndReason
from ..stream import ReferenceStream
from .bursts import PutBursts
from .frame import Frame
from .host_rules import HostRules
from .result import (
    EVICTED,
    EXPIRED,
    INVALIDATED,
    ExpirySweeps,
    SpanLog,
    counted_after,
    tally,
)

NEVER = 1 << 62
"""A reference position past any stream's: where no invalidation is left to come."""


def ordered_capacity(
    stream: ReferenceStream,
    ttl: int,
    margin: float,
    capacity: int,
    policy: str,
    per_object: bool,
    inline_once: bool,
    backoff: int,
    from_ms: int | None = None,
    sample_times: np.ndarray | None = None,
    sweep_ms: float | None = None,
) -> dict[str, float]:
    """LRU or FIFO with a byte capacity, one reference at a time, by the table's rules:
    a shortfall first reclaims expired leases, then evicts the least recent (or oldest); only
    an object larger than the capacity is refused. Counted from ``from_ms`` on (None: the
    stream's start; see :func:`~.sweep.replay_after`); with ``per_object``, the live bytes
    and leases at ``sample_times`` too, and with ``sweep_ms`` the held ones
    (:meth:`~.result.LeaseSpans.figures`).

    A lease is live from its install until its expiry (pushed on by renewals) or its end,
    whichever comes first: that span is booked, per object, when the lease ends (its part
    from ``from_ms`` on in the live bytes; all of it in the peak)."""
    # obj -> (expires, installed, size, from when a hit renews it)
    entries: OrderedDict[int, tuple[int, int, int, float]] = OrderedDict()
    ended = [int(EndReason.NEVER_INSTALLED)] * stream.n_objects  # EndReason of its last lease
    misses = [0] * len(EndReason)
    # (expires, obj), lazily deleted: only where a shortfall or a sweep reads it (``expiring``)
    expiries: list[tuple[int, int]] = []
    hits = renewals = installs = rejected = evictions = used = live_ms_bytes = install_bytes = 0
    renewal_bytes = rejected_bytes = along_puts = along_put_bytes = along_rejected = 0
    # with per_object: per object, installs and rejections (its inline references are the
    # host's, its other references hit) and live byte-milliseconds
    n_objects = stream.n_objects if per_object else 0
    installs_of, rejected_of, live_of = [0] * n_objects, [0] * n_objects, [0] * n_objects
    host = HostRules(n_objects, inline_once, backoff)
    # the hosts' state, by local names: the hot path reads them (the rules mutate, never rebind)
    told, until, blocked, put_anyway = host.told, host.until, host.blocked, host.put_anyway
    # the invalidations in order, a chunk at a time: (before which reference, when, object,
    # through which source or -1, kept, within its millisecond), then one that never comes
    n_inv = len(stream.invalidation_time_ms)
    changes = chain(
        zip(
            column_items(stream.invalidation_positions()),
            column_items(stream.invalidation_time_ms),
            column_items(stream.invalidation_object_id),
            column_items(stream.through),
            column_items(stream.kept_mask),
            column_items(stream.within_mask),
            strict=True,
        ),
        repeat((NEVER, 0, 0, -1, False, False)),
    )
    upcoming = next(changes)
    next_change = upcoming[0]  # (a local: the hot path compares it at every reference)
    stale: set[int] = set()  # leases a kept change left in place: their hosts put new versions
    live_end: dict[int, int] = {}  # object -> when a change last ended a live lease of it
    lru = policy == "lru"
    cut_ms = stream.start_ms if from_ms is None else from_ms
    # each reference's TTL: a column only where references ask for TTLs of their own
    ttls = None if stream.ttl_scale is None else stream.ttls(ttl)
    shortest = ttl if ttls is None else int(ttls.min(initial=ttl))
    can_expire = stream.start_ms + shortest < stream.end_ms  # else no lease ends by expiry
    asks = repeat(ttl) if ttls is None else column_items(ttls)  # (repeat: the hot path)
    # (without references made along: constants, not lists of a million items)
    made_for = repeat(-1) if stream.along is None else column_items(stream.along_for())
    # Without expiry or invalidation a miss is cold (first reference) or follows an eviction:
    # counted once at the end instead of per reference (unless a lease was installed along, an
    # eviction may send the next reference inline, or a refused source what is made from it).
    along = stream.along_mask
    # With operations (frames of several references) a frame's hits wait for its PUTs, which
    # may evict them (see :meth:`.frame.Frame.done`): their misses must be counted one by one.
    frames = stream.operation is not None
    track = (
        can_expire
        or n_inv > 0
        or bool(along.any())
        or inline_once
        or backoff > 0
        or frames
        or stream.frame_source is not None
    )
    evicted = EVICTED  # (a local: the hot path)
    # when a lease renews without a margin: later than any u64 millisecond, and an int (each
    # hit compares it with the time, an int; against math.inf that takes half as long again)
    no_renewal = 1 << 64
    get, touch, evict_oldest = entries.get, entries.move_to_end, entries.popitem
    push = heapq.heappush

    spans = SpanLog()  # with per_object: each lease's span
    book_span = spans.book
    bursts = PutBursts(spans, stream.connection_owned)  # with per_object: what they told
    # With per_object, the server's sweeps (the memory held): they free the leases run out as
    # the DES's do, for a shortfall to reclaim only what its table still holds, and for the
    # map to keep only the leases not yet swept (each until its object came back or the run
    # ended: the Mooncake trace 16 times over, 190 MiB). Without, a shortfall reclaims every
    # lease run out.
    short = can_expire and capacity < int(stream.size.sum())  # (else it never falls short)
    sweeps = ExpirySweeps(sweep_ms if per_object and can_expire else None)
    expiring = short or sweeps.sweep_ms is not None
    next_sweep = sweeps.next

    def lapse(obj: int, now: int) -> int | None:
        """Why ``obj`` holds no usable lease (None: it does)."""
        entry = get(obj)
        if entry is None:
            return ended[obj]
        if now >= entry[0]:
            return EXPIRED
        return INVALIDATED if stale and obj in stale else None

    def drop(obj: int, now: int, reason: EndReason, first: bool = False) -> int:
        """End ``obj``'s lease at ``now``, by what came ``first`` in that millisecond or not
        (:meth:`~.result.SpanLog.book`); with ``per_object``, the index of its span."""
        nonlocal used, live_ms_bytes
        expires, start, size, _ = entries.pop(obj)
        used -= size
        end = min(expires, now)
        if end > cut_ms:  # (its part from the cut on)
            counted_bytes = (end - max(start, cut_ms)) * size
            live_ms_bytes += counted_bytes
            if per_object:
                live_of[obj] += counted_bytes
        span = book_span(obj, start, expires, now, size, first) if per_object else -1
        ended[obj] = reason
        stale.discard(obj)
        return span

    def swept(now: int) -> float:
        """Run the sweeps due by ``now`` (:class:`~.result.ExpirySweeps`); when the next is."""
        for reads, over in sweeps.take(now):
            while expiries and expiries[0][0] <= reads:
                expires, victim = heapq.heappop(expiries)
                if victim in entries and entries[victim][0] == expires:
                    drop(victim, over, EndReason.EXPIRED)
        return sweeps.next

    def hit(obj: int, now: int) -> bool:
        """A frame's hit touches its lease; whether it is near enough its expiry to renew."""
        if lru:
            touch(obj)
        return now >= entries[obj][3]

    def resolve_install(obj: int, now: int) -> None:  # a reference to what the frame put
        if lru:
            touch(obj)

    def renew(obj: int, now: int, size: int, asked: int) -> None:
        """The hosts' proactive renewal: the lease runs ``asked`` from now."""
        _, installed_at, held_size, _ = entries[obj]
        expires = now + asked
        entries[obj] = (expires, installed_at, held_size, expires - margin * asked)
        if lru:
            touch(obj)
        if expiring:
            push(expiries, (expires, obj))

    def take_back(obj: int) -> None:
        installs_of[obj] -= 1

    frame = Frame(
        host,
        misses,
        stream.operation_starts(),
        entries.__contains__,
        hit,
        resolve_install,
        renew,
        take_back if per_object else None,
    )
    # the frame's lists, by local names: the hot path appends to them
    pending, installed, evicted_in_frame = frame.pending, frame.installed, frame.evicted
    along_source, put_along = frame.along_source, frame.put_along

    def changes_before(position: int) -> int:
        """Apply the invalidations that come before reference ``position``; returns where
        the next one comes."""
        nonlocal upcoming
        while upcoming[0] <= position:
            _, at, target, via, kept, within = upcoming
            victim = get(target)
            if victim is not None:
                live = at < victim[0]
                if via >= 0:  # a cascade, through the source's lease (live now or until now)
                    source = get(via)
                    cascades = (source is not None and at < source[0]) or live_end.get(via) == at
                if kept or (via >= 0 and not cascades):
                    if live:
                        stale.add(target)
                else:
                    reason = EndReason.INVALIDATED if live else EndReason.EXPIRED
                    drop(target, at, reason, not within)
                    if live:
                        live_end[target] = at
                        host.ended_under_host((target,))
            upcoming = next(changes)
        return upcoming[0]

    # the counts before the first reference counted (``from_ms`` on), taken away at the end
    cut = int(np.searchsorted(stream.time_ms, cut_ms, side="left"))
    taken: list[dict[str, float]] = []  # (before the cut, then at the end)
    # A frame's references are decided before any of its PUTs: as its leases stood when it
    # began (object -> its lapse then, None while live), sources put along once a frame.
    object_ids = stream.object_id_list()
    at_start: dict[int, int | None] = {}
    rows = zip(
        count(),
        column_items(stream.time_ms),
        object_ids,
        column_items(stream.size),
        repeat(False) if stream.along is None else column_items(along),
        asks,
        made_for,
        repeat(-1) if stream.frame_source is None else column_items(stream.frame_source),
        repeat(-1) if stream.operation is None else column_items(stream.operation),
        strict=False,  # (the count and the constants, repeat(), never end)
    )
    # up to the cut, then the rest (a part each: no test of each reference for the cut)
    for part in (islice(rows, cut), rows):
        for i, t, obj, size, only_along, asked, follower, made_from, op in part:
            new_frame = frames and op != frame.op
            if new_frame:
                frame.begin(op, t)  # (the frame before it done)
            if next_change <= i:
                next_change = changes_before(i)
            if t >= next_sweep:  # (after the changes: one at a sweep's instant comes first)
                next_sweep = swept(t)
            if new_frame:
                at_start = frame.decide(lapse, object_ids, i)
            entry = get(obj)
            if frames:
                live = at_start[obj] is None
            else:
                live = entry is not None and t < entry[0] and not (stale and obj in stale)
            if made_from >= 0:
                source_lapse = at_start.get(made_from, lapse(made_from, t))
                host.follow_source(obj, made_from, t, live, source_lapse)
            if only_along:
                if frames:
                    along_source[follower] = obj
                    if obj in put_along:
                        continue  # put once a frame
                # a lease in place is not touched, not renewed; else the host may put one
                lapsed = at_start[obj] if frames else lapse(obj, t)
                if live or not host.puts_along(obj, follower, t, lapsed):
                    continue
                if frames:
                    put_along.add(obj)
                along_puts += 1
                along_put_bytes += size
            elif blocked and (went := host.take_blocked(obj, live)) is not None:
                misses[went[0]] += 1  # no source for it: inline, its lease untouched
                host.send_inline(obj, size, t, *went)
                continue
            elif live and frames:  # it waits for the frame's PUTs (which may have evicted it)
                source = made_from if made_from >= 0 else along_source.get(obj, -1)
                pending.append((obj, size, asked, source))
                continue
            elif live:
                hits += 1
                if lru:
                    touch(obj)
                if t >= entry[3]:  # near enough its expiry: renewed
                    renew(obj, t, size, asked)
                    renewals += 1
                    renewal_bytes += size
                continue
            orphan = False
            if put_anyway and host.take_orphan(obj):  # (put, yet inline: no source)
                orphan = size <= capacity and not (obj in told or t < until.get(obj, t))
            if entry is not None:  # run out, or stale: a new version replaces it
                span = drop(obj, t, EndReason.EXPIRED if t >= entry[0] else EndReason.INVALIDATED)
                if per_object:
                    bursts.replacing(span, obj, op)
            if track and not only_along:
                charged = INVALIDATED if orphan else ended[obj]
                misses[charged] += 1
            if (told or until) and not only_along and host.goes_inline(obj, size, t, ended[obj]):
                continue  # its inline turn, or backing off after a refusal: no PUT
            if per_object:
                bursts.put(obj, op)
            if used + size > capacity:
                while expiries and expiries[0][0] <= t:
                    expires, victim = heapq.heappop(expiries)
                    if victim in entries and entries[victim][0] == expires:
                        span = drop(victim, t, EndReason.EXPIRED)
                        if per_object:
                            bursts.ended(span, victim, False)
                if size > capacity:
                    if only_along:
                        along_rejected += 1
                        host.refused(obj, t, follower)
                        continue
                    rejected += 1
                    rejected_bytes += size
                    host.refused(obj, t)
                    if per_object:
                        rejected_of[obj] += 1
                    continue
                while used + size > capacity:
                    # the oldest (last=False, positional: a keyword costs on the hot path)
                    victim, (expires, start, victim_size, _) = evict_oldest(False)
                    evictions += 1
                    used -= victim_size
                    # live until now: the shortfall reclaimed every lease run out (inline, as
                    # in drop: this loop is the replay's hot path)
                    if t > cut_ms:
                        counted_bytes = (t - (start if start > cut_ms else cut_ms)) * victim_size
                        live_ms_bytes += counted_bytes
                        if per_object:
                            live_of[victim] += counted_bytes
                    if per_object:
                        span = book_span(victim, start, expires, t, victim_size)
                        bursts.ended(span, victim, True)
                    if track:
                        ended[victim] = evicted
                    if inline_once:
                        # (host.ended_under_host, inline: the hot path); a frame's hosts are
                        # told once its references are decided
                        if frames:
                            evicted_in_frame.append(victim)
                        else:
                            told.add(victim)
                    if stale:
                        stale.discard(victim)
            expires = t + asked
            entries[obj] = (expires, t, size, expires - margin * asked if margin else no_renewal)
            if expiring:
                push(expiries, (expires, obj))
            used += size
            if per_object:
                bursts.granted(obj)
            if only_along:
                told.discard(obj)  # a fresh lease (a refused PUT leaves the turn to come)
                continue
            if orphan:  # a PUT no reference follows: the body goes inline
                along_puts += 1
                along_put_bytes += size
                host.send_inline(obj, size, t, INVALIDATED, False)
                continue
            installs += 1
            if per_object:
                installs_of[obj] += 1
            install_bytes += size
            if frames:
                installed.append(
                    (obj, size, charged, made_from if made_from >= 0 else along_source.get(obj, -1))
                )
        frame.done()  # (as the next frame would begin, or the last is done)
        counts = {
            "hits": hits,
            "installs": installs,
            "renewals": renewals,
            "renewal_bytes": renewal_bytes,
            "rejected": rejected,
            "rejected_bytes": rejected_bytes,
            "evictions": evictions,
            "install_bytes": install_bytes,
            "along_puts": along_puts,
            "along_put_bytes": along_put_bytes,
            "along_rejected": along_rejected,
        }
        upto = len(stream) if taken else cut
        taken.append(
            _totals(stream, upto, capacity, track, frame, counts, installs_of, rejected_of)
        )
    bursts.end()
    changes_before(len(stream))  # those after the last reference end leases too
    for obj in list(entries):
        drop(obj, stream.end_ms, EndReason.EXPIRED)
    span = stream.end_ms - cut_ms
    return {
        **counted_after(taken[1], taken[0]),
        "mean_live_bytes": live_ms_bytes / span,
        "object_live_bytes": np.array(live_of, dtype=np.float64) / span,
        **spans.spans().figures(sample_times, sweep_ms, (cut_ms, stream.end_ms, n_objects)),
    }


def _totals(
    stream: ReferenceStream,
    upto: int,
    capacity: int,
    track: bool,
    frame: Frame,
    counts: dict[str, int],
    installs_of: list[int],
    rejected_of: list[int],
) -> dict[str, float]:
    """The counts of :func:`ordered_capacity`'s references before ``upto``, every frame among
    them done (see :func:`~.result.counted_after`): ``counts``, its own as they stand, with
    its frame's, its hosts' and its misses (``frame``'s), and per object (none: not kept)."""
    host, misses, n_objects = frame.host, list(frame.misses), len(installs_of)
    counted = ~stream.along_mask[:upto]
    # misses install, fail or go inline
    inline_bytes = host.inlined_bytes + host.backed_off_bytes
    put = counts["installs"] - frame.unput  # (less those put, yet inline: no reference follows)
    put_bytes = counts["install_bytes"] - frame.unput_bytes
    hit_bytes = int(stream.size[:upto][counted].sum()) - put_bytes - inline_bytes
    if not track:  # an object that never fits misses cold every time; others once, then evicted
        too_big = stream.size[:upto] > capacity
        fitting = stream.object_id[:upto][~too_big]
        # distinct objects, by a count per id (numpy 2.4's np.unique hashes, a tenth as fast)
        never = int(EndReason.NEVER_INSTALLED)
        misses[never] = np.count_nonzero(np.bincount(fitting)) + int(too_big.sum())
        misses[EVICTED] = put + counts["rejected"] - misses[never]
    object_rejected = np.array(rejected_of, dtype=np.int64)
    object_inlined = np.array(host.inlined_of, dtype=np.int64)
    object_hits = np.zeros(0, dtype=np.int64)
    if n_objects:  # its other references hit
        references_of = np.bincount(stream.object_id[:upto][counted], minlength=n_objects)
        installs_or_not = np.array(installs_of, dtype=np.int64) + object_rejected + object_inlined
        object_hits = references_of - installs_or_not
    return tally(
        misses,
        hits=counts["hits"] + frame.hits,
        installs=put,
        renewals=counts["renewals"] + frame.renewals,
        renewal_bytes=counts["renewal_bytes"] + frame.renewal_bytes,
        rejected=counts["rejected"],
        evictions=counts["evictions"],
        hit_bytes=hit_bytes - counts["rejected_bytes"],
        install_bytes=put_bytes,
        along_puts=counts["along_puts"] + frame.unput,
        along_put_bytes=counts["along_put_bytes"] + frame.unput_bytes,
        along_rejected=counts["along_rejected"],
        **host.counts(),
        object_hits=object_hits,
        object_rejected=object_rejected,
        object_inlined=object_inlined,
    )
