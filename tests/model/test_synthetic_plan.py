"""The synthetic plan's objects and content changes: each identity where the sessions'
references and the protocol's keys expect it, and each object's changes a Poisson process
over its life."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.engine import ObjectCatalog
from nnrpsim.model import WorkloadConfig
from nnrpsim.model.workload import _drawn, popularity, synthetic_plan
from nnrpsim.namespaces import PRIVATE_NAMESPACE_BASE
from nnrpsim.protocol import CacheObjectKind

PROMPT, TOOL = CacheObjectKind.PROMPT_SEGMENT, CacheObjectKind.TOOL_SCHEMA


@pytest.mark.parametrize(
    ("shared", "private", "hosts"), [(50, 4, 1), (7, 3, 3), (0, 5, 2), (20, 0, 2)]
)
def test_object_ids_are_those_interning_each_session_in_turn_gives(shared, private, hosts):
    """The catalog is made at once; interning the shared objects, then each session's private
    ones in turn, must give the same ids: the references and dependencies use them."""
    config = WorkloadConfig(
        shared_objects_per_namespace=shared,
        private_objects_per_session=private,
        private_kinds=((PROMPT, 1.0), (TOOL, 2.0)),
        private_dependency_share=0.5 if shared else 0.0,
    )
    plan = synthetic_plan(config, hosts, 120_000.0, np.random.SeedSequence(3))
    catalog = plan.catalog
    n_shared = config.namespaces * shared
    interned = ObjectCatalog.from_arrays(
        catalog.namespace[:n_shared],
        catalog.key_hi[:n_shared],
        catalog.key_lo[:n_shared],
        catalog.kind[:n_shared],
    )
    for session in plan.sessions:
        ids = interned.extend(
            np.full(private, PRIVATE_NAMESPACE_BASE + session.host),
            np.full(private, session.session_id, dtype=np.uint64),
            np.arange(private, dtype=np.uint64),
            catalog.kind[n_shared : n_shared + private],
        )
        assert set(session.expected_reuse) == set(ids.tolist())
        for _, objects in session.operations:
            own = [o for o in objects if o >= n_shared]
            assert set(own) <= set(ids.tolist())
    for column in ("namespace", "key_hi", "key_lo", "kind"):
        assert np.array_equal(getattr(catalog, column), getattr(interned, column)), column
    assert len(catalog) == len(plan.sizes) == n_shared + private * len(plan.sessions)
    identities = {catalog.identity(i) for i in range(len(catalog))}
    assert len(identities) == len(catalog)  # every object its own identity
    assert set(plan.depends_on) <= set(range(n_shared, len(catalog)))
    assert set(plan.depends_on.values()) <= set(range(0, n_shared, max(shared, 1)))


@pytest.mark.parametrize(("shared", "private"), [(300, 6), (0, 5), (20, 0)])
def test_the_operations_hold_one_int_object_for_each_object(shared, private):
    """An operation's object ids are the plan's one int an object, where each reference's
    own int (tolist()'s) held 32 bytes apiece for the whole run."""
    config = WorkloadConfig(
        shared_objects_per_namespace=shared, private_objects_per_session=private
    )
    plan = synthetic_plan(config, 2, 60_000.0, np.random.SeedSequence(5))
    ids = [obj for session in plan.sessions for _, objects in session.operations for obj in objects]
    assert len(ids) > 2 * len(set(ids)) > 0
    assert all(type(obj) is int for obj in ids)
    assert len({id(obj) for obj in ids}) == len(set(ids))


def test_each_objects_changes_arrive_at_its_rate_over_its_life_in_time_order():
    """A shared object's changes come over the whole run, a private one's while its session
    runs (before or after, no lease of it can exist), each a Poisson process at the rate."""
    rate, duration_ms = 0.02, 600_000.0
    config = WorkloadConfig(content_change_rate_per_s=rate, shared_objects_per_namespace=250)
    plan = synthetic_plan(config, 2, duration_ms, np.random.SeedSequence(5))
    times, objects = plan.change_times_ms, plan.change_objects
    assert objects.dtype == np.int64 and times.dtype == np.float64
    assert np.array_equal(times, np.floor(times))  # on the protocol's millisecond clock
    order = np.lexsort((objects, times))
    assert np.array_equal(order, np.arange(len(times)))  # by time, then object
    assert times.min() >= 0 and times.max() < duration_ms
    n_shared = config.namespaces * config.shared_objects_per_namespace
    per_session = config.private_objects_per_session
    session_of = (objects[objects >= n_shared] - n_shared) // per_session
    starts = np.array([session.start_ms for session in plan.sessions])
    ends = np.array([session.end_ms for session in plan.sessions])
    private_times = times[objects >= n_shared]
    assert np.all(private_times >= np.floor(starts[session_of]))
    assert np.all(private_times < ends[session_of])
    counts = np.bincount(objects, minlength=len(plan.sizes))
    shared_expected = rate * duration_ms / 1000.0  # 12 a object
    assert counts[:n_shared].mean() == pytest.approx(shared_expected, rel=0.05)
    assert counts[:n_shared].var() == pytest.approx(shared_expected, rel=0.25)  # Poisson
    lives_s = np.repeat(ends - starts, per_session) / 1000.0
    private_counts = counts[n_shared:]
    assert private_counts.sum() == pytest.approx(rate * lives_s.sum(), rel=0.05)
    # Poisson with a mean of its own for each: the variance of count - mean is the mean's sum
    residual = private_counts - rate * lives_s
    assert (residual**2).sum() == pytest.approx(rate * lives_s.sum(), rel=0.1)


def test_no_changes_without_a_rate():
    plan = synthetic_plan(WorkloadConfig(), 1, 60_000.0, np.random.SeedSequence(5))
    assert len(plan.change_times_ms) == len(plan.change_objects) == 0
    assert plan.change_objects.dtype == np.int64


def _chosen(rows: np.ndarray, n: int) -> np.ndarray:
    """Which of ``n`` objects each row (an operation's draws) holds."""
    chosen = np.zeros((len(rows), n), dtype=bool)
    chosen[np.arange(len(rows))[:, None], rows] = True
    return chosen


@pytest.mark.parametrize("p", [popularity(5, 0.9), None], ids=["zipf", "uniform"])
def test_more_draws_than_objects_give_the_objects_drawn_the_same_law(p):
    """Beyond as many draws as objects an operation draws each object's count (a
    multinomial) instead of each draw: its row is as wide as the objects, not the draws, and
    which objects come keeps its law, each alone (1 - (1 - p)^k, the closed form of
    workload_means) and together (how many distinct, against draws one by one)."""
    n, k, n_ops = 5, 8, 100_000
    rows = _drawn(np.random.default_rng(3), n_ops, k, n, p)
    assert rows.shape == (n_ops, n)
    chosen = _chosen(rows, n)
    law = np.full(n, 1 / n) if p is None else p
    assert chosen.mean(axis=0) == pytest.approx(1 - (1 - law) ** k, abs=0.006)
    one_by_one = np.random.default_rng(4).choice(n, size=(n_ops, k), p=law)
    distinct = np.bincount(chosen.sum(axis=1), minlength=n + 1) / n_ops
    expected = np.bincount(_chosen(one_by_one, n).sum(axis=1), minlength=n + 1) / n_ops
    assert distinct == pytest.approx(expected, abs=0.006)


def test_draws_beyond_any_array_come_to_every_object():
    """99999999999999999999 draws an operation (no array holds them, nor an int64) draw
    every object, all but surely."""
    rows = _drawn(np.random.default_rng(1), 3, 10**20, 4, popularity(4, 0.9))
    assert _chosen(rows, 4).all()


def test_as_many_draws_as_objects_or_fewer_draw_one_by_one_as_before():
    """Up to as many draws as objects the draws are those of the plans before (the same
    random numbers, so the same runs)."""
    p = popularity(5, 0.9)
    rows = _drawn(np.random.default_rng(2), 10, 5, 5, p)
    assert (rows == np.random.default_rng(2).choice(5, size=(10, 5), p=p)).all()
    uniform = _drawn(np.random.default_rng(2), 10, 3, 4)
    assert (uniform == np.random.default_rng(2).integers(0, 4, (10, 3))).all()


def test_a_skew_past_the_largest_float_puts_every_reference_on_the_first_rank():
    """Ranks' powers past the largest float are weights of 0, without numpy's overflow
    warning (``validate`` printed it, and the suite makes it an error)."""
    assert popularity(4, 1e300).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert popularity(3, 0.0).tolist() == pytest.approx([1 / 3] * 3)
