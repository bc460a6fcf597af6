"""Operations that reference several objects of a kind with a FRAME_SUBMIT slot: NNRP/1
carries one object of each such kind a frame, inline or by reference (spec section 13), and
the model sends one frame an operation, so it leaves out the further frames such an
operation needs."""

from __future__ import annotations

import functools

import numpy as np

from ..engine.stream import ReferenceStream
from ..model.workload import spread_kinds
from ..protocol import OBJECT_REF_SLOTS, CacheObjectKind, frame_submit_bytes
from ..run_config import model_config
from ..scenario import Point, Scenario
from .wording import warnings_by_text

FRAME_BYTES = frame_submit_bytes((), 0)
"""A FRAME_SUBMIT's own bytes, whatever it carries: header, metadata and region prelude."""
SLOTTED = frozenset(int(kind) for kind in OBJECT_REF_SLOTS)


def slot_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose operations may reference
    two or more objects of one slotted kind."""
    found: list[tuple[str, int]] = []
    for point in points:
        most = most_per_operation(point.scenario)
        if over := {kind: n for kind, n in most.items() if n > 1}:
            *more, last = [f"{n} {kind}" for kind, n in sorted(over.items())]
            listed = f"{', '.join(more)} and {last}" if more else last
            found.append(
                (
                    f"an operation may reference up to {listed} objects, of kinds with one "
                    "object_ref_mask slot: NNRP/1 carries one of each such kind a FRAME_SUBMIT, "
                    "inline or by reference (spec section 13), and the model sends one frame "
                    f"an operation: wire_bytes leaves out the further frames ({FRAME_BYTES} "
                    "bytes each and more)",
                    point.index,
                )
            )
    return warnings_by_text(found, of_points)


def most_per_operation(scenario: Scenario) -> dict[str, int]:
    """The most distinct objects of each slotted kind one operation of ``scenario`` may
    reference (a kind none may is left out): a trace's, counted in the run's window; a
    synthetic workload's, as many as its draws may reach."""
    if (spec := scenario.workload.trace) is not None:
        from ..traces import load_trace  # (pandas: only where a trace is replayed)

        return _most_in_stream(load_trace(spec).before(int(scenario.study.duration)))
    workload = model_config(scenario).workload
    draws = []
    if workload.shared_objects_per_namespace:
        draws.append(
            (
                workload.shared_kinds,
                workload.shared_objects_per_namespace,
                workload.shared_refs_per_operation,
            )
        )
    if workload.private_objects_per_session:
        draws.append(
            (
                workload.private_kinds,
                workload.private_objects_per_session,
                workload.private_refs_per_operation,
            )
        )
    most: dict[str, int] = {}
    for mix, n_objects, refs in draws:
        if not refs or SLOTTED.isdisjoint(code for code, _ in mix):
            continue
        for code, count in _slotted_counts(mix, n_objects).items():
            name = _name(code)
            most[name] = most.get(name, 0) + min(refs, count)
    return most


@functools.lru_cache(maxsize=256)
def _slotted_counts(mix: tuple[tuple[int, float], ...], n_objects: int) -> dict[int, int]:
    """How many of ``n_objects`` spread over ``mix`` are of each slotted kind."""
    codes, counts = np.unique(spread_kinds(mix, n_objects), return_counts=True)
    return {int(c): int(n) for c, n in zip(codes, counts, strict=True) if int(c) in SLOTTED}


def _most_in_stream(stream: ReferenceStream) -> dict[str, int]:
    """Per slotted kind, the most distinct objects of it one operation of ``stream`` names."""
    if stream.object_kind is None or stream.operation is None:
        return {}  # (prompt segments; or each reference a frame of its own)
    kinds = stream.object_kind[stream.object_id].astype(np.int64)
    slotted = np.isin(kinds, list(SLOTTED))
    if not slotted.any():
        return {}
    pairs = np.unique(
        np.stack([stream.operation[slotted], kinds[slotted], stream.object_id[slotted]]), axis=1
    )
    groups, counts = np.unique(pairs[:2], axis=1, return_counts=True)
    most: dict[str, int] = {}
    for code, count in zip(groups[1].tolist(), counts.tolist(), strict=True):
        most[_name(code)] = max(most.get(_name(code), 0), count)
    return most


def _name(code: int) -> str:
    return CacheObjectKind(code).name.lower()
