"""Axes of the plots: the range a metric can take, and log axes that read in plain numbers in
the unit of their middle decade."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
from matplotlib.ticker import LogFormatter, NullFormatter

from ..metrics import ALL_INLINE_FRACTION
from ..plain_numbers import PLAIN_BELOW

AT_MOST_ONE = ("fraction of references", ALL_INLINE_FRACTION)
"""Units of metrics that cannot exceed one."""


def within_range(ax, unit: str) -> None:
    """The y axis within what the metric can be, whatever a band says (a t interval of two
    short replications reaches past both ends): rates and times never below zero, a fraction
    of references never above one (its interval in full is in summary.csv). The wire saving
    is below zero where caching cost more than it kept off the wire, so its axis goes as low
    as what is drawn, but never above one either. From zero, or the lowest drawn, the top
    keeps matplotlib's margin over all that is drawn, as a share of the new range (of the old
    one, from the lowest point, a hit rate of 0.93 touched the top)."""
    if unit.startswith("fraction") or unit == "ms":
        lowest, highest = 0.0, ax.dataLim.y1
        if unit == ALL_INLINE_FRACTION and np.isfinite(ax.dataLim.y0):
            lowest = min(ax.dataLim.y0, 0.0)
        if np.isfinite(highest) and highest > lowest:
            margin = ax.margins()[1] * (highest - lowest)
            ax.set_ylim(lowest - margin if lowest < 0 else 0.0, highest + margin)
        else:
            ax.set_ylim(bottom=lowest)
    if unit in AT_MOST_ONE and ax.get_ylim()[1] > 1.05:
        ax.set_ylim(top=1.05)


def log_scale(ax, which: str) -> None:
    """A log scale on the ``which`` ("x" or "y") axis whose ticks read as plain numbers,
    "0.2" and "100" (matplotlib writes 2 x 10^-1 and 10^2), labelled where matplotlib
    labels them."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_formatter(PlainLogFormatter())
    axis.set_minor_formatter(PlainLogFormatter())


class PlainLogFormatter(LogFormatter):
    """matplotlib's choice of the log ticks to label, each written as a plain number (its
    own writes "6e-01" below one), in full and with thousands separated as the legends write
    counts: "1,000,000" and "0.00002" (the shortest form, ``g``, wrote 1e+06 and 2e-05);
    beyond :func:`plain_number`'s range, with an exponent."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return plain_number(x) if super().__call__(x, pos) else ""


PLAIN_FROM = 1e-6
"""The least size of a number a tick writes in full: a swept rate of 1e-300 was three hundred
digits, run together along the axis (and from :data:`PLAIN_BELOW`, an exponent too)."""


def plain_number(x: float) -> str:
    """A tick's number in full, thousands separated: "1,000,000", "0.00002"; with an exponent
    beyond a millionth to a million billion ("1e-300")."""
    if x and not PLAIN_FROM <= abs(x) < PLAIN_BELOW:
        return f"{x:.6g}"
    # (six significant digits: a tick at 3 x 10^-5 is 3.0000000000000004e-05)
    return format(Decimal(f"{x:.6g}"), ",f")


MOST_SWEPT_TICKS = 8
"""The most swept values a log axis labels one by one: more read better at its decades."""
TICK_FIGURES = 4
"""The significant figures a swept value's tick may take (0.1667 min is 10 s unlabelled)."""
LEAST_TICK_GAP = 1 / 12
"""The least distance between two swept values' ticks, as a share of the decades from the
least swept value to the greatest."""


def swept_ticks(ax, which: str, places: np.ndarray) -> None:
    """Ticks of a log axis at the swept values themselves, ``places`` in the axis's unit
    (2, 5, 10, 20, 45 and 90 s, where the log scale labels 10 alone, and 32 to 512 MiB,
    where it labels 100), where they are at most :data:`MOST_SWEPT_TICKS`, each reads
    exactly in :data:`TICK_FIGURES` figures, and none crowds the next: else the log scale's
    own."""
    places = np.unique(places[places > 0])
    decades = np.diff(np.log10(places))
    if not 1 < len(places) <= MOST_SWEPT_TICKS or decades.min() < LEAST_TICK_GAP * decades.sum():
        return
    shown = np.array([float(f"{x:.{TICK_FIGURES}g}") for x in places])
    if not np.allclose(shown, places, rtol=1e-9, atol=0):
        return
    getattr(ax, f"set_{which}ticks")(places, [plain_number(x) for x in places])
    getattr(ax, f"{which}axis").set_minor_formatter(NullFormatter())


def geometric_middle(values: pd.Series) -> np.ndarray:
    """The geometric middle of positive ``values``, whose unit a log axis over them takes:
    that of its middle decade (256 B to 1 MiB in KiB, 0.25 to 1,024; in the largest's unit,
    MiB, its ticks read 0.001 to 1)."""
    return np.exp(np.log(values.dropna().to_numpy(dtype=float)).mean(keepdims=True))


def spans_decades(values: pd.Series) -> bool:
    """Positive values over a factor of 20 or more, which read best on a log axis."""
    return bool(len(values) and values.min() > 0 and values.max() / values.min() >= 20)


def geometric_steps(values: pd.Series) -> bool:
    """Three or more distinct positive values, each the one before times one factor (within
    5 %) of 1.5 or more: a sweep that doubles, which a log axis spaces evenly where a linear
    one crowds its first points at one end (32 to 512 MiB: three of five below 128)."""
    distinct = np.unique(values.to_numpy(dtype=float))
    if len(distinct) < 3 or distinct[0] <= 0:
        return False
    steps = distinct[1:] / distinct[:-1]
    return bool(steps.min() >= 1.5 and steps.max() <= 1.05 * steps.min())
