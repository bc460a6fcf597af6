"""The lease table: one slot per installed object, as a structure of numpy arrays.

Every cache decision of the simulator goes through here, in batches: install/renew, lookup,
expire, invalidate by scope, release by owner, evict. Times are u64 milliseconds; the ordering
columns (``installed_seq``, ``last_access_seq``) use the table's own operation counter so that
events in the same millisecond still have an exact order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import index
from typing import Any, Final, SupportsIndex

import numpy as np

from nnrpsim.protocol import (
    CACHE_INVALIDATE,
    U64_MAX,
    CacheAckStatus,
    CacheObjectKind,
    DetailCode,
    InvalidateScope,
    Lease,
    OwnerScope,
    encode_block,
    saturating_add_u64_array,
)

from .catalog import ObjectCatalog
from .eviction import EvictionFront, policy_key, victim_order
from .limits import CacheLimits
from .outcomes import EndReason, Outcome
from .owner_index import Owner, OwnerIndex

SLOT_COLUMNS: dict[str, type] = {
    "object_id": np.int32,
    "namespace": np.uint32,
    "kind": np.uint8,
    "version": np.uint64,
    "lease_id": np.uint64,
    "owner_scope": np.uint8,
    "owner_id": np.uint64,
    "granted_at": np.uint64,
    "ttl": np.uint32,
    "expires": np.uint64,
    "size": np.uint32,
    "pinned": np.bool_,
    "occupied": np.bool_,
    "installed_seq": np.uint64,
    "last_access_seq": np.uint64,
    "tenant": np.uint32,
    "hits": np.uint32,
}
"""Per-slot columns (and the free-slot stack, int32) make up a lease's memory footprint. An
object's key is the catalog's (the table finds an object by key there); ``expires`` is
``saturating_add(granted_at, ttl)``, kept at every grant and renewal so that the expiry scan
and every liveness check read one column, and ``U64_MAX`` in a free slot, which never runs
out. Each is declared on :class:`LeaseTable` and :class:`ScalarColumns` too, for the compiled
build (setup.py), whose classes hold only the attributes they declare: a column missing there
fails the build."""

SMALL_BATCH = 16
"""Lookups of at most this many references take the scalar path."""
KIND_CODES = max(CacheObjectKind) + 1
"""Object kinds by code, 0 unused: what a list per kind spans."""
# Final: the compiled build (setup.py) keeps these in C, where a plain global is a look-up in
# the module's dict at each use (and an enum's member one more on its class)
_HIT: Final = int(Outcome.HIT)
_CACHE_MISS: Final = int(Outcome.CACHE_MISS)
_LEASE_EXPIRED: Final = int(Outcome.LEASE_EXPIRED)
_VERSION_MISMATCH: Final = int(Outcome.VERSION_MISMATCH)
_DEPENDENCY_INVALID: Final = int(Outcome.DEPENDENCY_INVALID)
_EXPIRED: Final = int(EndReason.EXPIRED)
_ENDED_EXPIRED: Final = -1 - _EXPIRED
"""``slot_of`` of an object whose last lease ran out."""
_ACCEPTED: Final = CacheAckStatus.ACCEPTED
_REJECTED: Final = CacheAckStatus.REJECTED
_RENEWED: Final = DetailCode.RENEWED
_NO_DETAIL: Final = DetailCode.NONE
_EVICTED: Final = EndReason.EVICTED
_CONNECTION: Final = int(OwnerScope.CONNECTION)
_SESSION: Final = int(OwnerScope.SESSION)
_OPERATION: Final = int(OwnerScope.OPERATION)
NONE_FREED = np.empty(0, dtype=SLOT_COLUMNS["object_id"])
"""What :meth:`LeaseTable.expire` returns when no lease ran out (read-only: one for all)."""
NONE_FREED.flags.writeable = False
_ONE_HIT = SLOT_COLUMNS["hits"](1)
"""A hit, in the ``hits`` column's own type: with a Python int ``np.add.at`` takes its generic
loop, forty times slower (90 ms against 2.4 for a million hits)."""


@dataclass
class InstallResult:
    """Per item: CACHE_ACK status, detail code, accepted TTL, lease id; and what was freed."""

    status: np.ndarray
    detail: np.ndarray
    accepted_ttl_ms: np.ndarray
    lease_id: np.ndarray
    expired: list[int] = field(default_factory=list)
    evicted: list[int] = field(default_factory=list)
    replaced: list[int] = field(default_factory=list)


class ScalarPut:
    """One CACHE_PUT on the table's scalar paths, handed down as one argument: its object, the
    time, and its terms (the TTL already clamped to the table's floor and ceiling)."""

    def __init__(
        self,
        obj: int,
        now_ms: int,
        accepted_ttl: int,
        size: int,
        version: int | None,
        pinned: bool,
        tenant: int,
        owner: Owner,
    ) -> None:
        self.obj = obj
        self.now_ms = now_ms
        self.accepted_ttl = accepted_ttl
        self.size = size
        self.version = version
        self.pinned = pinned
        self.tenant = tenant
        self.owner = owner


class InstallAck:
    """:meth:`LeaseTable.install_one`'s answer: one CACHE_ACK, and what the install freed. (A
    plain class: compiled, making one and reading its fields are C, where a NamedTuple's
    constructor runs Python and each field is a descriptor.)"""

    def __init__(
        self,
        status: int,
        detail: int,
        accepted_ttl_ms: int,
        lease_id: int,
        expired: list[int],
        evicted: list[int],
        replaced: list[int],
    ) -> None:
        self.status, self.detail = status, detail
        self.accepted_ttl_ms, self.lease_id = accepted_ttl_ms, lease_id
        self.expired, self.evicted, self.replaced = expired, evicted, replaced

    def __repr__(self) -> str:
        return (
            f"InstallAck(status={self.status!r}, detail={self.detail!r}, "
            f"accepted_ttl_ms={self.accepted_ttl_ms}, lease_id={self.lease_id}, "
            f"expired={self.expired}, evicted={self.evicted}, replaced={self.replaced})"
        )


class ScalarColumns:
    """Memoryviews of the table's columns, for the scalar paths' one-at-a-time reads and writes
    (half the cost of ``ndarray.item`` and of numpy's item assignment). They share the arrays'
    memory; the table replaces them whenever it reallocates, so look them up per call. (Typed
    ``Any``: an item is a Python int or bool by the column's format, which no hint says.)"""

    has_deps: Any
    slot_of: Any
    object_id: Any
    namespace: Any
    kind: Any
    version: Any
    lease_id: Any
    owner_scope: Any
    owner_id: Any
    granted_at: Any
    ttl: Any
    expires: Any
    size: Any
    pinned: Any
    occupied: Any
    installed_seq: Any
    last_access_seq: Any
    tenant: Any
    hits: Any
    free: Any
    """The free-slot stack."""
    catalog_namespace: Any
    catalog_kind: Any
    """The catalog's, as of when the table last grew or looked at it: an object it had then
    keeps its namespace and kind."""

    def __init__(self, table: LeaseTable) -> None:
        for name in ("has_deps", "slot_of", *SLOT_COLUMNS):
            setattr(self, name, memoryview(getattr(table, name)))
        self.free = memoryview(table._free)
        self.catalog_namespace = memoryview(table.catalog.namespace)
        self.catalog_kind = memoryview(table.catalog.kind)


def _distinct(objects: np.ndarray) -> bool:
    """Whether no object id repeats, by a count per id (ids count from 0): numpy 2.4's
    ``np.unique`` hashes, 0.7 s for a million ids where this takes 2 ms."""
    return not len(objects) or int(np.bincount(objects).max()) <= 1


def _as_array(value, n: int, dtype) -> np.ndarray:
    """One value per item: arrays pass through, a scalar is repeated."""
    array = np.asarray(value, dtype=dtype)
    return np.full(n, array, dtype=dtype) if array.ndim == 0 else array


class LeaseTable:
    """Leases for the objects of one :class:`ObjectCatalog`, under one set of :class:`CacheLimits`.

    Its scalar arguments (object ids, times, sizes, TTLs) are Python ints: compiled, a method
    refuses a numpy integer there (``int(x)`` converts it), except :meth:`lease`, a query that
    a notebook makes with whatever it holds."""

    object_id: np.ndarray
    namespace: np.ndarray
    kind: np.ndarray
    version: np.ndarray
    lease_id: np.ndarray
    owner_scope: np.ndarray
    owner_id: np.ndarray
    granted_at: np.ndarray
    ttl: np.ndarray
    expires: np.ndarray
    size: np.ndarray
    pinned: np.ndarray
    occupied: np.ndarray
    installed_seq: np.ndarray
    last_access_seq: np.ndarray
    tenant: np.ndarray
    hits: np.ndarray

    def __init__(
        self,
        catalog: ObjectCatalog,
        limits: CacheLimits | None = None,
        initial_capacity: int = 1024,
    ) -> None:
        self.catalog = catalog
        self.limits = limits or CacheLimits()
        policy_key(self.limits.eviction)  # an unknown policy fails here, not mid-run
        self.capacity = 0
        for name, dtype in SLOT_COLUMNS.items():
            setattr(self, name, np.zeros(0, dtype=dtype))
        self._free = np.zeros(0, dtype=np.int32)
        self._n_free = 0
        # per object: its lease's slot; while it holds none, -1 less the EndReason of its last
        # lease (-1: never installed), which a miss needs (cache_miss or lease_expired): one
        # array to read on a miss and to write when a lease ends
        self.slot_of = np.full(0, -1, dtype=np.int32)
        self.has_deps = np.zeros(0, dtype=np.bool_)
        self._deps: dict[int, list[tuple[int, int]]] = {}
        self._dependents: dict[int, set[int]] = {}
        self._session_connection: dict[int, int] = {}
        self._operation_session: dict[int, int] = {}
        self._owner_slots = OwnerIndex()
        self._seq = 0
        self._next_lease_id = 1
        self.held_bytes = 0
        self.held_objects = 0
        # the bytes held of each object kind (codes 1-9), kept as they change: what a time
        # average of the memory by kind integrates, with no pass over the table
        self.held_kind_bytes: list[int] = [0] * KIND_CODES
        # No lease expires before this (a lower bound, kept by every grant and renewal): an
        # expire() before it has nothing to scan for. Under memory pressure every install asks.
        self._no_expiry_before = U64_MAX
        self._front = EvictionFront()  # victims without a sort of the table each time
        self._grow(initial_capacity)
        self._ensure_objects()

    # ---------------------------------------------------------------- storage
    def _grow(self, needed: int) -> None:
        new_capacity = max(needed, 2 * self.capacity, 16)
        for name in SLOT_COLUMNS:
            old = getattr(self, name)
            new = np.full(new_capacity, U64_MAX if name == "expires" else 0, dtype=old.dtype)
            new[: self.capacity] = old
            setattr(self, name, new)
        added = np.arange(new_capacity - 1, self.capacity - 1, -1, dtype=np.int32)
        free = np.empty(new_capacity, dtype=np.int32)
        free[: self._n_free] = self._free[: self._n_free]
        free[self._n_free : self._n_free + len(added)] = added
        self._free, self._n_free = free, self._n_free + len(added)
        self.capacity = new_capacity
        self._owner_slots.scan_above = 2 * new_capacity
        self.scalars = ScalarColumns(self)

    def _ensure_objects(self) -> None:
        n = len(self.catalog)
        if len(self.slot_of) < n:
            grow = n - len(self.slot_of)
            self.slot_of = np.concatenate([self.slot_of, np.full(grow, -1, dtype=np.int32)])
            self.has_deps = np.concatenate([self.has_deps, np.zeros(grow, dtype=np.bool_)])
            self.scalars = ScalarColumns(self)

    def _alloc(self, k: int) -> np.ndarray:
        if self._n_free < k:
            self._grow(self.capacity - self._n_free + k)
        self._n_free -= k
        return self._free[self._n_free : self._n_free + k][::-1].copy()

    def _release_slots(self, slots: np.ndarray, reason: EndReason) -> list[int]:
        """Free slots (no duplicates) and remember why each object's lease ended; returns
        their objects."""
        return self._free_slots(slots, reason).tolist() if len(slots) else []

    def _free_slots(self, slots: np.ndarray, reason: EndReason) -> np.ndarray:
        """:meth:`_release_slots`, its objects as an array (a million leases' expiry took
        2.4-3.3 ms more to make each freed object a Python int, half the scan's time)."""
        objects = self.object_id[slots]
        self.occupied[slots] = False
        self.expires[slots] = U64_MAX  # a free slot never runs out (expire)
        self.slot_of[objects] = -1 - reason
        sizes = self.size[slots]
        self.held_bytes -= int(sizes.sum(dtype=np.uint64))
        self.held_objects -= len(slots)
        self._count_kinds(self.kind[slots], sizes, -1)
        self._free[self._n_free : self._n_free + len(slots)] = slots
        self._n_free += len(slots)
        return objects

    def _count_kinds(self, kinds: np.ndarray, sizes: np.ndarray, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) leases of ``kinds`` and ``sizes`` in the bytes
        held of each kind."""
        sums = np.bincount(kinds, weights=sizes, minlength=KIND_CODES)
        held = self.held_kind_bytes
        for kind, n in enumerate(sums.tolist()):
            held[kind] += sign * int(n)

    def _release_slot(self, slot: int, reason: EndReason) -> int:
        """:meth:`_release_slots` for one slot, with scalar reads and writes; returns its object."""
        c = self.scalars
        obj = c.object_id[slot]
        c.occupied[slot] = False
        c.expires[slot] = U64_MAX
        c.slot_of[obj] = -1 - reason
        self.held_bytes -= c.size[slot]
        self.held_objects -= 1
        self.held_kind_bytes[c.kind[slot]] -= c.size[slot]
        self._free[self._n_free] = slot
        self._n_free += 1
        return obj

    def _next_seqs(self, k: int) -> np.ndarray:
        seqs = np.arange(self._seq, self._seq + k, dtype=np.uint64)
        self._seq += k
        return seqs

    @property
    def bytes_per_slot(self) -> int:
        """Memory of one lease slot: every per-slot column plus its free-stack entry."""
        return sum(np.dtype(t).itemsize for t in SLOT_COLUMNS.values()) + self._free.itemsize

    # ---------------------------------------------------------------- queries
    def lease(self, object_id: SupportsIndex) -> Lease | None:
        """The protocol-level lease of one object, or None when it holds none."""
        self._ensure_objects()
        obj = index(object_id)
        slot = int(self.slot_of[obj])
        if slot < 0:
            return None
        return Lease(
            self.catalog.identity(obj),
            int(self.version[slot]),
            int(self.lease_id[slot]),
            OwnerScope(int(self.owner_scope[slot])),
            int(self.owner_id[slot]),
            int(self.granted_at[slot]),
            int(self.ttl[slot]),
        )

    def terms(self, obj: int) -> tuple[int, int]:
        """When the lease ``obj`` holds now expires and its version: what a check of a hit
        needs, with scalars. ``obj`` must hold a lease."""
        c = self.scalars
        slot = c.slot_of[obj]
        return c.expires[slot], c.version[slot]

    def why_not_live(self, obj: int) -> int:
        """Why ``obj``, which holds no live lease, holds none: an :class:`EndReason` code,
        expired while its run-out lease is still in its slot (not yet reclaimed), else why its
        last lease ended (never installed: it had none)."""
        slot = self.scalars.slot_of[obj]
        return _EXPIRED if slot >= 0 else -1 - slot

    def live_mask(self, now_ms: int) -> np.ndarray:
        return self.occupied & (self.expires > np.uint64(now_ms))

    def live_bytes(self, now_ms: int) -> int:
        return int(self.size[self.live_mask(now_ms)].sum(dtype=np.uint64))

    def live_objects(self, now_ms: int) -> int:
        return int(self.live_mask(now_ms).sum())

    def bytes_by(self, column: str, now_ms: int | None = None) -> dict[int, int]:
        """Bytes per ``namespace``, ``tenant`` or object ``kind``: live leases at ``now_ms``, or
        all held if None."""
        if column not in ("namespace", "tenant", "kind"):
            raise ValueError(f"bytes_by takes 'namespace', 'tenant' or 'kind', not {column!r}")
        mask = self.occupied if now_ms is None else self.live_mask(now_ms)
        values, sizes = getattr(self, column)[mask], self.size[mask]
        if column == "kind":  # nine small codes: count straight into them (a sampler's call)
            sums = np.bincount(values, weights=sizes)
            return {kind: int(n) for kind, n in enumerate(sums.tolist()) if n}
        keys, inverse = np.unique(values, return_inverse=True)
        sums = np.bincount(inverse, weights=sizes, minlength=len(keys))
        return {int(k): int(v) for k, v in zip(keys, sums, strict=True)}

    # ---------------------------------------------------------------- owners and dependencies
    def register_session(self, session_id: int, connection_id: int) -> None:
        self._session_connection[session_id] = connection_id

    def register_operation(self, operation_id: int, session_id: int) -> None:
        self._operation_session[operation_id] = session_id

    def add_dependency(self, object_id: int, depends_on: int, required_version: int) -> None:
        """``object_id`` is usable only while ``depends_on`` is live at ``required_version``."""
        self._ensure_objects()
        self._deps.setdefault(object_id, []).append((depends_on, required_version))
        self._dependents.setdefault(depends_on, set()).add(object_id)
        self.has_deps[object_id] = True

    def set_dependencies(self, object_id: int, dependencies: list[tuple[int, int]]) -> None:
        """Replace what ``object_id`` depends on, as ``(object, required version)`` pairs: a
        re-install declares what its new content was made from."""
        self._ensure_objects()
        for depends_on, _ in self._deps.pop(object_id, ()):
            self._dependents[depends_on].discard(object_id)
        self.has_deps[object_id] = False
        for depends_on, required_version in dependencies:
            self.add_dependency(object_id, depends_on, required_version)

    def _dependencies_valid(self, object_id: int, now_ms: int) -> bool:
        c = self.scalars
        for dep, required in self._deps[object_id]:
            slot = c.slot_of[dep]
            if slot < 0 or c.version[slot] != required or not c.expires[slot] > now_ms:
                return False
        return True

    # ---------------------------------------------------------------- lookup
    def lookup(
        self,
        objects: np.ndarray,
        now_ms: int,
        expected_versions: np.ndarray | None = None,
    ) -> np.ndarray:
        """Resolve references: an :class:`Outcome` code per reference; hits update recency.

        Small batches (the hot path of the discrete-event model) take a scalar path with the same
        rules; large ones are vectorised.
        """
        self._ensure_objects()
        if len(objects) <= SMALL_BATCH:
            return np.array(self._lookup_small(objects, now_ms, expected_versions), dtype=np.uint8)
        objects = np.asarray(objects, dtype=np.int64)
        slots = self.slot_of[objects]
        present = slots >= 0
        outcome = np.where(
            slots == _ENDED_EXPIRED, Outcome.LEASE_EXPIRED, Outcome.CACHE_MISS
        ).astype(np.uint8)
        ps = slots[present]
        found = np.full(len(ps), Outcome.HIT, dtype=np.uint8)
        found[self.expires[ps] <= np.uint64(now_ms)] = Outcome.LEASE_EXPIRED
        if expected_versions is not None:
            expected = _as_array(expected_versions, len(objects), np.uint64)[present]
            found[(found == Outcome.HIT) & (self.version[ps] != expected)] = (
                Outcome.VERSION_MISMATCH
            )
        for i in np.flatnonzero((found == Outcome.HIT) & self.has_deps[objects[present]]):
            if not self._dependencies_valid(int(objects[present][i]), now_ms):
                found[i] = Outcome.DEPENDENCY_INVALID
        outcome[present] = found
        hit_slots = ps[found == Outcome.HIT]
        if len(hit_slots):
            np.maximum.at(self.last_access_seq, hit_slots, self._next_seqs(len(hit_slots)))
            np.add.at(self.hits, hit_slots, _ONE_HIT)
            if self._front.watch_hits:
                self._front.clear()
        return outcome

    def _lookup_small(self, objects, now_ms: int, expected_versions) -> list[int]:
        objects = np.asarray(objects, dtype=np.int64).tolist()
        if expected_versions is None:
            return [self.resolve(obj, now_ms) for obj in objects]
        expected = _as_array(expected_versions, len(objects), np.uint64).tolist()
        return [self.resolve(obj, now_ms, v) for obj, v in zip(objects, expected, strict=True)]

    def resolve(self, obj: int, now_ms: int, expected_version: int | None = None) -> int:
        """Resolve one reference with scalars: the :class:`Outcome` code, recency updated on a
        hit. The rules of :meth:`lookup`, without its per-call array overhead."""
        c = self.scalars
        try:
            slot = c.slot_of[obj]
        except IndexError:  # added to the catalog since the table last looked
            self._ensure_objects()
            c = self.scalars
            slot = c.slot_of[obj]
        if slot < 0:
            return _LEASE_EXPIRED if slot == _ENDED_EXPIRED else _CACHE_MISS
        if c.expires[slot] <= now_ms:
            return _LEASE_EXPIRED
        if expected_version is not None and c.version[slot] != expected_version:
            return _VERSION_MISMATCH
        if self._deps and c.has_deps[obj] and not self._dependencies_valid(obj, now_ms):
            return _DEPENDENCY_INVALID
        c.last_access_seq[slot] = self._seq
        self._seq += 1
        c.hits[slot] += 1
        if self._front.watch_hits:
            self._front.changed(self, slot)
        return _HIT

    def holds(self, obj: int, now_ms: int) -> bool:
        """Whether ``obj`` has a lease live at ``now_ms``; unlike :meth:`resolve`, a look that
        is no reference (recency and hits stay as they were)."""
        self._ensure_objects()
        c = self.scalars
        slot = c.slot_of[obj]
        return slot >= 0 and c.expires[slot] > now_ms

    def run_out(self, obj: int, now_ms: int) -> bool:
        """Whether ``obj``'s lease has run out by ``now_ms`` but is still in its slot: no sweep
        or reclaim has freed it yet."""
        self._ensure_objects()
        c = self.scalars
        slot = c.slot_of[obj]
        return slot >= 0 and c.expires[slot] <= now_ms

    # ---------------------------------------------------------------- install / renew
    def install(
        self,
        objects: np.ndarray,
        now_ms: int,
        ttl_ms: np.ndarray | int,
        sizes: np.ndarray | int,
        *,
        versions: np.ndarray | int | None = None,
        pinned: np.ndarray | bool = False,
        owner_scope: OwnerScope = OwnerScope.SESSION,
        owner_id: int = 0,
        tenant: np.ndarray | int = 0,
    ) -> InstallResult:
        """Handle CACHE_PUTs in order: grant, renew (same identity and version) or replace.

        Renewal keeps ``lease_id`` and sets ``granted_at`` to now; a different version replaces
        the object (status replaced, new lease). A PUT for an expired lease is a new grant.
        When room must be made, expired leases are reclaimed first, then the eviction policy runs.
        """
        self._ensure_objects()
        objects = np.asarray(objects, dtype=np.int64)
        n = len(objects)
        args = {
            "ttl": _as_array(ttl_ms, n, np.int64),
            "size": _as_array(sizes, n, np.int64),
            "version": None if versions is None else _as_array(versions, n, np.uint64),
            "pinned": _as_array(pinned, n, np.bool_),
            "tenant": _as_array(tenant, n, np.uint32),
        }
        result = InstallResult(
            status=np.zeros(n, dtype=np.uint8),
            detail=np.zeros(n, dtype=np.uint8),
            accepted_ttl_ms=np.clip(
                args["ttl"], self.limits.ttl_floor_ms, self.limits.ttl_ceiling_ms
            ).astype(np.uint32),
            lease_id=np.zeros(n, dtype=np.uint64),
        )
        owner = (int(owner_scope), owner_id)
        if n <= SMALL_BATCH:
            for i in range(n):
                self._install_one(i, objects, now_ms, args, owner, result)
            return result
        if _distinct(objects) and self._install_batch(
            np.arange(n), objects, now_ms, args, owner, result, allow_evict=False
        ):
            return result
        for i in range(n):
            self._install_one(i, objects, now_ms, args, owner, result)
        return result

    def install_one(
        self,
        obj: int,
        now_ms: int,
        ttl_ms: int,
        size: int,
        *,
        version: int | None = None,
        pinned: bool = False,
        owner_scope: OwnerScope = OwnerScope.SESSION,
        owner_id: int = 0,
        tenant: int = 0,
    ) -> InstallAck:
        """One CACHE_PUT with scalars: the rules of :meth:`install` without its per-call array
        overhead when the PUT is a plain renewal or a grant that fits (a frame's PUTs are few)."""
        accepted = min(max(ttl_ms, self.limits.ttl_floor_ms), self.limits.ttl_ceiling_ms)
        if obj >= len(self.slot_of):  # added to the catalog since the table last looked
            self._ensure_objects()
        owner = (int(owner_scope), owner_id)
        put = ScalarPut(obj, now_ms, accepted, size, version, pinned, tenant, owner)
        done = self._install_scalar(put)
        if done is not None:
            detail, lease_id, accepted = done
            return InstallAck(_ACCEPTED, detail, accepted, lease_id, [], [], [])
        if SMALL_BATCH >= 1 and self._admissible(obj, size):
            slot = self.scalars.slot_of[obj]
            if slot < 0:
                return self._grant_making_room(put)
            return self._grant_after_ending(slot, put)
        result = self.install(
            np.array([obj]),
            now_ms,
            ttl_ms,
            size,
            versions=version,
            pinned=pinned,
            owner_scope=owner_scope,
            owner_id=owner_id,
            tenant=tenant,
        )
        return InstallAck(
            result.status.item(0),
            result.detail.item(0),
            result.accepted_ttl_ms.item(0),
            result.lease_id.item(0),
            result.expired,
            result.evicted,
            result.replaced,
        )

    def _install_one(self, i: int, objects: np.ndarray, now_ms: int, args, owner, result) -> None:
        """Item ``i`` of a batch on its own: the scalar paths if they apply, else the general
        rules (admission, replacement, making room)."""
        version = args["version"]
        put = ScalarPut(
            objects.item(i),
            now_ms,
            result.accepted_ttl_ms.item(i),
            args["size"].item(i),
            None if version is None else version.item(i),
            args["pinned"].item(i),
            args["tenant"].item(i),
            owner,
        )
        done = self._install_scalar(put)
        if done is None:
            self._install_batch(
                np.array([i]), objects[i : i + 1], now_ms, args, owner, result, True
            )
        else:
            result.detail[i], result.lease_id[i], result.accepted_ttl_ms[i] = done

    def _install_scalar(self, put: ScalarPut) -> tuple[int, int, int] | None:
        """A plain renewal or a fresh grant that fits, with scalar reads and writes: (detail,
        lease id, accepted TTL). None, with nothing changed, for anything else (or when tests
        set SMALL_BATCH below 1 to send everything down the general path)."""
        if SMALL_BATCH < 1:
            return None
        c, limits = self.scalars, self.limits
        now_ms, accepted_ttl, version = put.now_ms, put.accepted_ttl, put.version
        slot = c.slot_of[put.obj]
        if slot >= 0:
            expires = c.expires[slot]
            if (
                not expires > now_ms
                or (version is not None and version != c.version[slot])
                or put.size > limits.max_object_bytes
                or not (limits.object_kind_bitmap >> (c.kind[slot] - 1)) & 1
            ):
                return None
            if limits.renewal == "extend":
                accepted_ttl = max(accepted_ttl, expires - now_ms)
            c.granted_at[slot] = now_ms
            c.ttl[slot] = accepted_ttl
            c.expires[slot] = expires = min(now_ms + accepted_ttl, U64_MAX)
            self._no_expiry_before = min(self._no_expiry_before, expires)
            c.pinned[slot] = put.pinned
            c.last_access_seq[slot] = self._seq
            self._seq += 1
            if self._front.watch_renewals:
                self._front.changed(self, slot)
            return _RENEWED, c.lease_id[slot], accepted_ttl
        if self._fits_fresh(put.obj, put.size):
            return _NO_DETAIL, self._grant_one(put), accepted_ttl
        return None

    def _fits_fresh(self, obj: int, size: int) -> bool:
        """A new grant (the object holds no lease) that needs no admission refusal and no room
        made."""
        if not self._admissible(obj, size):
            return False
        short_bytes, short_entries = self._shortfall(size, 1)
        return short_bytes <= 0 and short_entries <= 0

    def _admissible(self, obj: int, size: int) -> bool:
        """The cache ceiling allows the object: its size and its kind."""
        limits = self.limits
        return (
            size <= limits.max_object_bytes
            and (limits.object_kind_bitmap >> (self.scalars.catalog_kind[obj] - 1)) & 1 == 1
        )

    def _grant_making_room(self, put: ScalarPut) -> InstallAck:
        """A new grant of an admissible object that holds no lease, when room must be made
        first: the general path's rules for it (reclaim expired leases, then evict; refuse if
        even that cannot make room) without its per-call arrays. Under memory pressure nearly
        every PUT comes this way."""
        made, expired, evicted = self._make_room(put.now_ms, *self._shortfall(put.size, 1))
        if not made:  # (nothing was evicted)
            detail = self._refusal_detail(1)
            return InstallAck(_REJECTED, detail, put.accepted_ttl, 0, expired, [], [])
        lease_id = self._grant_one(put)
        return InstallAck(_ACCEPTED, _NO_DETAIL, put.accepted_ttl, lease_id, expired, evicted, [])

    def _grant_after_ending(self, slot: int, put: ScalarPut) -> InstallAck:
        """A PUT of an admissible object whose lease in ``slot`` it cannot renew: run out (a
        new grant) or of another version (replaced, the new lease its own). The general
        path's rules without its per-call arrays: the old lease ends first, and its room
        counts before any is made. Expiries that are not yet reclaimed come this way."""
        c, now_ms, accepted_ttl = self.scalars, put.now_ms, put.accepted_ttl
        if c.expires[slot] > now_ms:
            expired, replaced = [], [self._release_slot(slot, EndReason.INVALIDATED)]
            status = CacheAckStatus.REPLACED
        else:
            expired, replaced = [self._release_slot(slot, EndReason.EXPIRED)], []
            status = _ACCEPTED
        evicted: list[int] = []
        short_bytes, short_entries = self._shortfall(put.size, 1)
        if short_bytes > 0 or short_entries > 0:
            made, reclaimed, evicted = self._make_room(now_ms, short_bytes, short_entries)
            expired += reclaimed
            if not made:  # (the lease it ended freed the entry it needs: none more is asked)
                detail = self._refusal_detail(0)
                return InstallAck(_REJECTED, detail, accepted_ttl, 0, expired, [], replaced)
        lease_id = self._grant_one(put)
        return InstallAck(status, _NO_DETAIL, accepted_ttl, lease_id, expired, evicted, replaced)

    def _install_batch(
        self,
        rows: np.ndarray,
        objects: np.ndarray,
        now_ms: int,
        args: dict,
        owner: tuple[int, int],
        result: InstallResult,
        allow_evict: bool,
    ) -> bool:
        """Install distinct objects; returns False (changing nothing) if eviction would be needed
        and is not allowed here."""
        limits = self.limits
        size = args["size"][rows]
        kind_ok = (
            limits.object_kind_bitmap >> (self.catalog.kind[objects].astype(np.int64) - 1)
        ) & 1
        ok = kind_ok.astype(bool) & (size <= limits.max_object_bytes)
        slots = self.slot_of[objects]
        stale = ok & (slots >= 0) & ~(self.expires[np.maximum(slots, 0)] > np.uint64(now_ms))
        version = args["version"]
        current = self.version[np.maximum(slots, 0)]
        same = np.ones(len(rows), bool) if version is None else version[rows] == current
        renew = ok & (slots >= 0) & ~stale & same
        replace = ok & (slots >= 0) & ~stale & ~same
        fresh = ok & ~renew
        freed = stale | replace
        need_bytes = int(size[fresh].sum()) - int(self.size[slots[freed]].sum(dtype=np.uint64))
        need_entries = int(fresh.sum()) - int(freed.sum())
        short_bytes, short_entries = self._shortfall(need_bytes, need_entries)
        if (short_bytes > 0 or short_entries > 0) and not allow_evict:
            return False

        result.detail[rows[~kind_ok.astype(bool)]] = DetailCode.KIND_NOT_NEGOTIATED
        result.detail[rows[kind_ok.astype(bool) & ~ok]] = DetailCode.OBJECT_TOO_LARGE
        result.status[rows[~ok]] = CacheAckStatus.REJECTED
        result.expired += self._release_slots(slots[stale], EndReason.EXPIRED)
        result.replaced += self._release_slots(slots[replace], EndReason.INVALIDATED)

        # Renewals and grants take the operation counter in item order, as one by one would.
        seqs = np.zeros(len(rows), dtype=np.uint64)
        seqs[renew | fresh] = self._next_seqs(int((renew | fresh).sum()))
        renew_slots = slots[renew]
        if limits.renewal == "extend":  # keep what is left of a longer lease
            left = self.expires[renew_slots] - np.uint64(now_ms)  # (live: no wrap-around)
            result.accepted_ttl_ms[rows[renew]] = np.maximum(
                result.accepted_ttl_ms[rows[renew]], left
            )
        self._set_terms(renew_slots, now_ms, result.accepted_ttl_ms[rows[renew]])
        self.pinned[renew_slots] = args["pinned"][rows[renew]]
        self.last_access_seq[renew_slots] = seqs[renew]
        if self._front.watch_renewals and len(renew_slots):
            self._front.clear()
        result.detail[rows[renew]] = DetailCode.RENEWED
        result.lease_id[rows[renew]] = self.lease_id[renew_slots]

        made = True
        if short_bytes > 0 or short_entries > 0:
            made, expired, evicted = self._make_room(now_ms, short_bytes, short_entries)
            result.expired += expired
            result.evicted += evicted
        if not made:
            result.status[rows[fresh]] = CacheAckStatus.REJECTED
            result.detail[rows[fresh]] = self._refusal_detail(need_entries)
            return True
        self._grant(rows[fresh], objects[fresh], now_ms, args, owner, result, seqs[fresh])
        result.status[rows[replace]] = CacheAckStatus.REPLACED
        return True

    def _shortfall(self, need_bytes: int, need_entries: int) -> tuple[int, int]:
        limits = self.limits
        short_bytes = 0
        if limits.capacity_bytes is not None:
            short_bytes = self.held_bytes + need_bytes - limits.capacity_bytes
        short_entries = 0
        if limits.max_cache_entries:
            short_entries = self.held_objects + need_entries - limits.max_cache_entries
        return short_bytes, short_entries

    def _refusal_detail(self, need_entries: int) -> DetailCode:
        """Why room could not be made for ``need_entries`` new leases: the entry limit, or
        memory."""
        if self._shortfall(0, need_entries)[1] > 0:
            return DetailCode.ENTRY_LIMIT_REACHED
        return DetailCode.INSUFFICIENT_MEMORY

    def _make_room(
        self, now_ms: int, short_bytes: int, short_entries: int
    ) -> tuple[bool, list[int], list[int]]:
        """Reclaim expired leases, then evict by policy: whether that made room, and the
        objects expired and evicted (expired leases are reclaimed even when it did not)."""
        before_bytes, before_objects = self.held_bytes, self.held_objects
        expired = self.expire(now_ms).tolist()
        short_bytes -= before_bytes - self.held_bytes
        short_entries -= before_objects - self.held_objects
        if short_bytes <= 0 and short_entries <= 0:
            return True, expired, []
        evicted = self.evict(max(short_bytes, 0), entries_needed=max(short_entries, 0))
        if evicted is None:
            return False, expired, []
        return True, expired, evicted

    def _grant(self, rows, objects, now_ms, args, owner, result, seqs: np.ndarray) -> None:
        k = len(rows)
        if not k:
            return
        slots = self._alloc(k)
        catalog = self.catalog
        self.object_id[slots] = objects
        self.namespace[slots] = catalog.namespace[objects]
        self.kind[slots] = catalog.kind[objects]
        self.version[slots] = 1 if args["version"] is None else args["version"][rows]
        lease_ids = np.arange(self._next_lease_id, self._next_lease_id + k, dtype=np.uint64)
        self._next_lease_id += k
        self.lease_id[slots] = lease_ids
        self.owner_scope[slots], self.owner_id[slots] = owner
        if k <= SMALL_BATCH:
            for slot in slots.tolist():
                self._owner_slots.add(owner, slot)
        else:
            self._owner_slots.add_batch(owner)
        self._set_terms(slots, now_ms, result.accepted_ttl_ms[rows])
        self.size[slots] = args["size"][rows]
        self.pinned[slots] = args["pinned"][rows]
        self.occupied[slots] = True
        self.installed_seq[slots] = seqs
        self.last_access_seq[slots] = seqs
        self.tenant[slots] = args["tenant"][rows]
        self.hits[slots] = 0
        self.slot_of[objects] = slots
        sizes = args["size"][rows]
        self.held_bytes += int(sizes.sum())
        self.held_objects += k
        self._count_kinds(self.kind[slots], sizes, 1)
        result.lease_id[rows] = lease_ids
        front = self._front
        if front.watch_hits or front.watch_renewals:
            front.clear()

    def _grant_one(self, put: ScalarPut) -> int:
        """:meth:`_grant` for a single item, with scalar writes; returns the lease id."""
        if not self._n_free:
            self._grow(self.capacity + 1)
        self._n_free -= 1
        c, obj, size = self.scalars, put.obj, put.size
        now_ms, accepted_ttl = put.now_ms, put.accepted_ttl
        slot = c.free[self._n_free]
        c.object_id[slot] = obj
        c.namespace[slot] = c.catalog_namespace[obj]
        c.kind[slot] = c.catalog_kind[obj]
        c.version[slot] = 1 if put.version is None else put.version
        lease_id = self._next_lease_id
        self._next_lease_id += 1
        c.lease_id[slot] = lease_id
        c.owner_scope[slot], c.owner_id[slot] = put.owner
        self._owner_slots.add(put.owner, slot)
        c.granted_at[slot] = now_ms
        c.ttl[slot] = accepted_ttl
        c.expires[slot] = expires = min(now_ms + accepted_ttl, U64_MAX)
        self._no_expiry_before = min(self._no_expiry_before, expires)
        c.size[slot] = size
        c.pinned[slot] = put.pinned
        c.occupied[slot] = True
        c.installed_seq[slot] = c.last_access_seq[slot] = self._seq
        self._seq += 1
        c.tenant[slot] = put.tenant
        c.hits[slot] = 0
        c.slot_of[obj] = slot
        self.held_bytes += size
        self.held_objects += 1
        self.held_kind_bytes[c.kind[slot]] += size
        front = self._front
        if front.watch_hits or front.watch_renewals:
            front.changed(self, slot)
        return lease_id

    # ---------------------------------------------------------------- removal
    def expire(self, now_ms: int) -> np.ndarray:
        """Free every lease expired at ``now_ms`` in one pass; returns the freed object ids,
        an array (:data:`NONE_FREED` when none ran out)."""
        if now_ms < self._no_expiry_before:
            return NONE_FREED
        if now_ms >= U64_MAX:  # every lease has run out, a saturated one too
            return self._free_slots(np.flatnonzero(self.occupied), EndReason.EXPIRED)
        # (a free slot's expires is U64_MAX: no mask of occupied slots)
        freed = self._free_slots(
            np.flatnonzero(self.expires <= np.uint64(now_ms)), EndReason.EXPIRED
        )
        self._no_expiry_before = int(self.expires.min(initial=U64_MAX))
        return freed

    def _set_terms(self, slots: np.ndarray, now_ms: int, ttls: np.ndarray) -> None:
        """A grant's or renewal's terms for ``slots``: granted now for ``ttls``."""
        if not len(slots):
            return
        self.granted_at[slots] = now_ms
        self.ttl[slots] = ttls
        self.expires[slots] = expires = saturating_add_u64_array(now_ms, ttls)
        self._no_expiry_before = min(self._no_expiry_before, int(expires.min()))

    def evict(
        self, bytes_needed: int, policy: str | None = None, entries_needed: int = 0
    ) -> list[int] | None:
        """Evict the fewest unpinned leases, in policy order, that free ``bytes_needed`` bytes and
        ``entries_needed`` entries; None (and nothing evicted) when that is impossible."""
        if bytes_needed <= 0 and entries_needed <= 0:
            return []
        policy = policy or self.limits.eviction
        if policy_key(policy) is None:  # a policy that never evicts (nor scans the table)
            return None
        slots = self._front.victims(self, policy, bytes_needed, entries_needed)
        if slots is not None:
            return [self._release_slot(slot, _EVICTED) for slot in slots]
        candidates = np.flatnonzero(self.occupied & ~self.pinned)
        order = victim_order(self, candidates, policy)
        # the fewest victims in order: enough bytes (the running sum never falls), and entries
        freed = np.add.accumulate(self.size[order], dtype=np.int64)
        victims = max(int(freed.searchsorted(bytes_needed)) + 1, entries_needed)
        if victims > len(order):
            return None
        return self._release_slots(order[:victims], EndReason.EVICTED)

    def _release_unexpired(self, slots: np.ndarray, now_ms: int, reason: EndReason) -> list[int]:
        """Free slots for ``reason``; a lease already expired at ``now_ms`` ended by expiry."""
        expired = ~(self.expires[slots] > np.uint64(now_ms))
        self._release_slots(slots[expired], EndReason.EXPIRED)
        return self._release_slots(slots[~expired], reason)

    def invalidate_objects(
        self, objects: np.ndarray, now_ms: int, *, cascade: bool = False
    ) -> list[int]:
        """Invalidate these objects' live leases, and their dependents' when ``cascade``.

        Leases already expired at ``now_ms`` are freed as expired, not invalidated; the returned
        ids are the leases that invalidation ended (those a server tells the host about).
        """
        self._ensure_objects()
        objects = np.asarray(objects, dtype=np.int64)
        if len(objects) == 1 and SMALL_BATCH >= 1:  # a content change: one object
            freed = self._invalidate_one(objects.item(0), now_ms)
        else:
            objects = np.unique(objects)
            slots = self.slot_of[objects]
            freed = self._release_unexpired(slots[slots >= 0], now_ms, EndReason.INVALIDATED)
        if cascade:
            frontier = set(freed)
            while frontier:
                dependents = set().union(*(self._dependents.get(o, set()) for o in frontier))
                if not dependents:
                    break
                dep_slots = self.slot_of[
                    np.fromiter(dependents, dtype=np.int64, count=len(dependents))
                ]
                frontier = set(
                    self._release_slots(dep_slots[dep_slots >= 0], EndReason.INVALIDATED)
                )
                freed += sorted(frontier)
        return freed

    def _invalidate_one(self, obj: int, now_ms: int) -> list[int]:
        """:meth:`_release_unexpired` for one object, with scalar reads and writes."""
        c = self.scalars
        slot = c.slot_of[obj]
        if slot < 0:
            return []
        if c.expires[slot] > now_ms:
            return [self._release_slot(slot, EndReason.INVALIDATED)]
        self._release_slot(slot, EndReason.EXPIRED)
        return []

    def invalidate(
        self,
        scope: InvalidateScope,
        now_ms: int,
        cache_namespace: int = 0,
        cache_key_hi: int = 0,
        cache_key_lo: int = 0,
        *,
        cascade: bool = False,
    ) -> list[int]:
        """CACHE_INVALIDATE: the selector obeys the wire's scope table, then matches leases."""
        scope = InvalidateScope(scope)
        encode_block(  # the same field rules as the wire: a bad selector raises WireError
            CACHE_INVALIDATE,
            {
                "invalidate_scope": int(scope),
                "cache_namespace": cache_namespace,
                "cache_key_hi": cache_key_hi,
                "cache_key_lo": cache_key_lo,
                "reason_code": 0,
            },
        )
        if scope is InvalidateScope.OBJECT_KEY:  # the key's objects, one per kind
            objects = np.array(self.catalog.ids_of_key(cache_namespace, cache_key_hi, cache_key_lo))
        else:
            mask = self.occupied.copy()
            if scope is not InvalidateScope.WHOLE_SESSION:
                mask &= self.namespace == cache_namespace
            if scope is InvalidateScope.OBJECT_KIND:
                mask &= self.kind == cache_key_hi
            objects = self.object_id[mask]
        return self.invalidate_objects(objects, now_ms, cascade=cascade)

    def release_owner(self, scope: OwnerScope, owner_id: int) -> list[int]:
        """End the leases an owner holds; a connection takes its sessions and their operations
        with it, a session its operations. Sibling sessions are untouched. Only the slots the
        owners were granted are read (see :mod:`.owner_index`)."""
        code = int(OwnerScope(scope))  # (a scope the wire does not know raises here)
        owners: list[Owner] = [(code, owner_id)]
        sessions = {owner_id} if code == _SESSION else set()
        if code == _CONNECTION:
            sessions = {s for s, c in self._session_connection.items() if c == owner_id}
            owners += [(_SESSION, s) for s in sessions]
        if sessions:
            owners += [(_OPERATION, o) for o, s in self._operation_session.items() if s in sessions]
        held: list[int] = []
        scanned: list[np.ndarray] = []  # (a slot is one owner's: no repeats across owners)
        for owner in owners:
            granted = self._owner_slots.pop(owner)
            if granted is None:
                scanned.append(self._scan_for(owner))
            else:
                held += self._still_held(owner, granted)
        if not scanned and len(held) <= SMALL_BATCH:
            held.sort()
            return [self._release_slot(slot, EndReason.RELEASED) for slot in held]
        slots = np.sort(np.concatenate([np.array(held, dtype=np.int64), *scanned]))
        return self._release_slots(slots, EndReason.RELEASED)

    def _still_held(self, owner: Owner, granted: list[int]) -> list[int]:
        """Of the slots granted to ``owner`` one at a time, those it holds still."""
        scope, owner_id = owner
        c = self.scalars
        return [
            slot
            for slot in set(granted)
            if c.occupied[slot] and c.owner_scope[slot] == scope and c.owner_id[slot] == owner_id
        ]

    def _scan_for(self, owner: Owner) -> np.ndarray:
        """The slots ``owner`` holds, by a scan of the owner columns."""
        scope, owner_id = owner
        mine = (self.owner_scope == scope) & (self.owner_id == np.uint64(owner_id))
        return np.flatnonzero(mine & self.occupied)
