"""Human units in scenario files: sizes like ``16KiB`` or ``8GiB``, durations like ``250ms``,
``60s`` or ``10min``, rates like ``10Gbit/s``. Plain numbers are bytes, milliseconds and bytes per
second."""

from __future__ import annotations

import math
import re

from ..quoted import given, quoted

_NUMBER = r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*"

Units = tuple[dict[str, float], str]
"""A quantity's factors by the lower-case name of each unit (any case reads: ``8gib``), and
the units as they are written, for an error to list."""


def _read_in_any_case(written: dict[str, float]) -> Units:
    return {name.lower(): factor for name, factor in written.items()}, ", ".join(
        name for name in written if name
    )


SIZE_UNITS = _read_in_any_case(
    {
        "": 1,
        "B": 1,
        "kB": 10**3,
        "MB": 10**6,
        "GB": 10**9,
        "TB": 10**12,
        "KiB": 2**10,
        "MiB": 2**20,
        "GiB": 2**30,
        "TiB": 2**40,
    }
)
DURATION_UNITS = _read_in_any_case(
    {
        "": 1.0,
        "ns": 1e-6,
        "us": 1e-3,
        "ms": 1.0,
        "s": 1e3,
        "sec": 1e3,
        "min": 60e3,
        "h": 3600e3,
    }
)
RATE_UNITS = _read_in_any_case(
    {
        "": 1.0,
        "B/s": 1.0,
        "kB/s": 1e3,
        "MB/s": 1e6,
        "GB/s": 1e9,
        "bit/s": 1 / 8,
        "kbit/s": 1e3 / 8,
        "Mbit/s": 1e6 / 8,
        "Gbit/s": 1e9 / 8,
        "bps": 1 / 8,
        "kbps": 1e3 / 8,
        "Mbps": 1e6 / 8,
        "Gbps": 1e9 / 8,
    }
)
"""(A rate's ``B`` and ``b`` are told apart before: see :func:`parse_rate`.)"""


def _parse(value: object, units: Units, what: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        factors, known = units
        match = re.fullmatch(_NUMBER + r"([A-Za-z/]*)\s*", value)
        if not match or match.group(2).lower() not in factors:
            raise ValueError(f"malformed {what} {quoted(value)} (a number with one of: {known})")
        number = float(match.group(1)) * factors[match.group(2).lower()]
    else:
        raise ValueError(f"must be a {what}, got {given(value)}")
    if not math.isfinite(number):
        raise ValueError(f"must be a finite {what}")
    return number


def parse_size(value: object) -> int:
    """Bytes, from ``4096``, ``16KiB``, ``1.5GB`` ..."""
    return round(_parse(value, SIZE_UNITS, "size"))


MAX_DURATION_MS = float(2**53)
"""The longest duration a scenario takes (about 285,000 years): the last whole millisecond a
float holds exactly. The model keeps its time in float ms and reads it in whole ms; a session
length of 1e308 ms overflowed the workload's means to infinity (a traceback in validate)."""


def parse_duration_ms(value: object) -> float:
    """Milliseconds, from ``250``, ``250ms``, ``60s``, ``10min``, ``1h`` ... up to
    :data:`MAX_DURATION_MS`."""
    ms = _parse(value, DURATION_UNITS, "duration")
    if ms > MAX_DURATION_MS:
        raise ValueError(
            f"must be at most {MAX_DURATION_MS:,.0f} ms (2**53, about 285,000 years), the last "
            "whole millisecond a float holds exactly"
        )
    return ms


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
    """Bytes per second, from ``1.25GB/s``, ``10Gbit/s`` or ``10Gbps``. A rate in ``b/s``
    (``25Gb/s``) is refused: a link's makers mean bits by it, and this parser read bytes (any
    case), eight times as fast; ``B/s`` is bytes, ``bit/s`` and ``bps`` bits."""
    if isinstance(value, str) and re.search(r"b/[sS]\s*$", value):
        raise ValueError(
            f"ambiguous rate {quoted(value)}: b/s is read as bits or as bytes; write B/s for bytes "
            "a second, bit/s or bps for bits"
        )
    return _parse(value, RATE_UNITS, "rate")
