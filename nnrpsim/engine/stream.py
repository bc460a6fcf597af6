"""A reference stream: the input of every replay, as plain arrays."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import count

import numpy as np

from .columns import column_items


@dataclass(frozen=True)
class ReferenceStream:
    """References ``(time_ms, object_id, size)`` in time order, plus optional invalidations.

    An invalidation at time ``v`` removes the object's copy before any reference at the same
    millisecond. ``start_ms``/``end_ms`` bound the window for time averages (default: from the
    first event to one past the last). ``operation`` groups references into the requests that
    made them: consecutive references with the same value are one operation (one FRAME_SUBMIT
    on the model) and share a time; without it every reference is its own. The replay itself
    looks at references one by one. ``object_kind`` gives each object id its kind code (1-9),
    for what a server negotiates and for metrics by kind; without it every object is a prompt
    segment. ``along`` marks the references a host makes only to have a lease in place: the
    source of an object its operation references, installed along with it when no lease of
    the source is live (spec section 11: a reference needs its sources valid). Such a
    reference installs when it finds no live lease, and otherwise does nothing: it neither
    renews nor counts as a reference, a hit or a miss. It is made for the reference right
    after it (at the same millisecond), and skipped when that one's body goes inline without
    a PUT (its turn after an invalidation, the replay's ``inline_after_invalidate``, or its
    host's back-off after a refusal). When the server refuses it, the reference it is made
    for is put all the same if it needs a lease, and its body goes inline. ``ttl_scale``
    gives each reference the TTL its CACHE_PUT asks for, as a multiple of the replay's
    (rounded to whole ms): its
    session's own TTL, when sessions ask for different ones; without it every reference asks
    for the replay's. ``invalidation_kept`` marks the changes that leave the server's lease in
    place, unannounced: an object made from a changed one, without the server's cascade. Its
    host, which sees the change, puts a new version at the next reference, replacing the old
    lease; until then that lease holds its bytes, and may still end (and be announced).
    ``invalidation_through`` gives, for a change that follows another object's (the server's
    cascade from the object it was made from), that object; -1 for the others. The server's
    cascade runs through the source's lease: when the source's change at the same millisecond
    finds no live lease of it, the change is kept instead. ``frame_source`` gives, for a
    reference to an object made from another that the same operation references too, that
    source; -1 for the others. While the source's body goes inline in that operation (its
    inline turn, a back-off, or a refused PUT), so does the reference's: it could not resolve
    without it. ``invalidation_position`` places each invalidation among the references of its
    millisecond, for what happened within one: it comes just before the reference of that
    index (one past the last of its millisecond: after them all). Without it, each comes
    before them all. For the memory over time, an invalidation comes first in its millisecond
    (a content change): a sample there finds the lease it ended gone. ``invalidation_within``
    marks those that come later within it (a session's close, at the float time it ends): a
    sample there still counts the lease one ends. ``connection_owned`` gives each object id
    whether its host's connection owns its leases, not the session: a host sends an
    operation's PUTs in one burst per run of PUTs of one owner, and what a burst frees of an
    object it puts itself its server does not announce (:mod:`.replay.bursts`); without it,
    every object is its session's.
    """

    time_ms: np.ndarray
    object_id: np.ndarray
    size: np.ndarray
    invalidation_time_ms: np.ndarray | None = None
    invalidation_object_id: np.ndarray | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    operation: np.ndarray | None = None
    object_kind: np.ndarray | None = None
    along: np.ndarray | None = None
    ttl_scale: np.ndarray | None = None
    invalidation_kept: np.ndarray | None = None
    invalidation_through: np.ndarray | None = None
    frame_source: np.ndarray | None = None
    invalidation_position: np.ndarray | None = None
    invalidation_within: np.ndarray | None = None
    connection_owned: np.ndarray | None = None

    def __post_init__(self) -> None:
        self._check_references()
        self._check_invalidations()
        times = np.concatenate([self.time_ms, self.invalidation_time_ms])
        if self.start_ms is None:
            object.__setattr__(self, "start_ms", int(times.min()) if len(times) else 0)
        if self.end_ms is None:
            object.__setattr__(self, "end_ms", int(times.max()) + 1 if len(times) else 1)
        if self.end_ms <= self.start_ms:
            raise ValueError("end_ms must be after start_ms")
        if self.object_kind is not None:
            kinds = np.asarray(self.object_kind, dtype=np.int64)
            if len(kinds) < self.n_objects or (len(kinds) and (kinds.min() < 1 or kinds.max() > 9)):
                raise ValueError("object_kind must give every object id a kind code in 1..9")
            object.__setattr__(self, "object_kind", kinds.astype(np.uint8))
        if self.connection_owned is not None:
            owned = np.asarray(self.connection_owned)
            if owned.dtype != np.bool_ or owned.ndim != 1 or len(owned) < self.n_objects:
                raise ValueError("connection_owned must give every object id a boolean")
            object.__setattr__(self, "connection_owned", owned)

    def _check_references(self) -> None:
        """The references' columns as int64, in time order, and their optional columns, one
        item a reference."""
        for name in ("time_ms", "object_id", "size"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        if not len(self.time_ms) == len(self.object_id) == len(self.size):
            raise ValueError("time_ms, object_id and size must have equal lengths")
        if len(self.time_ms) and (np.diff(self.time_ms) < 0).any():
            raise ValueError("time_ms must be non-decreasing")
        if len(self.time_ms) and (self.time_ms.min() < 0 or self.object_id.min() < 0):
            raise ValueError("time_ms and object_id must be >= 0")
        if len(self.size) and self.size.min() < 0:
            raise ValueError("size must be >= 0")
        shape = self.time_ms.shape
        operation = _column(
            self.operation, np.int64, shape, "operation must have one value per reference"
        )
        if operation is not None:
            same = operation[1:] == operation[:-1]
            if (self.time_ms[1:][same] != self.time_ms[:-1][same]).any():
                raise ValueError("the references of one operation must share a time")
        object.__setattr__(self, "operation", operation)
        self._set_optional(REFERENCE_COLUMNS, "reference", shape, slice(None))

    def _check_invalidations(self) -> None:
        """The invalidations' columns as int64, sorted by time (and place within their
        millisecond, then object), their optional columns, one item an invalidation, with
        them."""
        inv_t, inv_o = self.invalidation_time_ms, self.invalidation_object_id
        if (inv_t is None) != (inv_o is None):
            raise ValueError(
                "give both invalidation_time_ms and invalidation_object_id, or neither"
            )
        inv_t = np.zeros(0, np.int64) if inv_t is None else np.asarray(inv_t, dtype=np.int64)
        inv_o = np.zeros(0, np.int64) if inv_o is None else np.asarray(inv_o, dtype=np.int64)
        if len(inv_t) != len(inv_o):
            raise ValueError("invalidation arrays must have equal lengths")
        if len(inv_t) and (inv_t.min() < 0 or inv_o.min() < 0):
            raise ValueError("invalidation times and objects must be >= 0")
        order = np.lexsort((inv_o, inv_t))
        if self.invalidation_position is not None:
            position = np.asarray(self.invalidation_position, dtype=np.int64)
            first = np.searchsorted(self.time_ms, inv_t, side="left")
            past = np.searchsorted(self.time_ms, inv_t, side="right")
            if position.shape != inv_t.shape or ((position < first) | (position > past)).any():
                raise ValueError(
                    "invalidation_position must place each invalidation among the references "
                    "of its millisecond"
                )
            order = np.lexsort((inv_o, position, inv_t))
            object.__setattr__(self, "invalidation_position", position[order])
        object.__setattr__(self, "invalidation_time_ms", inv_t[order])
        object.__setattr__(self, "invalidation_object_id", inv_o[order])
        self._set_optional(INVALIDATION_COLUMNS, "invalidation", inv_t.shape, order)

    def _set_optional(
        self,
        columns: tuple[OptionalColumn, ...],
        item: str,
        shape: tuple[int, ...],
        order: np.ndarray | slice,
    ) -> None:
        """Each of ``columns`` (given, or None) checked to hold one value an ``item`` (of
        ``shape``), and put in ``order``, the one its items are kept in."""
        for name, dtype, what, valid in columns:
            message = f"{name} must be one {what} per {item}"
            column = _column(getattr(self, name), dtype, shape, message, valid)
            object.__setattr__(self, name, _part(column, order))

    def __len__(self) -> int:
        return len(self.time_ms)

    def before(self, end_ms: int) -> ReferenceStream:
        """The references and invalidations before ``end_ms``: a run's window of a longer trace."""
        if end_ms >= self.end_ms:
            return self
        earlier = self.invalidation_time_ms < end_ms
        kept = self.references(self.time_ms < end_ms)
        return replace(
            kept,
            invalidation_time_ms=self.invalidation_time_ms[earlier],
            invalidation_object_id=self.invalidation_object_id[earlier],
            invalidation_kept=_part(self.invalidation_kept, earlier),
            invalidation_through=_part(self.invalidation_through, earlier),
            invalidation_position=_part(kept.invalidation_position, earlier),
            invalidation_within=_part(self.invalidation_within, earlier),
            end_ms=max(end_ms, self.start_ms + 1),
        )

    def first_references_ms(self, end_ms: float) -> np.ndarray:
        """Each object's first reference (``end_ms`` for one the stream never references):
        no lease of an object exists before it, so a change of its content there reaches
        nothing."""
        first = np.full(self.n_objects, float(end_ms))
        np.minimum.at(first, self.object_id, self.time_ms.astype(np.float64))
        return first

    def references(self, keep: np.ndarray) -> ReferenceStream:
        """The references ``keep`` (a boolean mask) marks, with every invalidation, each as
        placed among them before, and the same window."""
        position = None
        if self.invalidation_position is not None:  # the references kept before each
            kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
            position = kept_before[self.invalidation_position]
        return ReferenceStream(
            self.time_ms[keep],
            self.object_id[keep],
            self.size[keep],
            self.invalidation_time_ms,
            self.invalidation_object_id,
            self.start_ms,
            self.end_ms,
            _part(self.operation, keep),
            self.object_kind,
            _part(self.along, keep),
            _part(self.ttl_scale, keep),
            self.invalidation_kept,
            self.invalidation_through,
            _part(self.frame_source, keep),
            position,
            self.invalidation_within,
            self.connection_owned,
        )

    @property
    def n_objects(self) -> int:
        """One past the largest object id the stream names, referenced or invalidated: an
        object's references may all be filtered out while its invalidations remain."""
        named = (self.object_id.max(initial=-1), self.invalidation_object_id.max(initial=-1))
        return int(max(named)) + 1

    def object_id_list(self) -> list[int]:
        """``object_id`` as Python ints, one int object for each object: ``tolist()`` made
        one for each reference, 32 bytes apiece a long stream's replay held throughout. (Ids
        spread far beyond the references' count are interned by a sort instead.)"""
        ids = self.object_id
        if self.n_objects <= 2 * len(ids):
            return np.arange(self.n_objects).astype(object)[ids].tolist()
        distinct, inverse = np.unique(ids, return_inverse=True)
        return distinct.astype(object)[inverse].tolist()

    def operation_bounds(self) -> np.ndarray:
        """Where each operation's references start, and one past the last reference."""
        n = len(self.time_ms)
        if self.operation is None:
            return np.arange(n + 1)
        starts = np.flatnonzero(self.operation[1:] != self.operation[:-1]) + 1
        return np.concatenate([[0] if n else [], starts, [n]]).astype(np.int64)

    def operation_starts(self) -> Iterator[int]:
        """Where each operation after the first begins, in order: what a replay's frame steps
        through (without operations each reference is one, counted rather than listed)."""
        if self.operation is None:
            return count(1)
        return column_items(self.operation_bounds()[1:])

    @property
    def along_mask(self) -> np.ndarray:
        """``along``, or no reference marked."""
        return np.zeros(len(self), dtype=bool) if self.along is None else self.along

    def along_for(self) -> np.ndarray:
        """Per reference made along, the object of the reference it is made for: the next,
        at the same millisecond and not made along; -1 for the others."""
        along = self.along_mask
        follower = np.full(len(self), -1, dtype=np.int64)
        made = np.flatnonzero(along[:-1] & ~along[1:] & (self.time_ms[1:] == self.time_ms[:-1]))
        follower[made] = self.object_id[made + 1]
        return follower

    def ttls(self, ttl_ms: int) -> np.ndarray:
        """The TTL each reference asks for when the replay's is ``ttl_ms``."""
        if self.ttl_scale is None:
            return np.full(len(self), ttl_ms, dtype=np.int64)
        return np.rint(ttl_ms * self.ttl_scale).astype(np.int64)

    def invalidation_positions(self) -> np.ndarray:
        """``invalidation_position``, or each invalidation before every reference of its
        millisecond: the replay takes each before the reference of that index."""
        if self.invalidation_position is None:
            return np.searchsorted(self.time_ms, self.invalidation_time_ms, side="left")
        return self.invalidation_position

    @property
    def kept_mask(self) -> np.ndarray:
        """``invalidation_kept``, or none kept."""
        if self.invalidation_kept is None:
            return np.zeros(len(self.invalidation_time_ms), dtype=bool)
        return self.invalidation_kept

    @property
    def through(self) -> np.ndarray:
        """``invalidation_through``, or -1 for every invalidation."""
        if self.invalidation_through is None:
            return np.full(len(self.invalidation_time_ms), -1, dtype=np.int64)
        return self.invalidation_through

    @property
    def within_mask(self) -> np.ndarray:
        """``invalidation_within``, or every invalidation first in its millisecond."""
        if self.invalidation_within is None:
            return np.zeros(len(self.invalidation_time_ms), dtype=bool)
        return self.invalidation_within

    @property
    def counted(self) -> int:
        """The references that count: all but those made along."""
        return len(self) - int(self.along_mask.sum())

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms


