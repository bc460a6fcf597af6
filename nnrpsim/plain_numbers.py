"""Numbers as printed lines write them: thousands separated, until they are too long to read.
A light module (no pandas), so the model's own descriptions write numbers as the rest do."""

from __future__ import annotations

PLAIN_BELOW = 1e15
"""From here numbers are written with an exponent: ``3e+37`` times a link's bandwidth, not
thirty-eight digits (a rate of ``1e300`` where ``1e3`` was meant wrote 300)."""


def separated(value: float, decimals: int = 0) -> str:
    """``value`` with ``decimals`` decimals, thousands separated (``12,345.6``), or from
    :data:`PLAIN_BELOW` on to three significant figures with an exponent (``1.53e+297``)."""
    if abs(value) < PLAIN_BELOW:
        return f"{value:,.{decimals}f}"
    return f"{value:.3g}"
