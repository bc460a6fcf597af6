"""Every policy takes victims from the least keys kept between evictions (EvictionFront): the
same victims, in the same order, as sorting the whole table at each eviction, also where keys
fall (a short TTL after long ones, a large new object under ``size``) and where batches change
many at once."""

from __future__ import annotations

from bisect import insort

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog, eviction
from nnrpsim.engine.eviction import FRONT_SIZE, victim_order
from nnrpsim.engine.table import SMALL_BATCH

N_OBJECTS = 4 * FRONT_SIZE


def _sorted_victims(table: LeaseTable, policy: str, need: int, entries: int) -> list[int] | None:
    """The objects a sort of the whole table picks: the fewest, in order, that free enough."""
    order = victim_order(table, np.flatnonzero(table.occupied & ~table.pinned), policy)
    freed = np.add.accumulate(table.size[order], dtype=np.int64)
    count = max(int(freed.searchsorted(need)) + 1, entries)
    return None if count > len(order) else table.object_id[order[:count]].tolist()


@pytest.mark.parametrize("policy", ["lru", "fifo", "ttl", "size"])
def test_victims_follow_the_policy_across_touches_renewals_pins_and_grants(policy, monkeypatch):
    came_in = []  # keys that fell to the front's least after its sort (ttl and size only)
    monkeypatch.setattr(
        eviction, "insort", lambda entries, entry: (came_in.append(entry), insort(entries, entry))
    )
    rng = np.random.default_rng(11)
    ids = np.arange(N_OBJECTS, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(N_OBJECTS), ids, ids, np.full(N_OBJECTS, 7))
    table = LeaseTable(catalog, CacheLimits(eviction=policy), initial_capacity=8)
    now, evictions = 0, 0
    for _ in range(4000):
        now += int(rng.integers(0, 3))
        obj, action = int(rng.integers(N_OBJECTS)), rng.random()
        if action < 0.4:  # a PUT: a grant, or a renewal (which may pin or unpin)
            pinned = bool(rng.random() < 0.05)
            # TTLs of three magnitudes, sizes of two: under ttl and size a key may fall
            ttl = 10 ** int(rng.integers(4, 7))
            size = int(rng.integers(1, 100)) * (10 if rng.random() < 0.1 else 1)
            table.install_one(obj, now, ttl, size, pinned=pinned)
        elif action < 0.75:  # a reference: touches its lease under LRU, a hit under size
            table.resolve(obj, now)
        elif action < 0.78:  # a batch: installs or lookups of many at once
            objects = rng.choice(N_OBJECTS, SMALL_BATCH + 4, replace=False)
            if rng.random() < 0.5:
                table.install(objects, now, 10 ** int(rng.integers(4, 7)), 50)
            else:
                table.lookup(objects, now)
        else:
            need, entries = int(rng.integers(0, 300)), int(rng.integers(0, 4))
            want = (
                [] if need <= 0 and entries <= 0 else _sorted_victims(table, policy, need, entries)
            )
            assert table.evict(need, entries_needed=entries) == want
            evictions += want is not None and len(want) > 0
    assert evictions > 200  # (enough evictions to run through the front many times)
    # keys that fall come in (often, by this mix); LRU's and FIFO's never do, nor are reported
    assert len(came_in) > 100 if policy in eviction.WATCHED else not came_in
