"""Dense object ids for canonical identities, assigned once, so the hot path indexes arrays."""

from __future__ import annotations

import numpy as np

from nnrpsim.protocol import CacheIdentity, CacheObjectKind, WireError


class ObjectCatalog:
    """Identity columns indexed by dense object id (0, 1, 2, ...).

    Workload generators and trace loaders intern every identity here once; the lease table and
    the replay then work on the integer ids. ``namespace``/``key_hi``/``key_lo``/``kind`` stay
    available for wire encoding and for namespace and kind invalidation; invalidation by key
    finds its objects here (``ids_of_key``).
    """

    def __init__(self) -> None:
        self.namespace = np.zeros(0, dtype=np.uint32)
        self.key_hi = np.zeros(0, dtype=np.uint64)
        self.key_lo = np.zeros(0, dtype=np.uint64)
        self.kind = np.zeros(0, dtype=np.uint8)
        # identity -> id; None until first asked for (see from_arrays)
        self._ids: dict[tuple[int, int, int, int], int] | None = {}

    def __len__(self) -> int:
        return len(self.namespace)

    @classmethod
    def from_arrays(
        cls, namespace: np.ndarray, key_hi: np.ndarray, key_lo: np.ndarray, kind: np.ndarray
    ) -> ObjectCatalog:
        """A catalog whose object ``i`` is row ``i``; rows must be distinct identities. Its
        index from identity to id is built when first asked for: a replay on the lease table
        never asks, and building it takes 0.16 s for 100,000 objects."""
        catalog = cls()
        namespace, key_hi, key_lo, kind = _identity_columns(namespace, key_hi, key_lo, kind)
        catalog.namespace, catalog.kind = namespace.astype(np.uint32), kind.astype(np.uint8)
        catalog.key_hi, catalog.key_lo = key_hi.astype(np.uint64), key_lo.astype(np.uint64)
        catalog._ids = None
        return catalog

    def _index(self) -> dict[tuple[int, int, int, int], int]:
        if self._ids is None:
            columns = (self.namespace, self.key_hi, self.key_lo, self.kind)
            identities = zip(*(c.tolist() for c in columns), strict=True)
            self._ids = dict(zip(identities, range(len(self)), strict=True))
        return self._ids

    def extend(
        self, namespace: np.ndarray, key_hi: np.ndarray, key_lo: np.ndarray, kind: np.ndarray
    ) -> np.ndarray:
        """Intern many identities; returns their dense ids (existing ones keep theirs)."""
        columns = _identity_columns(namespace, key_hi, key_lo, kind)
        index = self._index()
        ids = np.empty(len(columns[3]), dtype=np.int64)
        new_rows = []
        for row, key in enumerate(zip(*(c.tolist() for c in columns), strict=True)):
            found = index.get(key)
            if found is None:
                found = index[key] = len(self) + len(new_rows)
                new_rows.append(row)
            ids[row] = found
        rows = np.asarray(new_rows, dtype=np.int64)
        self.namespace = np.concatenate([self.namespace, columns[0][rows].astype(np.uint32)])
        self.key_hi = np.concatenate([self.key_hi, columns[1][rows].astype(np.uint64)])
        self.key_lo = np.concatenate([self.key_lo, columns[2][rows].astype(np.uint64)])
        self.kind = np.concatenate([self.kind, columns[3][rows].astype(np.uint8)])
        return ids

    def intern(self, identity: CacheIdentity) -> int:
        """The dense id of one identity, adding it if new."""
        (found,) = self.extend(
            [identity.cache_namespace],
            np.array([identity.cache_key_hi], dtype=np.uint64),
            np.array([identity.cache_key_lo], dtype=np.uint64),
            [int(identity.object_kind)],
        )
        return int(found)

    def ids_of_key(self, namespace: int, key_hi: int, key_lo: int) -> list[int]:
        """The ids of a cache key's objects, one per kind interned (CACHE_INVALIDATE by object
        key matches every kind)."""
        index = self._index()
        found = (index.get((namespace, key_hi, key_lo, int(kind))) for kind in CacheObjectKind)
        return [i for i in found if i is not None]

    def identity(self, object_id: int) -> CacheIdentity:
        return CacheIdentity(
            int(self.namespace[object_id]),
            int(self.key_hi[object_id]),
            int(self.key_lo[object_id]),
            CacheObjectKind(int(self.kind[object_id])),
        )


def _identity_columns(
    namespace: np.ndarray, key_hi: np.ndarray, key_lo: np.ndarray, kind: np.ndarray
) -> list[np.ndarray]:
    """The four identity columns as arrays, checked: equal lengths, kinds 1-9."""
    columns = [np.asarray(c) for c in (namespace, key_hi, key_lo, kind)]
    if len({len(c) for c in columns}) != 1:
        raise ValueError("identity columns must have equal lengths")
    kinds = columns[3]
    if len(kinds) and (kinds.min() < 1 or kinds.max() > max(CacheObjectKind)):
        raise WireError("object_kind", "cache object kinds must be 1-9")
    return columns
