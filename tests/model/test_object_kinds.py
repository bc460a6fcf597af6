"""Object kinds in the synthetic workload: spread by their shares over the popularity ranks,
sized by kind, and inlined on both engines where the server does not negotiate the kind."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nnrpsim
from nnrpsim.engine import CacheLimits
from nnrpsim.model import (
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    WorkloadConfig,
    simulate,
)
from nnrpsim.model.simulation import Simulation
from nnrpsim.model.workload import spread_kinds, synthetic_plan
from nnrpsim.protocol import CACHE_OBJECT_BITMAP_MASK, CacheObjectKind, cache_object_bitmap
from nnrpsim.scenario import parse_scenario

PROMPT, TOOL, TABLE = (
    CacheObjectKind.PROMPT_SEGMENT,
    CacheObjectKind.TOOL_SCHEMA,
    CacheObjectKind.TENSOR_SECTION_TABLE,
)


@given(
    weights=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=4),
    n=st.integers(0, 200),
)
def test_every_prefix_holds_each_kind_within_one_of_its_share(weights, n):
    """Tijdeman's bound: within 1 - 1 / (2 (k - 1)) for k kinds (one kind: exactly)."""
    kinds = range(1, len(weights) + 1)
    spread = spread_kinds(tuple(zip(kinds, weights, strict=True)), n)
    shares = np.array(weights) / sum(weights)
    bound = 1 - 1 / (2 * (len(weights) - 1)) if len(weights) > 1 else 0.0
    for kind, share in zip(kinds, shares, strict=True):
        taken = np.cumsum(spread == kind)
        assert np.all(np.abs(taken - np.arange(1, n + 1) * share) <= bound + 1e-9)


def test_a_mix_where_taking_the_kind_furthest_behind_misses_by_more_than_one():
    """Found by the property above: with these weights, the kind furthest behind at each
    position leaves the first kind 1.009 above its share after 28 positions."""
    weights = (4.0, 4.0, 0.5, 0.109375)
    spread = spread_kinds(tuple(zip(range(1, 5), weights, strict=True)), 28)
    taken = np.cumsum(spread == 1)
    assert np.abs(taken - np.arange(1, 29) * weights[0] / sum(weights)).max() <= 5 / 6


def test_equal_shares_alternate_from_the_first_listed():
    assert spread_kinds(((PROMPT, 1.0), (TOOL, 1.0)), 5).tolist() == [7, 8, 7, 8, 7]
    assert spread_kinds(((TOOL, 3.0), (PROMPT, 1.0)), 8).tolist() == [8, 8, 7, 8, 8, 8, 7, 8]


def test_kinds_and_sizes_of_a_plan():
    config = WorkloadConfig(
        shared_objects_per_namespace=40,
        private_objects_per_session=4,
        shared_kinds=((PROMPT, 1.0), (TOOL, 1.0)),
        private_kinds=((PROMPT, 1.0), (TABLE, 1.0)),
        kind_sizes=((TOOL, 2_048, 0.0), (TABLE, 1 << 20, 0.5)),
    )
    plan = synthetic_plan(config, 1, 600_000.0, np.random.SeedSequence(4))
    kinds, sizes = plan.catalog.kind, plan.sizes
    n_shared = config.namespaces * config.shared_objects_per_namespace
    assert kinds[:n_shared].tolist() == [PROMPT, TOOL] * (n_shared // 2)
    private = kinds[n_shared:].reshape(-1, 4)
    assert len(private) == len(plan.sessions) and (private == [PROMPT, TABLE, PROMPT, TABLE]).all()
    assert (sizes[kinds == TOOL] == 2_048).all()  # sigma 0: the median exactly
    for kind, median in ((PROMPT, config.object_size_median), (TABLE, 1 << 20)):
        of_kind = sizes[kinds == kind]
        assert np.median(of_kind) == pytest.approx(median, rel=0.15)
        assert of_kind.std() > 0


def test_the_des_inlines_exactly_the_references_to_a_kind_the_server_does_not_negotiate():
    limits = CacheLimits(capacity_bytes=None, object_kind_bitmap=cache_object_bitmap(PROMPT))
    config = ModelConfig(
        duration_ms=120_000.0,
        server=ServerConfig(limits=limits),
        policy=PolicyConfig(name="always"),
    )
    plan = synthetic_plan(config.workload, 1, config.duration_ms, np.random.SeedSequence(2))
    refs = simulate(config, 1, plan).references
    tool = plan.catalog.kind[refs["object"]] == TOOL
    assert 0.2 < tool.mean() < 0.8
    assert ((refs["outcome"] == RefOutcome.INLINED_BY_POLICY) == tool).all()


def test_the_server_negotiates_the_kinds_both_sides_cache():
    """SERVER_HELLO_ACK's kinds are the server's ceiling's within the client's bitmap (the
    simulated hosts offer every kind; a client that offers fewer gets no more)."""
    limits = CacheLimits(object_kind_bitmap=cache_object_bitmap(PROMPT, TOOL))
    (server,) = Simulation(ModelConfig(server=ServerConfig(limits=limits)), 0).servers
    offered = cache_object_bitmap(TOOL, TABLE)
    assert server.hello(offered) == replace(limits, object_kind_bitmap=cache_object_bitmap(TOOL))
    assert server.hello(CACHE_OBJECT_BITMAP_MASK) == limits


@pytest.mark.parametrize(
    "ceiling", [{"object_kinds": ["prompt_segment"]}, {"max_object_bytes": "16KiB"}]
)
def test_both_engines_inline_what_the_cache_ceiling_does_not_allow(ceiling):
    # Same seed, same plan: the vector engine inlines the objects the DES hosts inline, those
    # of a kind the server does not negotiate or larger than its max object bytes.
    rates = {}
    for engine in ("des", "vector"):
        raw = {
            "study": {"name": "kinds", "replications": 1, "duration": "2min"},
            "engine": engine,
            "topology": ceiling,
            "host_policy": {"name": "always"},
        }
        rates[engine] = nnrpsim.sweep(parse_scenario(raw)).iloc[0]["inline_rate_policy"]
    assert 0.1 < rates["des"] < 0.6
    assert rates["vector"] == pytest.approx(rates["des"], rel=1e-12)
