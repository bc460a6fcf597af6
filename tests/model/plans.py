"""Hand-made workload plans: one session on one host, its operations and objects spelled out."""

from __future__ import annotations

import numpy as np

from nnrpsim.engine import ObjectCatalog
from nnrpsim.model import SessionPlan, WorkloadPlan
from nnrpsim.protocol import CacheObjectKind


def one_session(
    operations: list[tuple[float, list[int]]],
    sizes: np.ndarray | list[int],
    expected_reuse: list[float],
    end_ms: float,
) -> WorkloadPlan:
    """Objects 0..n-1 (prompt segments of ``sizes``, each expected to be reused as given, which
    decides what the policy caches), referenced by ``operations`` (planned time, objects) of one
    session that lasts until ``end_ms``."""
    n = len(sizes)
    ids = np.arange(n, dtype=np.uint64)
    catalog = ObjectCatalog.from_arrays(
        np.ones(n), ids, ids, np.full(n, CacheObjectKind.PROMPT_SEGMENT)
    )
    session = SessionPlan(1, 0, 0.0, end_ms, end_ms, operations, dict(enumerate(expected_reuse)))
    return WorkloadPlan(
        catalog, np.asarray(sizes), [session], np.zeros(0), np.zeros(0, np.int64), np.zeros(n)
    )


def one_object_each(planned_ms, size: int | np.ndarray, end_ms: float) -> WorkloadPlan:
    """Operation i, at ``planned_ms[i]``, references object i alone (reused once)."""
    n = len(planned_ms)
    return one_session(
        [(float(t), [i]) for i, t in enumerate(planned_ms)],
        np.broadcast_to(size, n).copy(),
        [1.0] * n,
        end_ms,
    )
