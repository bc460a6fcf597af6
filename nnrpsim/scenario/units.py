"""Human units in scenario files: sizes like ``16KiB`` or ``8GiB``, durations like ``250ms``,
``60s`` or ``10min``, rates like ``10Gbit/s``. Plain numbers are bytes, milliseconds and bytes per
second."""

from __future__ import annotations

import math
import re

_NUMBER = r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*"

SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
DURATION_UNITS = {
    "": 1.0,
    "ns": 1e-6,
    "us": 1e-3,
    "ms": 1.0,
    "s": 1e3,
    "sec": 1e3,
    "min": 60e3,
    "h": 3600e3,
}
RATE_UNITS = {
    "": 1.0,
    "b/s": 1.0,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
    "bit/s": 1 / 8,
    "kbit/s": 1e3 / 8,
    "mbit/s": 1e6 / 8,
    "gbit/s": 1e9 / 8,
}


def _parse(value: object, units: dict, what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"must be a {what}, got a boolean")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(_NUMBER + r"([A-Za-z/]*)\s*", value)
        if not match or match.group(2).lower() not in units:
            known = ", ".join(u for u in units if u)
            raise ValueError(f"malformed {what} {value!r} (a number with one of: {known})")
        number = float(match.group(1)) * units[match.group(2).lower()]
    else:
        raise ValueError(f"must be a {what}, got {type(value).__name__}")
    if not math.isfinite(number):
        raise ValueError(f"must be a finite {what}")
    return number


def parse_size(value: object) -> int:
    """Bytes, from ``4096``, ``16KiB``, ``1.5GB`` ..."""
    return round(_parse(value, SIZE_UNITS, "size"))


def parse_duration_ms(value: object) -> float:
    """Milliseconds, from ``250``, ``250ms``, ``60s``, ``10min``, ``1h`` ..."""
    return _parse(value, DURATION_UNITS, "duration")


def parse_whole_ms(value: object) -> float:
    """Milliseconds that a u32 field of the protocol carries (a lease TTL): whole, or refused,
    not cut (half a millisecond was 0, which is "none" for a TTL hint). A unit's float noise
    (``1.005s`` is 1004.9999999999999 ms, which was cut to 1,004) is rounded away."""
    ms = parse_duration_ms(value)
    whole = round(ms)
    if abs(ms - whole) > 1e-9 * max(1.0, abs(ms)):
        raise ValueError(
            f"must be whole milliseconds (a u32 ms field of the protocol), got {ms:g} ms"
        )
    return float(whole)


def parse_rate(value: object) -> float:
    """Bytes per second, from ``1.25GB/s`` or ``10Gbit/s``."""
    return _parse(value, RATE_UNITS, "rate")
