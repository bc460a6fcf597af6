"""The lines of a plot: which points one line joins, how it is named in the legend, and
at most how many are drawn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..display_units import described, value_text
from ..scenario.key_catalog import SHORT_KEYS
from .placement import MAX_SHARED_LABELS, first_to_last


def line_with_band(ax, x, y, ci, label=None) -> str:
    """The points in order of ``x`` (those without a place on it left out), joined, with
    their 95 % band; returns the line's colour."""
    order = np.argsort(x.to_numpy())
    x, y, ci = x.to_numpy()[order], y.to_numpy()[order], np.nan_to_num(ci.to_numpy()[order])
    (line,) = ax.plot(x, y, marker=marker_of(len(x)), label=label)
    ax.fill_between(x, y - ci, y + ci, alpha=0.2, color=line.get_color())
    return line.get_color()


MARKED_AT_MOST = 60
"""Points a line marks at most: matplotlib's markers are 6 points across, and 60 of them fill
an axis about 360 points wide; a line of 300 points was a row of dots that hid its shape (and
its band). Beyond, the line alone draws them."""


def marker_of(points: int) -> str:
    """The marker of a line of ``points`` points: a dot, or none beyond
    :data:`MARKED_AT_MOST`."""
    return "o" if points <= MARKED_AT_MOST else ""


MAX_LINES = 10
"""Lines a plot draws at most: matplotlib's colour cycle, beyond which colours repeat and the
lines and their legend cannot be told apart (nor does a legend of 50 fit the figure)."""


def spread(lines: list, most: int = MAX_LINES) -> list:
    """At most ``most`` of ``lines``, evenly spread over them, first and last kept (every
    k-th of a grid's combinations would keep one value of its inner key)."""
    if len(lines) <= most:
        return lines
    kept = np.unique(np.linspace(0, len(lines) - 1, most).round().astype(int))
    return [lines[index] for index in kept]


def lines_of(
    summary: pd.DataFrame, key: str, swept: list[str], drawn: tuple[str, ...] = ()
) -> list[tuple[str, pd.DataFrame]]:
    """The points to draw against ``key``, one line for each combination of the other swept
    parameters that vary at a given ``key`` (points that differ in one must never be joined;
    one zipped with ``key`` moves along the line), with its label. Lines equal in ``key`` and
    in the ``drawn`` columns (the metric, its interval) are one line, named for all of them:
    drawn apart, the last would hide the others under their legend entries."""
    at_key = summary.groupby(key, dropna=False)
    others = [k for k in swept if k != key and at_key[k].nunique(dropna=False).max() > 1]
    if not others:
        return [("", summary)]
    # in the key's order, each point's drawn values hashed once (a NaN as a NaN): a line's
    # hashes in turn tell it apart (a sort and a compare a line took 1 ms: 0.3 s a plot of a
    # thousand points)
    ordered = summary.sort_values(key, kind="stable", ignore_index=True)
    hashes = pd.util.hash_pandas_object(ordered[[key, *drawn]], index=False).to_numpy()
    equal: dict[object, list[tuple[tuple, pd.DataFrame]]] = {}
    for values, part in ordered.groupby(others, dropna=False, sort=True):
        signature = hashes[part.index].tobytes() if drawn else values  # (none: each its own)
        equal.setdefault(signature, []).append((values, part))
    return [(name_lines(others, [v for v, _ in line]), line[0][1]) for line in equal.values()]


LABEL_WIDTH = 60
"""Characters a legend label of equal lines drawn as one runs to before it wraps."""


def name_lines(keys: list[str], combinations: list[tuple]) -> str:
    """The legend label of a line drawn for one or more equal ones: the value of each key
    for one; for several, each key's values where the lines are every combination of them
    (one value where they share it), else each line's, and how many lines."""
    if len(combinations) == 1:
        return described(keys, combinations[0])
    columns = [[value_text(key, c[i]) for c in combinations] for i, key in enumerate(keys)]
    values = [list(dict.fromkeys(column)) for column in columns]  # each once, in order
    if math.prod(map(len, values)) == len(combinations):
        parts = [
            f"{SHORT_KEYS.get(key, key)} = {first_to_last(texts, ', ')}"
            for key, texts in zip(keys, values, strict=True)
        ]
        named = _wrapped(parts, ", ")
    elif len(combinations) <= MAX_SHARED_LABELS:
        named = _wrapped([described(keys, c) for c in combinations], "; ")
    else:
        ends = (combinations[0], combinations[-1])
        named = _wrapped([f"{described(keys, ends[0])} ...", described(keys, ends[1])], " ")
    return f"{named}: {len(combinations)} equal lines"


def _wrapped(parts: list[str], separator: str) -> str:
    """``parts`` joined, on a new line where the next would run past :data:`LABEL_WIDTH`."""
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + len(separator) + len(part) > LABEL_WIDTH:
            lines[-1] += separator.rstrip()
            lines.append(part)
        else:
            lines[-1] += separator + part
    return "\n".join(lines)
