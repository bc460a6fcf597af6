"""LRU and FIFO take victims from the least keys kept between evictions (EvictionFront): the
same victims, in the same order, as sorting the whole table at each eviction."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog
from nnrpsim.engine.eviction import FRONT_SIZE, victim_order

N_OBJECTS = 4 * FRONT_SIZE


def _sorted_victims(table: LeaseTable, policy: str, need: int, entries: int) -> list[int] | None:
    """The objects a sort of the whole table picks: the fewest, in order, that free enough."""
    order = victim_order(table, np.flatnonzero(table.occupied & ~table.pinned), policy)
    freed = np.add.accumulate(table.size[order], dtype=np.int64)
    count = max(int(freed.searchsorted(need)) + 1, entries)
    return None if count > len(order) else table.object_id[order[:count]].tolist()


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_victims_follow_the_policy_across_touches_renewals_pins_and_grants(policy):
    rng = np.random.default_rng(11)
    ids = np.arange(N_OBJECTS, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(np.ones(N_OBJECTS), ids, ids, np.full(N_OBJECTS, 7))
    table = LeaseTable(catalog, CacheLimits(eviction=policy), initial_capacity=8)
    now, evictions = 0, 0
    for _ in range(3000):
        now += int(rng.integers(0, 3))
        obj, action = int(rng.integers(N_OBJECTS)), rng.random()
        if action < 0.45:  # a PUT: a grant, or a renewal (which may pin or unpin)
            pinned = bool(rng.random() < 0.05)
            table.install_one(obj, now, 10**6, int(rng.integers(1, 100)), pinned=pinned)
        elif action < 0.8:  # a reference: touches its lease under LRU
            table.resolve(obj, now)
        else:
            need, entries = int(rng.integers(0, 300)), int(rng.integers(0, 4))
            want = (
                [] if need <= 0 and entries <= 0 else _sorted_victims(table, policy, need, entries)
            )
            assert table.evict(need, entries_needed=entries) == want
            evictions += want is not None and len(want) > 0
    assert evictions > 200  # (enough evictions to run through the front many times)
