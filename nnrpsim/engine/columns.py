"""A stream's columns as Python numbers for the one-reference-at-a-time replays."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

import numpy as np

CHUNK = 1 << 14
"""References a column is turned into Python numbers at a time (:func:`column_items`)."""


def column_items(column: np.ndarray) -> Iterator:
    """``column``'s values as Python numbers, a chunk at a time: a whole column's ``tolist``
    held 40 bytes a reference of a long stream for the whole replay (its peak), for no more
    speed."""
    return chain.from_iterable(
        column[start : start + CHUNK].tolist() for start in range(0, len(column), CHUNK)
    )
