"""Numbers in the units people read: the unit that suits a column of bytes, durations or link
rates, and a swept value as text. Shared by the plots' axes and legends and the printed
summary, so both say the same thing the same way."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import yaml

from .plain_numbers import PLAIN_BELOW, separated
from .scenario.key_catalog import KEY_UNITS, SHORT_KEYS

RATE_UNITS = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1, "bit/s"))
DURATION_UNITS = ((1e3, "s"), (1.0, "ms"), (1e-3, "us"), (1e-6, "ns"))
"""Milliseconds per unit, largest first: a swept duration shows in the largest unit its
largest value reaches."""


def bytes_scale(values: np.ndarray) -> tuple[float, str]:
    """The bytes per unit (binary: KiB, MiB, GiB, TiB) that suits the largest of ``values``,
    and the unit's name."""
    return bytes_unit(np.nanmax(values) if len(values) else 0)


def bytes_unit(top: float) -> tuple[float, str]:
    """:func:`bytes_scale` of one number (numpy's maximum of one took 10 us: ``validate``
    writes a run's memory for each point)."""
    for factor, unit in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if top >= factor:
            return factor, unit
    return 1, "bytes"


def key_scale(key: str, values) -> tuple[float, str]:
    """The factor from a swept key's stored values (ms, bytes, bytes per s) to the unit that
    suits the largest of ``values``, and the unit's name ('' for a key without units)."""
    if key not in KEY_UNITS:  # (nothing to read: a key's values may be names)
        return 1.0, ""
    numbers = pd.to_numeric(pd.Series(values), errors="coerce").abs().dropna().to_numpy()
    return _scale(KEY_UNITS[key], numbers)


def _scale(kind: str, numbers: np.ndarray) -> tuple[float, str]:
    """:func:`key_scale` of a key of ``kind`` whose values are ``numbers`` (absolute, none
    missing)."""
    top = numbers.max() if len(numbers) else 0.0
    if kind == "size":
        factor, unit = bytes_scale(numbers)
        return 1 / factor, unit
    if kind == "duration":
        per_unit, unit = next((f, u) for f, u in DURATION_UNITS if top >= f or u == "ns")
        return 1 / per_unit, unit
    if kind == "rate":  # bytes per second, shown as a link rate
        per_unit, unit = next((f, u) for f, u in RATE_UNITS if top * 8 >= f or f == 1)
        return 8 / per_unit, unit
    return 1.0, ""


def value_text(key: str, value) -> str:
    """A swept value as a legend shows it: in the axis unit, and what a missing value means;
    a list as the summary's column writes it (its JSON: a point's raw value is a tuple)."""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value)
    if pd.isna(value):
        return "unlimited" if key == "topology.gpu_memory" else "none"
    if isinstance(value, bool | np.bool_):  # as YAML writes it
        return str(bool(value)).lower()
    kind = KEY_UNITS.get(key)  # (one value: no pandas Series for it, a tenth of a ms)
    factor, unit = (1.0, "") if kind is None else _scale(kind, _magnitude(value))
    if unit and value:
        return f"{value * factor:g} {unit}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def durations_text(values_ms: list[float]) -> str:
    """Durations (ms) in the unit that suits the largest, one after another: ``7.75/38.8 s``
    (``.3g`` of the milliseconds wrote ``7.75e+03/3.88e+04``); a missing one ``n/a``."""
    numbers = np.abs(np.asarray(values_ms, dtype=float))
    if np.isnan(numbers).all():
        return "n/a"
    finite = numbers[~np.isnan(numbers)]
    factor, unit = _scale("duration", finite) if finite.max() > 0 else (1.0, "ms")
    shown = ("n/a" if np.isnan(value) else f"{value * factor:.3g}" for value in values_ms)
    return f"{'/'.join(shown)} {unit}"


def sizes_text(values_bytes: list[float]) -> str:
    """Byte counts in the binary unit that suits the largest, one after another:
    ``4.21/6.03 MiB``."""
    factor, unit = bytes_unit(max(values_bytes))
    return f"{'/'.join(f'{value / factor:.3g}' for value in values_bytes)} {unit}"


