"""A plain-Python, dict-based model of the lease rules: the oracle for the numpy lease table.

It processes one item at a time with no cleverness, so a disagreement points at the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnrpsim.engine import CacheLimits, EndReason, Outcome
from nnrpsim.protocol import U64_MAX, CacheAckStatus, DetailCode, InvalidateScope, OwnerScope


@dataclass
class ModelLease:
    obj: int
    version: int
    lease_id: int
    owner: tuple[int, int]
    granted: int
    ttl: int
    size: int
    pinned: bool
    installed_seq: int
    last_seq: int
    hits: int = 0

    @property
    def expires(self) -> int:
        return min(self.granted + self.ttl, U64_MAX)


class ReferenceModel:
    def __init__(self, identities: list[tuple[int, int, int, int]], limits: CacheLimits) -> None:
        self.identities = identities  # obj -> (namespace, key_hi, key_lo, kind)
        self.limits = limits
        self.leases: dict[int, ModelLease] = {}
        self.ended: dict[int, EndReason] = {}
        self.deps: dict[int, list[tuple[int, int]]] = {}
        self.sessions: dict[int, int] = {}
        self.operations: dict[int, int] = {}
        self.seq = 0
        self.next_lease_id = 1

    def _tick(self) -> int:
        self.seq += 1
        return self.seq - 1

    def _end(self, obj: int, reason: EndReason) -> None:
        del self.leases[obj]
        self.ended[obj] = reason

    def held(self) -> tuple[int, int]:
        return sum(lease.size for lease in self.leases.values()), len(self.leases)

    # ------------------------------------------------------------------ lookups
    def lookup(self, obj: int, now: int, expected: int | None = None) -> Outcome:
        lease = self.leases.get(obj)
        if lease is None:
            expired = self.ended.get(obj) == EndReason.EXPIRED
            return Outcome.LEASE_EXPIRED if expired else Outcome.CACHE_MISS
        if now >= lease.expires:
            return Outcome.LEASE_EXPIRED
        if expected is not None and expected != lease.version:
            return Outcome.VERSION_MISMATCH
        for dep, required in self.deps.get(obj, []):
            d = self.leases.get(dep)
            if d is None or d.version != required or now >= d.expires:
                return Outcome.DEPENDENCY_INVALID
        lease.last_seq = self._tick()
        lease.hits += 1
        return Outcome.HIT

    # ------------------------------------------------------------------ installs
    def install(self, obj, now, ttl, size, version=None, pinned=False, owner=(1, 0)):
        limits = self.limits
        accepted = min(max(ttl, limits.ttl_floor_ms), limits.ttl_ceiling_ms)
        out = {"expired": [], "evicted": [], "replaced": [], "ttl": accepted, "lease_id": 0}
        kind = self.identities[obj][3]
        if not (limits.object_kind_bitmap >> (kind - 1)) & 1:
            return {
                **out,
                "status": CacheAckStatus.REJECTED,
                "detail": DetailCode.KIND_NOT_NEGOTIATED,
            }
        if size > limits.max_object_bytes:
            return {**out, "status": CacheAckStatus.REJECTED, "detail": DetailCode.OBJECT_TOO_LARGE}
        lease = self.leases.get(obj)
        if lease is not None and now >= lease.expires:
            self._end(obj, EndReason.EXPIRED)
            out["expired"].append(obj)
            lease = None
        if lease is not None and (version is None or version == lease.version):
            if limits.renewal == "extend":
                accepted = out["ttl"] = max(accepted, lease.expires - now)
            lease.granted, lease.ttl, lease.pinned = now, accepted, pinned
            lease.last_seq = self._tick()
            return {**out, "status": 0, "detail": DetailCode.RENEWED, "lease_id": lease.lease_id}
        status = CacheAckStatus.ACCEPTED
        if lease is not None:
            self._end(obj, EndReason.INVALIDATED)
            out["replaced"].append(obj)
            status = CacheAckStatus.REPLACED
        if not self._make_room(now, size, out):
            _, held_objects = self.held()
            entries_short = limits.max_cache_entries and held_objects + 1 > limits.max_cache_entries
            detail = (
                DetailCode.ENTRY_LIMIT_REACHED if entries_short else DetailCode.INSUFFICIENT_MEMORY
            )
            return {**out, "status": CacheAckStatus.REJECTED, "detail": detail}
        seq = self._tick()
        lease_id = self.next_lease_id
        self.next_lease_id += 1
        self.leases[obj] = ModelLease(
            obj,
            1 if version is None else version,
            lease_id,
            owner,
            now,
            accepted,
            size,
            pinned,
            seq,
            seq,
        )
        return {**out, "status": status, "detail": DetailCode.NONE, "lease_id": lease_id}

    def _short(self, size: int) -> tuple[int, int]:
        held_bytes, held_objects = self.held()
        cap, entries = self.limits.capacity_bytes, self.limits.max_cache_entries
        short_bytes = held_bytes + size - cap if cap is not None else 0
        short_entries = held_objects + 1 - entries if entries else 0
        return short_bytes, short_entries

    def _make_room(self, now, size, out) -> bool:
        short_bytes, short_entries = self._short(size)
        if short_bytes <= 0 and short_entries <= 0:
            return True
        out["expired"] += self.expire(now)
        short_bytes, short_entries = self._short(size)
        if short_bytes <= 0 and short_entries <= 0:
            return True
        evicted = self.evict(max(short_bytes, 0), self.limits.eviction, max(short_entries, 0))
        if evicted is None:
            return False
        out["evicted"] += evicted
        return True

    # ------------------------------------------------------------------ removals
    def expire(self, now: int) -> list[int]:
        gone = sorted(o for o, lease in self.leases.items() if now >= lease.expires)
        for obj in gone:
            self._end(obj, EndReason.EXPIRED)
        return gone

    def _order_key(self, lease: ModelLease, policy: str):
        return {
            "lru": lease.last_seq,
            "fifo": lease.installed_seq,
            "ttl": lease.expires,
            "size": -(lease.size / (lease.hits + 1.0)),
        }[policy], lease.installed_seq

    def evict(self, need_bytes: int, policy: str, need_entries: int = 0) -> list[int] | None:
        if need_bytes <= 0 and need_entries <= 0:
            return []
        if policy == "none":
            return None
        candidates = sorted(
            (lease for lease in self.leases.values() if not lease.pinned),
            key=lambda lease: self._order_key(lease, policy),
        )
        freed, chosen = 0, []
        for lease in candidates:
            chosen.append(lease.obj)
            freed += lease.size
            if freed >= need_bytes and len(chosen) >= need_entries:
                for obj in chosen:
                    self._end(obj, EndReason.EVICTED)
                return chosen
        return None

    def invalidate(self, scope, now, ns=0, hi=0, lo=0) -> list[int]:
        def matches(obj: int) -> bool:
            o_ns, o_hi, o_lo, o_kind = self.identities[obj]
            if scope == InvalidateScope.WHOLE_SESSION:
                return True
            if scope == InvalidateScope.NAMESPACE:
                return o_ns == ns
            if scope == InvalidateScope.OBJECT_KIND:
                return o_ns == ns and o_kind == hi
            return (o_ns, o_hi, o_lo) == (ns, hi, lo)

        gone = []
        for obj in sorted(o for o in self.leases if matches(o)):
            if now >= self.leases[obj].expires:
                self._end(obj, EndReason.EXPIRED)
            else:
                self._end(obj, EndReason.INVALIDATED)
                gone.append(obj)
        return gone

    def release_owner(self, scope: OwnerScope, owner_id: int) -> list[int]:
        owners = {(int(scope), owner_id)}
        if scope == OwnerScope.CONNECTION:
            owners |= {(1, s) for s, c in self.sessions.items() if c == owner_id}
        sessions = {i for sc, i in owners if sc == 1}
        owners |= {(2, o) for o, s in self.operations.items() if s in sessions}
        gone = sorted(o for o, lease in self.leases.items() if lease.owner in owners)
        for obj in gone:
            self._end(obj, EndReason.RELEASED)
        return gone
