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

from nnrpsim.protocol import OBJECT_REF_SLOTS

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
