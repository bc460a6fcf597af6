"""Trace-level replay: whole TTL sweeps over a reference stream at once.

:func:`replay` picks the path (:mod:`.sweep`): without a capacity, closed sweeps of the whole
grid (:mod:`.ttl_grid`); with one, the lease table's rules one reference at a time, on an
ordered map for LRU and FIFO (:mod:`.ordered`) or on the table itself (:mod:`.on_table`), the
hosts' inline turns, back-offs and dependencies alike on both (:mod:`.host_rules`), and so the
frame under way, decided as it begins and resolved after its PUTs (:mod:`.frame`).
"""

from .modes import MODES, renewal_margin
from .on_table import replay_on_table
from .result import COUNTS, ReplayResult
from .sweep import replay, replay_after

__all__ = [
    "COUNTS",
    "MODES",
    "ReplayResult",
    "renewal_margin",
    "replay",
    "replay_after",
    "replay_on_table",
]
