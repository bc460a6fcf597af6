"""A trace's plan (:func:`stream_plan`): one session over the stream, an operation per
request, and the objects it references expected to be reused, each held as one int."""

from __future__ import annotations

from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.model.workload import stream_plan


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