OptionalColumn = tuple[str, type, str, Callable[[np.ndarray], bool] | None]
"""An optional column of a stream: its name, dtype, what each value is, and what else its
values must hold (None: nothing more)."""


def _ids_or_none(ids: np.ndarray) -> bool:
    """Object ids, or -1 for none."""
    return not len(ids) or int(ids.min()) >= -1


def _positive_factors(factors: np.ndarray) -> bool:
    """Finite factors above 0."""
    return bool((np.isfinite(factors) & (factors > 0)).all())


REFERENCE_COLUMNS: tuple[OptionalColumn, ...] = (
    ("along", np.bool_, "boolean", None),
    ("ttl_scale", np.float64, "finite factor > 0", _positive_factors),
    ("frame_source", np.int64, "object id (or -1)", _ids_or_none),
)
INVALIDATION_COLUMNS: tuple[OptionalColumn, ...] = (
    ("invalidation_kept", np.bool_, "boolean", None),
    ("invalidation_through", np.int64, "object id (or -1)", _ids_or_none),
    ("invalidation_within", np.bool_, "boolean", None),
)


def _column(
    value: object,
    dtype: type,
    shape: tuple[int, ...],
    message: str,
    valid: Callable[[np.ndarray], bool] | None = None,
) -> np.ndarray | None:
    """An optional column of a stream: None, or ``value`` as an array of ``dtype`` (booleans
    as given: a number is no flag) of ``shape`` that ``valid`` accepts; else a ValueError of
    ``message``."""
    if value is None:
        return None
    column = np.asarray(value) if dtype is np.bool_ else np.asarray(value, dtype=dtype)
    if column.dtype != dtype or column.shape != shape or (valid is not None and not valid(column)):
        raise ValueError(message)
    return column


def _part(column: np.ndarray | None, items: np.ndarray) -> np.ndarray | None:
    """The ``items`` (a mask or an order) of an optional column."""
    return None if column is None else column[items]