def described(keys: list[str], values) -> str:
    """Swept keys and their values, as legends, annotations and headings name a point."""
    return ", ".join(
        f"{SHORT_KEYS.get(key, key)} = {value_text(key, value)}"
        for key, value in zip(keys, values, strict=True)
    )


def _magnitude(value) -> np.ndarray:
    """One value as :func:`_scale` reads values: its magnitude, or none if it is no number."""
    number = abs(pd.to_numeric(value, errors="coerce"))
    return np.array([number]) if number >= 0 else np.empty(0)


def counted(count: int, noun: str) -> str:
    """A count with its noun, singular for one: ``1 sweep point``, ``3 runs``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def figures(value: float, count: int = 3) -> str:
    """``value`` to ``count`` significant figures, without an exponent where the figures
    reach the units: ``2,390`` (``.3g`` wrote ``2.39e+03``), ``23.9``, ``0.01``, and to two
    figures ``110`` (``.2g`` wrote ``1.1e+02``); with one from :data:`PLAIN_BELOW`."""
    rounded = float(f"{value:.{count}g}")
    plain = 10 ** (count - 1) <= abs(rounded) < PLAIN_BELOW
    return f"{rounded:,.0f}" if plain else f"{rounded:.{count}g}"


MOST_NINES = 6
"""The decimals :func:`below_one` gives at most: a share within a millionth of 1."""


def below_one(fraction: float) -> tuple[str, str]:
    """A fraction in [0, 1) as a share and as a percentage, with as many decimals as keep them
    below 1 and 100 %: ``0.9996`` and ``99.96 %`` (two decimals said ``1.00`` and
    ``100 %``, a saving no caching reaches), ``0.96`` and ``96 %``. Within a millionth of 1
    (or at 1, where a float rounded it: a link a billion billion times too slow), ``0.999999``
    and ``99.9999 %``, the share cut, not rounded: what is said stays below it."""
    if 1 - fraction < 10**-MOST_NINES:
        nines = "9" * MOST_NINES
        return f"0.{nines}", f"99.{nines[2:]} %"
    decimals = max(2, math.ceil(-math.log10(1 - fraction)))
    return f"{fraction:.{decimals}f}", f"{fraction * 100:.{decimals - 2}f} %"


def percent(share: float) -> str:
    """A share as a percentage: two figures below 10 % (``0.51 %``), and from there as many
    decimals as keep a share below one below 100 % (``99.97 %``), up to ``over 99.999 %``."""
    if share >= 1:
        return "100 %"
    if share > 0.99999:
        return "over 99.999 %"
    return below_one(share)[1] if share >= 0.1 else f"{figures(share * 100, 2)} %"


def about(expected: float) -> str:
    """An expected count as an estimate reads: to three significant figures, thousands
    separated (``~103,000 operations``; ``~103,499`` claimed a precision a mean has not)."""
    return f"~{separated(float(f'{expected:.3g}'))}"


def scenario_text(key: str, value: object) -> str:
    """A scenario key's value as a scenario may write it: sizes, durations and rates with
    units, lists and mappings in YAML's flow style, null and booleans as YAML writes them."""
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return value_text(key, value)
    if isinstance(value, tuple | list | dict):
        plain = list(value) if isinstance(value, tuple) else value
        return yaml.safe_dump(plain, default_flow_style=True, width=1 << 16).strip()
    return repr(value)


def points_text(indices: list[int]) -> str:
    """Sweep points as a line names them: ``point 3``, ``points 0, 1, 2``, the first six of
    more (``(and 4 more)``)."""
    if len(indices) == 1:
        return f"point {indices[0]}"
    return f"points {first_few([str(i) for i in indices])}"


FIRST_FEW = 6
"""Items a line lists before it counts the rest."""


def first_few(texts: list[str]) -> str:
    """``texts`` one after another, the first :data:`FIRST_FEW` of more with how many more
    (``a, b, c, d, e, f (and 294 more)``): a line that names them stays a line."""
    shown = ", ".join(texts[:FIRST_FEW])
    more = len(texts) - FIRST_FEW
    return f"{shown} (and {more:,} more)" if more > 0 else shown
