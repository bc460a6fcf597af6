"""A server size limit that most of the workload's objects exceed is named before the run and
after it: `max_object_bytes: 512` (a unit left out) inlined every body, and `gpu_memory: 4KiB`
refused room to nine references in ten, each with a hit rate near 0 and no word."""

from __future__ import annotations

import numpy as np
import pytest

import nnrpsim
from nnrpsim.checks.caching import size_limit_advice
from nnrpsim.model import WorkloadConfig
from nnrpsim.model.policy_reach import references_larger_share
from nnrpsim.model.workload import synthetic_plan
from nnrpsim.protocol import CacheObjectKind
from tests.conftest import MOONCAKE
from tests.study.advice import advice, run_numbers

STUDY = {
    "study": {"name": "limits", "seed": 6, "replications": 1, "duration": "60s", "warmup": "20s"},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "30s"}},
    "host_policy": {"name": "always", "renew_margin": 0},
}
CEILING = (
    "topology.max_object_bytes is 512 bytes: 99.97 % of the references are to larger objects, "
    "which the hosts inline without a CACHE_PUT"
)
BUDGET = (
    "topology.gpu_memory is 4 KiB: 92 % of the references are to objects larger than a "
    "server's whole budget, for which it refuses room"
)


def test_a_ceiling_below_most_objects_is_named_and_inlines_them():
    ceiling = "topology.max_object_bytes=512"
    assert advice(size_limit_advice, STUDY, ceiling) == [f"warning: all points: {CEILING}"]
    assert f"warning: all points: {CEILING}" in nnrpsim.validate(STUDY, [ceiling]).warnings
    (hit_rate, inlined, installs), said = run_numbers(
        STUDY, ["hit_rate", "inline_rate_policy", "installs"], ceiling
    )
    assert f"all points: {CEILING}" in said
    assert hit_rate < 0.001 and inlined > 0.999 and installs <= 1
    # a never baseline beside it: the caching point is named
    swept = advice(
        size_limit_advice, STUDY, ceiling, "sweep={grid: {host_policy.name: [never, always]}}"
    )
    assert swept == [f"warning: point 1: {CEILING}"]


def test_a_budget_below_most_objects_is_named_and_refuses_them():
    budget = "topology.gpu_memory=4KiB"
    assert advice(size_limit_advice, STUDY, budget) == [f"warning: all points: {BUDGET}"]
    (hit_rate, refused), said = run_numbers(STUDY, ["hit_rate", "refused_puts"], budget)
    assert f"all points: {BUDGET}" in said
    assert hit_rate < 0.1 and refused > 0
    # a budget below the ceiling's objects only: the ceiling is named, not the budget
    both = advice(size_limit_advice, STUDY, budget, "topology.max_object_bytes=512")
    assert both == [f"warning: all points: {CEILING}"]


def test_a_traces_objects_are_counted():
    """The Mooncake trace's blocks are 160 MiB, but the last of a prompt's: those of its
    first minute, the run's."""
    trace = f"workload={{trace: {{path: {MOONCAKE}}}}}"
    told = advice(size_limit_advice, STUDY, trace, "topology.gpu_memory=100MiB")
    assert told == [
        "warning: all points: topology.gpu_memory is 100 MiB: 97 % of the references are to "
        "objects larger than a server's whole budget, for which it refuses room"
    ]


@pytest.mark.parametrize(
    "overrides",
    [
        (),  # 8 GiB, 1 GiB objects at most
        ("topology.max_object_bytes=16KiB",),  # the median: not most
        ("topology.gpu_memory=4KiB", "host_policy.name=never"),
        ("sweep={grid: {topology.gpu_memory: [4KiB, 1GiB]}}",),  # the grid's point
        ("topology.gpu_memory=4KiB", "sweep={grid: {workload.objects.size.median: [1KiB, 1MiB]}}"),
        ("topology.max_object_bytes=512", "topology.object_kinds=[camera_block]"),  # named alone
    ],
)
def test_not_named_within_the_limits_or_where_the_grid_sweeps_them(overrides):
    assert advice(size_limit_advice, STUDY, *overrides) == []


@pytest.mark.parametrize("size", [512, 4_096, 16_384, 65_536, 1 << 20])
def test_the_closed_form_share_larger_is_what_a_drawn_plan_references(size):
    """Kinds of different sizes, an operation's distinct objects counted once."""
    prompt, tool = CacheObjectKind.PROMPT_SEGMENT, CacheObjectKind.TOOL_SCHEMA
    config = WorkloadConfig(
        session_rate_per_s=1.0,
        operation_rate_per_s=2.0,
        shared_refs_per_operation=3,
        private_refs_per_operation=3,
        shared_kinds=((prompt, 1.0), (tool, 1.0)),
        kind_sizes=((tool, 2_048, 0.5),),
    )
    plan = synthetic_plan(config, 1, 3_600_000.0, np.random.SeedSequence(8))
    referenced = np.array(
        [o for s in plan.sessions for _, objects in s.operations for o in objects]
    )
    drawn = float((plan.sizes[referenced] > size).mean())
    assert references_larger_share(config, size) == pytest.approx(drawn, abs=0.02)
