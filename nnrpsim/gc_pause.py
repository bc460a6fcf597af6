"""Hot loops that make no reference cycles run with the cyclic garbage collector paused.

Such a loop allocates millions of short-lived objects that reference counting frees at once,
yet each allocation counts toward the next collection, and every collection scans what the
process holds (modules, the plan, the records so far, a previous run's garbage). Pausing it
keeps that work out of the loop; what little cyclic garbage a loop leaves (a SimPy run leaves
a few hundred objects per hundred thousand frames) is collected after it. So too where a
study builds what it keeps for each of its points (a scenario, a run size): as that grows,
each collection scans all of it again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The cyclic GC off for the block, then back as it was (a caller who disabled it keeps it
    disabled)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
