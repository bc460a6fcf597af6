"""A trace's plan (:func:`stream_plan`): one session over the stream, an operation per
request, and the objects it references expected to be reused, each held as one int; and the
vector engine's stream of a plan (:func:`plan_stream`), made without holding its steps."""

from __future__ import annotations

import numpy as np

from nnrpsim.engine import columns
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.model import ModelConfig, PolicyConfig
from nnrpsim.model.workload import WorkloadPlan, stream_plan
from nnrpsim.vector_run import plan_stream, vector_run
from tests.conftest import traced_peak


def test_the_session_expects_reuse_of_the_objects_referenced_by_the_operations_ints():
    """An entry (and an int) for every id below the largest, the many a trace's hashes skip
    and one only invalidated included, held 32 bytes and more apiece that nothing looked up."""
    stream = ReferenceStream(
        [5, 5, 5, 9, 12, 12],
        [700, 3, 700, 3, 500, 700],
        [10, 20, 10, 20, 30, 10],
        invalidation_time_ms=[7],
        invalidation_object_id=[900],
        operation=[0, 0, 0, 1, 2, 2],
    )
    (session,) = stream_plan(stream).sessions
    assert session.operations == [(5.0, [700, 3]), (9.0, [3]), (12.0, [500, 700])]
    assert list(session.expected_reuse) == [3, 500, 700]
    assert set(session.expected_reuse.values()) == {float("inf")}
    held = {id(obj) for _, objects in session.operations for obj in objects}
    assert {id(obj) for obj in session.expected_reuse} == held
    assert stream_plan(stream).sizes[[3, 500, 700, 900]].tolist() == [20, 30, 10, 0]


def _trace_plan(n: int, n_objects: int) -> WorkloadPlan:
    """A trace's plan: ``n`` references to ``n_objects`` objects of 3-4 KB."""
    rng = np.random.default_rng(1)
    times = np.sort(rng.integers(0, 10 * n, n))
    objects = rng.integers(0, n_objects, n)
    sizes = objects % 1000 + 3000
    return stream_plan(ReferenceStream(times, objects, sizes, start_ms=0, end_ms=11 * n))


def test_the_vector_engines_stream_of_a_plan_lets_its_steps_go_as_it_is_made():
    """Its arrays on the way, some twenty a reference, were held until the stream was made:
    181 bytes a reference at the peak for these 100,000 (the trace's plan, all cached), now
    140."""
    n = 100_000
    plan = _trace_plan(n, n // 20)
    config = ModelConfig(duration_ms=11.0 * n, policy=PolicyConfig(name="always"))
    stream, replayed = plan_stream(plan, config)
    assert len(stream) == n and replayed.all()
    assert traced_peak(lambda: plan_stream(plan, config)) < 160 * n


def test_a_vector_run_replays_its_stream_without_holding_the_whole_beside_it(monkeypatch):
    """The stream the hosts' references make was held through the replay, beside the copy
    of those they cache that the replay reads: 240 bytes a reference at these 30,000's peak,
    then 208 (a vector run of the Mooncake trace 16 times over: 641 MiB, then 573); 231 since
    each lease's span keeps its object and when its table freed it, for the memory held
    (2026-12-07), where holding the stream again would make it about 263; 163 since the
    ordered replay keeps no expiry heap where no shortfall reads it (the same day: 232 with
    it)."""
    monkeypatch.setattr(columns, "CHUNK", 512)  # (the default's chunks would hide the test's)
    n = 30_000
    plan = _trace_plan(n, 100)
    config = ModelConfig(duration_ms=11.0 * n, policy=PolicyConfig(name="always", ttl_hint_ms=500))
    assert traced_peak(lambda: vector_run(config, plan)) < 180 * n
