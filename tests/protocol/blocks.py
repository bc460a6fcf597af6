"""Random valid blocks of any layout, drawn from a seeded generator (test helper)."""

from __future__ import annotations

import numpy as np

from nnrpsim.protocol import CacheObjectKind, InvalidateScope, Layout


def random_valid(layout: Layout, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` records with random bits in every free field and every rule of ``layout`` obeyed."""
    raw = rng.integers(0, 256, size=n * layout.size, dtype=np.uint8)
    records = np.frombuffer(raw.tobytes(), dtype=layout.dtype).copy()
    for name, value in layout.fixed.items():
        records[name] = value
    for name, enum in layout.choices.items():
        records[name] = rng.choice([int(v) for v in enum], size=n)
    for name, mask in layout.masks.items():
        records[name] &= records.dtype[name].type(mask)
    if "invalidate_scope" in layout.names:
        _obey_scope_table(records, rng)
    if "miss_reason" in layout.names:
        records["miss_reason"] = np.where(
            rng.random(n) < 0.5, rng.integers(0, 8, n), rng.integers(0x8000, 0x10000, n)
        )
    return records


def _obey_scope_table(records: np.ndarray, rng: np.random.Generator) -> None:
    scope = records["invalidate_scope"]
    whole = scope == InvalidateScope.WHOLE_SESSION
    records["cache_namespace"][whole] = 0
    coarse = whole | (scope == InvalidateScope.NAMESPACE)
    records["cache_key_hi"][coarse] = 0
    by_kind = scope == InvalidateScope.OBJECT_KIND
    records["cache_key_hi"][by_kind] = rng.integers(1, max(CacheObjectKind) + 1, by_kind.sum())
    records["cache_key_lo"][coarse | by_kind] = 0
