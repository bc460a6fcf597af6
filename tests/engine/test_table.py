"""Lease table behaviours stated by the spec: owners, dependencies, scopes, admission,
accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog, Outcome
from nnrpsim.engine.table import SMALL_BATCH
from nnrpsim.protocol import (
    U32_MAX,
    U64_MAX,
    CacheAckStatus,
    CacheErrorCode,
    CacheIdentity,
    CacheObjectKind,
    DetailCode,
    InvalidateScope,
    OwnerScope,
    WireError,
    cache_object_bitmap,
)


def _table(n=8, initial_capacity=1024, **limits) -> LeaseTable:
    ns = np.array([1, 1, 2, 2, 3, 3, 3, 3][:n])
    ids = np.arange(n, dtype=np.uint64)
    kinds = np.array([7, 8, 7, 8, 7, 7, 1, 9][:n])
    catalog = ObjectCatalog.from_arrays(ns, ids, ids * 10, kinds)
    return LeaseTable(catalog, CacheLimits(**limits), initial_capacity=initial_capacity)


@pytest.mark.parametrize("scalar", [False, True])
@pytest.mark.parametrize(("renewal", "expires"), [("touch", 1500), ("extend", 2000)])
def test_a_shorter_renewal_shortens_the_lease_only_under_touch(renewal, expires, scalar):
    # Granted 1000 ms at 1000; renewed at 1400 asking for 100 ms. Touch (the reference FFI)
    # sets the lease to end at 1500; extend keeps the 600 ms left, and the ACK says so.
    table = _table(renewal=renewal)
    table.install([0], 1000, 1000, 64)
    if scalar:
        accepted = table.install_one(0, 1400, 100, 64).accepted_ttl_ms
    else:
        accepted = int(table.install([0], 1400, 100, 64).accepted_ttl_ms[0])
    assert table.lease(0).expires_at_ms == expires and accepted == expires - 1400
    table.install([0], 1450, 900, 64)  # a longer renewal extends under either rule
    assert table.lease(0).expires_at_ms == 2350


@pytest.mark.parametrize("vectorised", [False, True])
def test_extend_keeps_what_is_left_of_a_lease_saturated_at_the_clock_ceiling(
    vectorised, monkeypatch
):
    # Granted 1000 ms 100 ms before the u64 clock's end: the lease ends at U64_MAX. Renewed
    # 50 ms later asking for 10 ms, extend keeps the 50 ms left, on either path.
    if vectorised:
        monkeypatch.setattr("nnrpsim.engine.table.SMALL_BATCH", -1)
    table = _table(renewal="extend")
    table.install([0], U64_MAX - 100, 1000, 64)
    assert int(table.install([0], U64_MAX - 50, 10, 64).accepted_ttl_ms[0]) == 50
    assert table.lease(0).ttl_ms == 50 and table.lease(0).expires_at_ms == U64_MAX


@pytest.mark.parametrize("vectorised", [False, True])
def test_the_sweep_finds_a_lease_that_a_renewal_shortened(vectorised, monkeypatch):
    """expire() skips its scan while no lease can have run out: a renewal that shortens a
    lease (touch) must move that bound, on the scalar path and the vectorised one."""
    if vectorised:
        monkeypatch.setattr("nnrpsim.engine.table.SMALL_BATCH", -1)
    table = _table()
    table.install([0, 1], 0, 1000, 64)
    assert table.expire(999).tolist() == []
    table.install([0], 100, 50, 64)  # renewed at 100 for 50 ms: ends at 150
    assert table.expire(149).tolist() == [] and table.expire(150).tolist() == [0]
    assert table.expire(999).tolist() == [] and table.expire(1000).tolist() == [1]
    assert table.expire(10**12).tolist() == [] and table.held_objects == 0


def test_the_ceiling_allows_negotiated_kinds_up_to_the_object_size_limit():
    limits = CacheLimits(object_kind_bitmap=cache_object_bitmap(7, 8), max_object_bytes=100)
    assert limits.allows(7, 100) and not limits.allows(7, 101) and not limits.allows(9, 1)
    kinds, sizes = np.array([7, 8, 9, 1], dtype=np.uint8), np.array([1, 200, 1, 1])
    assert limits.allows(kinds, sizes).tolist() == [True, False, False, False]


@settings(max_examples=200, deadline=None)
@given(
    bitmap=st.integers(0, 0x1FF),
    ceiling=st.integers(1, 2**32 - 1),
    kind=st.integers(1, 9),
    size=st.integers(1, 2**32 - 1),
)
def test_one_objects_answer_is_the_arrays_answer(bitmap, ceiling, kind, size):
    # Plain ints take their own path (a DES host asks once per object): it must agree.
    limits = CacheLimits(object_kind_bitmap=bitmap, max_object_bytes=ceiling)
    one = limits.allows(kind, size)
    assert type(one) is bool
    assert one == limits.allows(np.array([kind], dtype=np.uint8), np.array([size]))[0]


def test_an_unknown_renewal_rule_is_refused():
    with pytest.raises(ValueError, match="renewal must be one of"):
        CacheLimits(renewal="forever")


def test_limits_no_table_could_use_are_refused_when_built():
    """Before a table is made of them: an unknown policy, and a budget that is no number
    (NaN passes ``capacity < 0``, and a table with it would never evict)."""
    with pytest.raises(ValueError, match="unknown eviction policy 'mru'"):
        CacheLimits(eviction="mru")
    for capacity in (math.nan, -1):
        with pytest.raises(ValueError, match="capacity_bytes must be >= 0"):
            CacheLimits(capacity_bytes=capacity)


def test_renewal_keeps_lease_id_and_regrants_at_now():
    table = _table()
    first = table.install([0], 1000, 500, 64)
    renewed = table.install([0], 1400, 500, 64)
    assert renewed.detail[0] == DetailCode.RENEWED and renewed.lease_id[0] == first.lease_id[0]
    assert table.lease(0).expires_at_ms == 1900
    assert table.lookup([0], 1899)[0] == Outcome.HIT
    assert table.lookup([0], 1900)[0] == Outcome.LEASE_EXPIRED
    regranted = table.install([0], 2000, 500, 64)  # after expiry: a new grant, a new lease
    assert regranted.detail[0] == DetailCode.NONE and regranted.lease_id[0] != first.lease_id[0]
    assert regranted.expired == [0]


def test_replacing_content_gives_status_replaced_and_version_mismatch_for_old_users():
    table = _table()
    table.install([0], 0, 1000, 64, versions=1)
    replaced = table.install([0], 10, 1000, 64, versions=2)
    assert replaced.status[0] == CacheAckStatus.REPLACED and replaced.replaced == [0]
    assert table.lookup([0], 20, expected_versions=[1])[0] == Outcome.VERSION_MISMATCH
    assert table.lookup([0], 20, expected_versions=[2])[0] == Outcome.HIT


def test_admission_checks_and_ttl_clamp():
    table = _table(
        object_kind_bitmap=cache_object_bitmap(CacheObjectKind.PROMPT_SEGMENT),
        max_object_bytes=100,
        max_cache_entries=2,
        ttl_floor_ms=1000,
        ttl_ceiling_ms=5000,
        eviction="none",
    )
    result = table.install([1, 0, 2, 4, 5], 0, [10, 0, 10_000, 2000, 2000], [10, 101, 10, 10, 10])
    assert result.status.tolist() == [1, 1, 0, 0, 1]
    assert result.detail.tolist() == [
        DetailCode.KIND_NOT_NEGOTIATED,
        DetailCode.OBJECT_TOO_LARGE,
        DetailCode.NONE,
        DetailCode.NONE,
        DetailCode.ENTRY_LIMIT_REACHED,
    ]
    assert result.accepted_ttl_ms.tolist() == [1000, 1000, 5000, 2000, 2000]


def _put(table: LeaseTable, scalar: bool, obj: int, now: int, ttl: int, size: int, **kw):
    """One CACHE_PUT through the scalar call (the model's) or the batch one:
    (status, detail, expired, evicted)."""
    if scalar:
        ack = table.install_one(obj, now, ttl, size, **kw)
        return ack.status, ack.detail, ack.expired, ack.evicted
    if "version" in kw:  # (the batch call takes one per item)
        kw["versions"] = kw.pop("version")
    result = table.install([obj], now, ttl, size, **kw)
    return result.status[0], result.detail[0], result.expired, result.evicted


@pytest.mark.parametrize("scalar", [False, True])
def test_memory_limit_reclaims_expired_before_evicting(scalar):
    table = _table(capacity_bytes=300, eviction="lru")
    table.install([0, 1, 2], 0, [100, 1000, 1000], 100)
    # object 0 expired at 100: reclaimed, not evicted
    assert _put(table, scalar, 3, 500, 1000, 100) == (CacheAckStatus.ACCEPTED, 0, [0], [])
    assert _put(table, scalar, 4, 600, 1000, 100) == (CacheAckStatus.ACCEPTED, 0, [], [1])
    status, detail, _, evicted = _put(table, scalar, 5, 700, 1000, 400)
    assert (status, detail, evicted) == (
        CacheAckStatus.REJECTED,
        DetailCode.INSUFFICIENT_MEMORY,
        [],
    )
    assert table.held_bytes == 300


@pytest.mark.parametrize("scalar", [False, True])
def test_a_put_over_a_lease_it_cannot_renew_ends_it_first(scalar):
    """A PUT of an object whose lease ran out (not yet reclaimed), or is of another version,
    ends that lease first and counts its room: then it reclaims what else ran out, evicts,
    or is refused, as a fresh grant would."""
    table = _table(capacity_bytes=300, eviction="lru")
    table.install([0, 1, 2], 0, [100, 1000, 100], 100, versions=1)
    # 0 ran out at 100: a new grant, that fits in its own room
    assert _put(table, scalar, 0, 200, 1000, 100, version=1) == (
        CacheAckStatus.ACCEPTED,
        DetailCode.NONE,
        [0],
        [],
    )
    # 0 again, a new version and larger: replaced; 2 ran out (reclaimed), 1 evicted
    status, detail, expired, evicted = _put(table, scalar, 0, 300, 1000, 300, version=2)
    assert (status, detail, expired, evicted) == (CacheAckStatus.REPLACED, 0, [2], [1])
    assert table.lease(0).object_version == 2 and table.held_bytes == 300
    # a version larger than the memory: refused, its old lease ended all the same
    status, detail, expired, evicted = _put(table, scalar, 0, 400, 1000, 400, version=3)
    assert (status, detail, expired, evicted) == (
        CacheAckStatus.REJECTED,
        DetailCode.INSUFFICIENT_MEMORY,
        [],
        [],
    )
    assert table.lease(0) is None and table.held_bytes == 0


@pytest.mark.parametrize("vectorised", [False, True])
def test_invalidating_a_lease_that_ran_out_counts_as_its_expiry(vectorised, monkeypatch):
    """One object's change (the model's, one at a time) and a batch follow the same rule: a
    live lease ends invalidated and is reported; one that ran out ends expired, unreported."""
    if vectorised:
        monkeypatch.setattr("nnrpsim.engine.table.SMALL_BATCH", -1)
    table = _table()
    table.install([0, 1], 0, [100, 1000], 64)
    assert table.invalidate_objects(np.array([0]), 500) == []
    assert table.invalidate_objects(np.array([1]), 500) == [1]
    assert table.invalidate_objects(np.array([2]), 500) == []  # no lease: nothing to end
    assert [table.resolve(obj, 600) for obj in (0, 1)] == [
        Outcome.LEASE_EXPIRED,
        Outcome.CACHE_MISS,
    ]
    assert table.held_objects == 0


def test_a_lease_run_out_is_told_from_one_freed_and_from_one_live():
    """What the model's server asks before a content change frees a lease: whether it has run
    out and still sits in its slot (the change frees it unreported; the server then announces
    it as the sweep would)."""
    table = _table()
    table.install([0, 1], 0, [100, 1000], 64)
    assert [table.run_out(obj, 99) for obj in (0, 1, 2)] == [False, False, False]
    assert [table.run_out(obj, 100) for obj in (0, 1, 2)] == [True, False, False]
    table.expire(100)
    assert [table.run_out(obj, 100) for obj in (0, 1, 2)] == [False, False, False]


@pytest.mark.parametrize("scalar", [False, True])
def test_a_refused_put_still_reclaims_what_expired(scalar):
    """Nothing may be evicted (pinned), so the PUT is refused; the expired lease the server
    looked at on the way is freed all the same, and the ACK reports it."""
    table = _table(capacity_bytes=300, eviction="lru")
    table.install([0, 1, 2], 0, [100, 1000, 1000], 100, pinned=True)
    got = _put(table, scalar, 3, 500, 1000, 200)
    assert got == (CacheAckStatus.REJECTED, DetailCode.INSUFFICIENT_MEMORY, [0], [])
    assert table.held_bytes == 200 and table.lease(0) is None


@pytest.mark.parametrize("scalar", [False, True])
def test_a_full_entry_table_refuses_with_its_own_detail(scalar):
    table = _table(max_cache_entries=2, eviction="lru")
    table.install([0, 1], 0, 1000, 10, pinned=True)
    assert _put(table, scalar, 2, 10, 1000, 10) == (
        CacheAckStatus.REJECTED,
        DetailCode.ENTRY_LIMIT_REACHED,
        [],
        [],
    )
    assert _put(table, scalar, 2, 1000, 1000, 10) == (  # both expired: reclaimed
        CacheAckStatus.ACCEPTED,
        DetailCode.NONE,
        [0, 1],
        [],
    )


def test_pinned_objects_are_never_evicted():
    table = _table(capacity_bytes=200, eviction="lru")
    table.install([0], 0, 10_000, 100, pinned=True)
    table.install([1], 1, 10_000, 100)
    assert table.install([2], 2, 10_000, 100).evicted == [1]
    assert table.evict(150) is None  # only the pinned one and object 2 remain: not enough
    assert table.lease(0) is not None


def test_release_owner_cascades_but_spares_siblings():
    table = _table()
    table.register_session(10, connection_id=1)
    table.register_session(11, connection_id=1)
    table.register_session(20, connection_id=2)
    table.register_operation(100, session_id=10)
    owners = [(0, 1), (1, 10), (2, 100), (1, 11), (1, 20), (0, 2)]
    for obj, (scope, owner) in enumerate(owners):
        table.install([obj], 0, 10_000, 8, owner_scope=OwnerScope(scope), owner_id=owner)
    assert sorted(table.release_owner(OwnerScope.SESSION, 10)) == [1, 2]
    assert sorted(table.release_owner(OwnerScope.CONNECTION, 1)) == [0, 3]
    assert table.held_objects == 2  # session 20 and connection 2 are untouched


@pytest.mark.parametrize("batch", [False, True])
def test_release_owner_ends_what_each_owner_holds_after_many_grants_and_reused_slots(batch):
    # Hundreds of grants to a few owners, leases ending in between so that slots pass from
    # owner to owner: a release ends exactly the leases the owner columns say it holds. The
    # busiest owner is granted more than twice the table's slots, or batches: it is scanned
    # for; the others are looked up among the slots they were granted.
    n = 40
    ids = np.arange(n, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(n, dtype=np.uint32), ids, ids, np.full(n, 7))
    table = LeaseTable(catalog, CacheLimits(), initial_capacity=4)
    owners = [(OwnerScope.SESSION, 1), (OwnerScope.SESSION, 2), (OwnerScope.CONNECTION, 9)]
    rng = np.random.default_rng(7)
    for now in range(2000):
        obj = int(rng.integers(n))
        scope, owner = owners[int(rng.choice(3, p=[0.8, 0.1, 0.1]))]
        if rng.random() < 0.5:
            table.invalidate_objects(np.array([obj]), now)
        elif batch:  # more than SMALL_BATCH objects at once: the vectorised grant
            objects = (obj + np.arange(SMALL_BATCH + 1)) % n
            table.install(objects, now, 10**6, 8, owner_scope=scope, owner_id=owner)
        else:
            table.install_one(obj, now, 10**6, 8, owner_scope=scope, owner_id=owner)
    for scope, owner in reversed(owners):  # the busiest last: it holds most of the reused slots
        mine = table.occupied & (table.owner_scope == scope) & (table.owner_id == owner)
        expected = table.object_id[np.flatnonzero(mine)].tolist()  # in slot order
        held = table.held_objects
        assert table.release_owner(scope, owner) == expected
        assert table.held_objects == held - len(expected)
        assert table.release_owner(scope, owner) == []


def test_dependencies_missing_invalidated_or_wrong_version():
    table = _table()
    table.install([0, 1], 0, 10_000, 8, versions=[1, 3])
    table.add_dependency(1, depends_on=0, required_version=1)
    assert table.lookup([1], 10)[0] == Outcome.HIT
    table.install([0], 20, 10_000, 8, versions=2)
    assert table.lookup([1], 30)[0] == Outcome.DEPENDENCY_INVALID
    table.install([0], 40, 10_000, 8, versions=1)
    assert table.lookup([1], 50)[0] == Outcome.HIT
    assert sorted(table.invalidate_objects([0], 60, cascade=True)) == [0, 1]
    assert table.lookup([0, 1], 70).tolist() == [Outcome.CACHE_MISS, Outcome.CACHE_MISS]


def test_set_dependencies_replaces_what_an_object_was_made_from():
    # A re-install declares the source version its new content was made from: the old
    # requirement stops counting, and a source it no longer names no longer cascades to it.
    table = _table()
    table.install([0, 1, 2], 0, 10_000, 8, versions=[2, 1, 1])
    table.set_dependencies(1, [(0, 1)])
    assert table.resolve(1, 10) == Outcome.DEPENDENCY_INVALID  # source 0 is at version 2
    table.set_dependencies(1, [(0, 2)])
    assert table.resolve(1, 20) == Outcome.HIT
    table.set_dependencies(1, [(2, 1)])
    assert table.invalidate_objects([0], 30, cascade=True) == [0]
    assert table.resolve(1, 40) == Outcome.HIT
    assert table.invalidate_objects([2], 50, cascade=True) == [2, 1]
    table.install([3], 60, 10_000, 8)
    table.set_dependencies(3, [(2, 1)])
    table.set_dependencies(3, [])
    assert table.resolve(3, 70) == Outcome.HIT  # no dependency left: its source's absence is moot


def test_invalidate_scopes_match_by_identity():
    table = _table()
    table.install(np.arange(8), 0, 10_000, 8)
    assert table.invalidate(InvalidateScope.OBJECT_KEY, 1, 1, 1, 10) == [1]
    assert sorted(table.invalidate(InvalidateScope.OBJECT_KIND, 1, 3, 7)) == [4, 5]
    assert sorted(table.invalidate(InvalidateScope.NAMESPACE, 1, 2)) == [2, 3]
    assert sorted(table.invalidate(InvalidateScope.WHOLE_SESSION, 1)) == [0, 6, 7]


def test_invalidate_by_key_ends_the_key_in_every_kind_and_nothing_else():
    # Objects 0, 2 and 3 share a key in kinds 1, 5 and 7; object 1 has another key, object 4
    # the same key in another namespace. The table finds them through the catalog.
    catalog = ObjectCatalog.from_arrays(
        np.array([1, 1, 1, 1, 2]),
        np.array([9, 9, 9, 9, 9], dtype=np.uint64),
        np.array([4, 5, 4, 4, 4], dtype=np.uint64),
        np.array([1, 1, 5, 7, 1]),
    )
    table = LeaseTable(catalog, CacheLimits())
    table.install([3, 1, 0, 4], 0, 10_000, 8)  # 2 holds no lease
    assert table.invalidate(InvalidateScope.OBJECT_KEY, 1, 1, 9, 4) == [0, 3]
    assert [table.lease(obj) is None for obj in range(5)] == [True, False, True, True, False]
    assert table.invalidate(InvalidateScope.OBJECT_KEY, 2, 1, 9, 4) == []
    assert table.invalidate(InvalidateScope.OBJECT_KEY, 2, 7, 7, 7) == []  # a key never seen
    with pytest.raises(WireError, match="cache_key_lo"):
        table.invalidate(InvalidateScope.NAMESPACE, 1, 2, 0, 5)


def test_accounting_live_held_by_namespace_tenant_and_kind():
    table = _table()
    assert table.bytes_by("kind") == {}
    table.install([0, 2, 4, 3], 0, [100, 1000, 1000, 1000], [10, 20, 30, 40], tenant=[5, 5, 6, 6])
    assert table.bytes_by("kind") == {7: 60, 8: 40}  # objects 0, 2, 4 are kind 7, object 3 kind 8
    assert table.bytes_by("kind", 100) == {7: 50, 8: 40}
    assert table.invalidate_objects([3], 30) == [3]  # then the rest as before
    assert table.live_bytes(50) == 60 and table.live_bytes(100) == 50
    assert table.live_objects(50) == 3 and table.live_objects(100) == 2
    assert table.held_bytes == 60  # the expired lease is held until a sweep
    assert table.bytes_by("namespace", 100) == {2: 20, 3: 30}
    assert table.bytes_by("tenant") == {5: 30, 6: 30}
    assert table.expire(100).tolist() == [0] and table.held_bytes == 50


def test_batch_install_equals_one_by_one():
    """A batch larger than SMALL_BATCH takes the vectorised path, each single PUT the scalar
    one: renewals, fresh grants and a refused object come out the same either way."""
    n = 2 * SMALL_BATCH + 3
    ids = np.arange(n, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(n), ids, ids, np.full(n, 7))
    batch, single = (
        LeaseTable(catalog, CacheLimits(capacity_bytes=100_000, max_object_bytes=n - 5))
        for _ in range(2)
    )
    for table in (batch, single):
        table.install(np.arange(0, n, 3), 2, 500, 10)  # every third object is renewed below
    objs, ttls = np.arange(n), np.arange(n) * 100 + 50
    sizes = np.arange(n) + 1  # the last few are too big
    got = batch.install(objs, 7, ttls, sizes)
    for i in objs:
        one = single.install_one(int(i), 7, int(ttls[i]), int(sizes[i]))
        row = (got.status[i], got.detail[i], got.accepted_ttl_ms[i], got.lease_id[i])
        assert (one.status, one.detail, one.accepted_ttl_ms, one.lease_id) == row
    assert DetailCode.RENEWED in got.detail and DetailCode.OBJECT_TOO_LARGE in got.detail
    for obj in objs:
        assert batch.lease(obj) == single.lease(obj)
        if batch.lease(obj) is not None:  # recency and age in item order too (LRU/FIFO ties)
            b, o = batch.slot_of[obj], single.slot_of[obj]
            assert batch.installed_seq[b] == single.installed_seq[o]
            assert batch.last_access_seq[b] == single.last_access_seq[o]


def test_a_batch_that_repeats_an_object_equals_one_by_one():
    """A repeat leaves the vectorised path: its second PUT renews what its first granted."""
    n = 2 * SMALL_BATCH
    ids = np.arange(n, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(n), ids, ids, np.full(n, 7))
    batch, single = (LeaseTable(catalog, CacheLimits()) for _ in range(2))
    objs = np.concatenate([np.arange(n), [5, 5]])
    ttls = np.arange(len(objs)) * 10 + 100
    got = batch.install(objs, 3, ttls, 8)
    for i, obj in enumerate(objs.tolist()):
        one = single.install_one(obj, 3, int(ttls[i]), 8)
        assert (one.status, one.detail, one.lease_id) == (
            got.status[i],
            got.detail[i],
            got.lease_id[i],
        )
    assert got.detail[-2:].tolist() == [DetailCode.RENEWED] * 2
    assert batch.lease(5) == single.lease(5) and batch.lease(5).ttl_ms == ttls[-1]


def test_slots_are_reused_and_capacity_grows():
    table = _table(initial_capacity=2)
    table.install(np.arange(8), 0, 10, 1)
    assert table.capacity >= 8
    capacity = table.capacity
    table.expire(10)
    table.install(np.arange(8), 20, 10, 1)
    assert table.capacity == capacity and table.bytes_per_slot <= 96


def test_scalar_paths_follow_the_table_when_it_reallocates():
    # The scalar calls read and write through memoryviews of the columns: after the slots grow
    # (installs beyond the capacity) or the catalog does (objects interned after the table was
    # made), they must see the new arrays, not the old ones.
    table = _table(initial_capacity=2)
    first = table.capacity
    new = [
        table.catalog.intern(CacheIdentity(4, key, 0, CacheObjectKind.TOOL_SCHEMA))
        for key in range(first)
    ]
    assert table.resolve(new[0], 0) == Outcome.CACHE_MISS  # the per-object columns grow here
    objects = list(range(8)) + new
    for obj in objects:
        assert table.install_one(obj, 0, 100, 1).status == CacheAckStatus.ACCEPTED
    assert table.capacity > first
    assert [table.resolve(obj, 50) for obj in objects] == [Outcome.HIT] * len(objects)
    assert table.hits[table.slot_of[objects]].tolist() == [1] * len(objects)
    assert table.install_one(new[-1], 80, 30, 1).detail == DetailCode.RENEWED
    assert table.lease(new[-1]).granted_at_ms == 80
    assert table.resolve(new[-1], 110) == Outcome.LEASE_EXPIRED


def test_unknown_policy_raises_and_catalog_interns_once():
    with pytest.raises(ValueError, match="unknown eviction policy 'mru'"):
        _table(eviction="mru")
    catalog = ObjectCatalog()
    identity = CacheIdentity(1, 2, 3, CacheObjectKind.TOOL_SCHEMA)
    assert catalog.intern(identity) == catalog.intern(identity) == 0
    assert catalog.identity(0) == identity


def test_a_catalog_from_arrays_knows_its_rows_when_first_asked():
    # from_arrays leaves its index of identities to the first look-up: one then finds the
    # rows' own ids, and extending keeps them
    catalog = ObjectCatalog.from_arrays(
        np.array([1, 1, 2]), np.array([5, 6, 5], dtype=np.uint64), np.zeros(3), [7, 7, 8]
    )
    assert catalog.intern(CacheIdentity(2, 5, 0, CacheObjectKind(8))) == 2
    new = CacheIdentity(1, 5, 0, CacheObjectKind(8))  # row 0's key in another kind
    assert catalog.extend([1, 1], np.array([6, 5], np.uint64), [0, 0], [7, 8]).tolist() == [1, 3]
    assert len(catalog) == 4 and catalog.identity(3) == new
    assert catalog.ids_of_key(1, 5, 0) == [0, 3]
    with pytest.raises(WireError, match="object_kind"):
        ObjectCatalog.from_arrays([1], [1], [1], [10])
    with pytest.raises(ValueError, match="equal lengths"):
        ObjectCatalog.from_arrays([1, 2], [1], [1], [1])


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    refs=st.lists(st.integers(0, 7), min_size=1, max_size=40),
    now=st.integers(0, 3000),
    with_versions=st.booleans(),
)
def test_scalar_and_vectorised_lookups_agree(monkeypatch_module, seed, refs, now, with_versions):
    rng = np.random.default_rng(seed)

    def build() -> LeaseTable:
        table = _table()
        local = np.random.default_rng(seed)
        table.install(
            np.arange(8), 0, local.integers(0, 3000, 8), 8, versions=local.integers(1, 3, 8)
        )
        table.add_dependency(1, depends_on=2, required_version=1)
        table.expire(int(local.integers(0, 1500)))
        return table

    expected = rng.integers(1, 3, len(refs)) if with_versions else None
    scalar, vectorised = build(), build()
    got_scalar = scalar.lookup(np.array(refs), now, expected)
    with monkeypatch_module.context() as patch:
        patch.setattr("nnrpsim.engine.table.SMALL_BATCH", -1)
        got_vectorised = vectorised.lookup(np.array(refs), now, expected)
    assert got_scalar.tolist() == got_vectorised.tolist()
    assert (scalar.last_access_seq == vectorised.last_access_seq).all()
    assert (scalar.hits == vectorised.hits).all()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@settings(max_examples=60, deadline=None)
@given(
    leases=st.lists(
        st.tuples(st.integers(0, U64_MAX), st.integers(0, U32_MAX), st.booleans()),
        min_size=1,
        max_size=30,
    ),
    now=st.integers(0, U64_MAX),
)
def test_expire_frees_exactly_the_leases_run_out_and_keeps_the_next_expiry(leases, now):
    """Against arbitrary-precision sums: ``expire(now)`` frees the leases whose saturated
    expiry is at or before ``now`` (a grant near the u64 ceiling saturates, live until
    ``U64_MAX``), never a slot freed earlier (an invalidated lease's, whose lease had not run
    out), and no later expire frees anything before the earliest expiry left."""
    ids = np.arange(len(leases), dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(len(leases)), ids, ids, np.full(len(leases), 7))
    table = LeaseTable(catalog, CacheLimits(), initial_capacity=4)  # (it grows: slots are reused)
    for obj, (granted, ttl, _) in enumerate(leases):
        table.install_one(obj, granted, ttl, 8)
    ended = [obj for obj, (*_, invalidated) in enumerate(leases) if invalidated]
    table.invalidate_objects(np.array(ended, dtype=np.int64), 0)
    expiry = {
        obj: min(granted + ttl, U64_MAX)
        for obj, (granted, ttl, invalidated) in enumerate(leases)
        if not invalidated
    }
    assert sorted(table.expire(now).tolist()) == sorted(
        obj for obj, t in expiry.items() if t <= now
    )
    left = [t for t in expiry.values() if t > now]
    assert table.held_objects == len(left)
    if left:  # just before the earliest expiry left nothing goes; at it, that lease does
        assert table.expire(min(left) - 1).tolist() == []
        assert sorted(table.expire(min(left)).tolist()) == sorted(
            obj for obj, t in expiry.items() if t == min(left)
        )


def test_each_outcome_is_its_cache_error_codes_low_bits():
    """What a server answers a reference with: the spec's code, 0x0003_0000 plus the outcome."""
    for outcome in Outcome:
        if outcome is not Outcome.HIT:
            assert CacheErrorCode[outcome.name] == CacheErrorCode.NONE + outcome
