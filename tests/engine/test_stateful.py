"""Random operation sequences through the lease table and the reference model: same outcomes."""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import nnrpsim.engine.table as table_module
from nnrpsim.engine import CacheLimits, InstallAck, LeaseTable, ObjectCatalog
from nnrpsim.protocol import InvalidateScope, OwnerScope, cache_object_bitmap
from tests.engine.reference_model import ReferenceModel

DEFAULT_SMALL_BATCH = table_module.SMALL_BATCH
N_OBJECTS = 10
IDENTITIES = [(i % 3, i % 4, i, 1 + i % 9) for i in range(N_OBJECTS)]  # ns, hi, lo, kind
OWNERS = [(0, 1), (0, 2), (1, 10), (1, 11), (1, 20), (2, 100), (2, 101), (2, 200)]

objects = st.integers(0, N_OBJECTS - 1)


class LeaseTableVersusModel(RuleBasedStateMachine):
    small_batch = table_module.SMALL_BATCH  # scalar paths for small batches, as in the model

    def teardown(self):
        table_module.SMALL_BATCH = DEFAULT_SMALL_BATCH

    @initialize(
        policy=st.sampled_from(["lru", "fifo", "ttl", "size", "none"]),
        capacity=st.sampled_from([None, 600, 1500]),
        entries=st.sampled_from([0, 4]),
        renewal=st.sampled_from(["touch", "extend"]),
    )
    def setup(self, policy, capacity, entries, renewal):
        table_module.SMALL_BATCH = self.small_batch
        limits = CacheLimits(
            object_kind_bitmap=cache_object_bitmap(*range(1, 9)),  # kind 9 not negotiated
            max_object_bytes=500,
            max_cache_entries=entries,
            capacity_bytes=capacity,
            ttl_floor_ms=5,
            ttl_ceiling_ms=300,
            eviction=policy,
            renewal=renewal,
        )
        ns, hi, lo, kind = (np.array(col) for col in zip(*IDENTITIES, strict=True))
        self.table = LeaseTable(
            ObjectCatalog.from_arrays(ns, hi.astype(np.uint64), lo.astype(np.uint64), kind),
            limits,
            initial_capacity=2,
        )
        self.model = ReferenceModel(IDENTITIES, limits)
        for table_or_model in (self.table, self.model):
            self._register(table_or_model)
        self.now = 0

    @staticmethod
    def _register(target):
        sessions = {10: 1, 11: 1, 20: 2}
        operations = {100: 10, 101: 11, 200: 20}
        if isinstance(target, LeaseTable):
            for s, c in sessions.items():
                target.register_session(s, c)
            for o, s in operations.items():
                target.register_operation(o, s)
        else:
            target.sessions.update(sessions)
            target.operations.update(operations)

    @rule(dt=st.integers(0, 120))
    def advance(self, dt):
        self.now += dt

    @rule(
        obj=objects,
        ttl=st.integers(0, 400),
        size=st.integers(0, 700),
        version=st.one_of(st.none(), st.integers(1, 3)),
        pinned=st.booleans(),
        owner=st.sampled_from(OWNERS),
        scalar=st.booleans(),
    )
    def install(self, obj, ttl, size, version, pinned, owner, scalar):
        """A PUT through the batch API or the scalar one (the model's hot path): same rules."""
        owner_args = {"owner_scope": OwnerScope(owner[0]), "owner_id": owner[1]}
        if scalar:
            got = self.table.install_one(
                obj, self.now, ttl, size, version=version, pinned=pinned, **owner_args
            )
        else:
            batch = self.table.install(
                np.array([obj]), self.now, ttl, size, versions=version, pinned=pinned, **owner_args
            )
            got = InstallAck(
                int(batch.status[0]),
                int(batch.detail[0]),
                int(batch.accepted_ttl_ms[0]),
                int(batch.lease_id[0]),
                batch.expired,
                batch.evicted,
                batch.replaced,
            )
        want = self.model.install(obj, self.now, ttl, size, version, pinned, owner)
        assert (got.status, got.detail) == (want["status"], want["detail"])
        assert (got.accepted_ttl_ms, got.lease_id) == (want["ttl"], want["lease_id"])
        assert sorted(got.expired) == sorted(want["expired"])
        assert sorted(got.evicted) == sorted(want["evicted"])
        assert got.replaced == want["replaced"]

    @rule(
        refs=st.lists(objects, min_size=1, max_size=6), versions=st.booleans(), scalar=st.booleans()
    )
    def lookup(self, refs, versions, scalar):
        """References through ``lookup`` or one by one through ``resolve``: same outcomes."""
        expected = [1 + (r % 2) for r in refs] if versions else [None] * len(refs)
        if scalar:
            got = [self.table.resolve(r, self.now, v) for r, v in zip(refs, expected, strict=True)]
        else:
            got = self.table.lookup(
                np.array(refs), self.now, np.array(expected) if versions else None
            ).tolist()
        want = [self.model.lookup(r, self.now, v) for r, v in zip(refs, expected, strict=True)]
        assert got == [int(w) for w in want]

    @rule()
    def expire(self):
        assert sorted(self.table.expire(self.now).tolist()) == self.model.expire(self.now)

    @rule(scope=st.sampled_from(list(InvalidateScope)), obj=objects)
    def invalidate(self, scope, obj):
        ns, hi, lo, kind = IDENTITIES[obj]
        selector = {
            InvalidateScope.WHOLE_SESSION: (0, 0, 0),
            InvalidateScope.NAMESPACE: (ns, 0, 0),
            InvalidateScope.OBJECT_KIND: (ns, kind, 0),
            InvalidateScope.OBJECT_KEY: (ns, hi, lo),
        }[scope]
        got = self.table.invalidate(scope, self.now, *selector)
        assert sorted(got) == self.model.invalidate(scope, self.now, *selector)

    @rule(owner=st.sampled_from(OWNERS))
    def release(self, owner):
        got = self.table.release_owner(OwnerScope(owner[0]), owner[1])
        assert sorted(got) == self.model.release_owner(OwnerScope(owner[0]), owner[1])

    @rule(
        need=st.integers(0, 800),
        entries=st.integers(0, 3),
        policy=st.sampled_from(["lru", "fifo", "ttl", "size", "none"]),
    )
    def evict(self, need, entries, policy):
        got = self.table.evict(need, policy, entries_needed=entries)
        want = self.model.evict(need, policy, entries)
        assert (None if got is None else sorted(got)) == (None if want is None else sorted(want))

    @invariant()
    def same_state(self):
        if not hasattr(self, "table"):
            return
        assert (self.table.held_bytes, self.table.held_objects) == self.model.held()
        by_kind = [0] * table_module.KIND_CODES
        for obj, lease in self.model.leases.items():
            by_kind[IDENTITIES[obj][3]] += lease.size
        assert self.table.held_kind_bytes == by_kind
        for obj in range(N_OBJECTS):
            lease, model = self.table.lease(obj), self.model.leases.get(obj)
            assert (lease is None) == (model is None)
            if lease is not None:
                assert (
                    lease.object_version,
                    lease.lease_id,
                    lease.granted_at_ms,
                    lease.ttl_ms,
                ) == (
                    model.version,
                    model.lease_id,
                    model.granted,
                    model.ttl,
                )
                assert (int(lease.owner_scope), lease.owner_id) == model.owner
                assert int(self.table.hits[self.table.slot_of[obj]]) == model.hits


LeaseTableVersusModel.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None
)
TestLeaseTableVersusModel = LeaseTableVersusModel.TestCase


class LeaseTableVectorisedVersusModel(LeaseTableVersusModel):
    """The same sequences with every batch on the vectorised paths."""

    small_batch = -1


LeaseTableVectorisedVersusModel.TestCase.settings = LeaseTableVersusModel.TestCase.settings
TestLeaseTableVectorisedVersusModel = LeaseTableVectorisedVersusModel.TestCase
