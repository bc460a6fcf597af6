"""A workload operation as the FRAME_SUBMITs NNRP/1 needs to carry it.

A FRAME_SUBMIT carries at most one object of each kind with an ``object_ref_mask`` slot (the
tensor profile's standard objects: spec section 13), inline or by reference. A request that
names two camera blocks is therefore two NNRP operations, each a frame of its own. The plan
splits such a request before anything runs, so both engines see the same frames: frame ``i``
carries the ``i``-th object of each slotted kind the request names, and the first also carries
every object of a kind without a slot. The frames keep the request's planned time; on the
DES they go out as the session's in-flight limit lets them.
"""

from __future__ import annotations

import numpy as np

from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.protocol import OBJECT_REF_SLOTS

from .config import KindMix

Operation = tuple[float, list[int]]

_SLOT_OF_KIND = np.full(256, -1, dtype=np.int8)
_SLOT_OF_KIND[[int(kind) for kind in OBJECT_REF_SLOTS]] = np.arange(len(OBJECT_REF_SLOTS))


def object_slots(kinds: np.ndarray) -> list[int] | None:
    """Per object, its kind's ``object_ref_mask`` bit (-1: none); None when no object has one,
    so that a workload without slotted kinds costs nothing more."""
    slots = _SLOT_OF_KIND[np.asarray(kinds, dtype=np.uint8)]
    return slots.tolist() if (slots >= 0).any() else None


def slot_frames(operations: list[Operation], slots: list[int]) -> list[Operation]:
    """``operations`` with each that names two or more objects of a slotted kind split into
    the frames that carry it, in order (``slots``: from :func:`object_slots`). Each object
    keeps its place among the objects of its frame; an operation of one frame is kept."""
    framed: list[Operation] = []
    for at, objects in operations:
        frames: list[list[int]] = [[]]
        taken: dict[int, int] = {}  # slot -> the frames that carry one of its kind so far
        for obj in objects:
            frame = 0
            if (slot := slots[obj]) >= 0:
                frame = taken.get(slot, 0)
                taken[slot] = frame + 1
                if frame == len(frames):
                    frames.append([])
            frames[frame].append(obj)
        if len(frames) == 1:
            framed.append((at, objects))
        else:
            framed.extend((at, frame) for frame in frames)
    return framed


def slot_counts(kinds: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The sum of ``weights`` (one an object of ``kinds``) over each slotted kind, bit 0 up."""
    slots = _SLOT_OF_KIND[np.asarray(kinds, dtype=np.uint8)]
    slotted = slots >= 0
    return np.bincount(
        slots[slotted], np.asarray(weights)[slotted], minlength=len(OBJECT_REF_SLOTS)
    )


def slot_shares(mix: KindMix) -> np.ndarray:
    """The share of each slotted kind in ``mix``, bit 0 up: of ``n`` objects spread by it,
    at most ``ceil(n x share)`` are of the kind (:func:`~.workload.spread_kinds`)."""
    total = sum(weight for _, weight in mix)
    shares = np.zeros(len(OBJECT_REF_SLOTS))
    for kind, weight in mix:
        if (slot := _SLOT_OF_KIND[int(kind)]) >= 0:
            shares[slot] += weight / total
    return shares


def stream_frames(stream: ReferenceStream) -> int:
    """The FRAME_SUBMITs the requests of ``stream`` take, as :func:`slot_frames` splits them:
    each a frame for every distinct object of the slotted kind it names most, one at least."""
    bounds = stream.operation_bounds()
    n_requests = len(bounds) - 1
    if stream.object_kind is None:
        return n_requests
    slots = _SLOT_OF_KIND[stream.object_kind[stream.object_id]]
    slotted = slots >= 0
    if not slotted.any():
        return n_requests
    request = np.repeat(np.arange(n_requests), np.diff(bounds))[slotted]
    named = np.unique(np.stack([request, slots[slotted], stream.object_id[slotted]]), axis=1)
    lanes, counts = np.unique(named[:2], axis=1, return_counts=True)
    most = np.ones(n_requests, dtype=np.int64)
    np.maximum.at(most, lanes[0], counts)
    return int(most.sum())
