"""The two replay modes: how a hit treats its lease."""

from __future__ import annotations

MODES = ("reset", "non_reset")


def renewal_margin(mode: str, renew_margin: float) -> float:
    """The share of a lease's TTL, before it runs out, in which a hit renews it: ``renew_margin``
    in ``reset`` mode (1: every hit renews), 0 in ``non_reset`` (none does)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not 0 < renew_margin <= 1:
        raise ValueError(f"renew_margin must be in (0, 1], got {renew_margin}")
    return renew_margin if mode == "reset" else 0.0
