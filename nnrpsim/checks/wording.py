"""How the checks word what they find: one warning for each text, naming the sweep points it
holds for, and spans of time as a warning gives them."""

from __future__ import annotations

import re

from ..display_units import points_text

MERGED_BEYOND = 3
"""More texts than this that differ in their numbers alone (a swept value, and what follows
from it) make one warning, each number that differs given as its range: a sweep of 2,000
session lengths printed 1,969 lines."""

_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def warnings_by_text(found: list[tuple[str, int]], of_points: int) -> list[str]:
    """One warning for each text found, naming the points (of ``of_points``) it holds for;
    one for all the texts of a shape (their words alike, their numbers not) where they are
    more than :data:`MERGED_BEYOND`, in the place of the first."""
    points: dict[str, list[int]] = {}
    for text, index in found:
        points.setdefault(text, []).append(index)
    shapes: dict[str, list[str]] = {}
    for text in points:
        shapes.setdefault(_NUMBER.sub("#", text), []).append(text)
    warnings = []
    for text in points:
        alike = shapes[_NUMBER.sub("#", text)]
        if len(alike) <= MERGED_BEYOND:
            warnings.append(f"warning: {points_named(points[text], of_points)}: {text}")
        elif text == alike[0]:
            indices = sorted(i for each in alike for i in points[each])
            warnings.append(
                f"warning: {points_named(indices, of_points)}: {_ranges(alike)} (each point by "
                "its own numbers, in these ranges)"
            )
    return warnings


def _ranges(texts: list[str]) -> str:
    """Texts alike but for their numbers, as one: each number that differs as its range."""
    words = _NUMBER.split(texts[0])
    merged = [words[0]]
    for place, numbers in enumerate(zip(*(_NUMBER.findall(text) for text in texts), strict=True)):
        values = [float(number.replace(",", "")) for number in numbers]
        low, high = numbers[values.index(min(values))], numbers[values.index(max(values))]
        merged += [low if min(values) == max(values) else f"{low} to {high}", words[place + 1]]
    return "".join(merged)


def points_named(indices: list[int], of_points: int) -> str:
    """The points a warning holds for: all of them by that word, else by number."""
    return "all points" if len(indices) == of_points else points_text(indices)


def span_text(ms: float) -> str:
    """A span as a warning gives it: whole seconds from 100 s, three figures below."""
    seconds = ms / 1e3
    if seconds >= 100:
        return f"{seconds:,.0f} s"
    return f"{seconds:.3g} s" if seconds >= 1 else f"{ms:.3g} ms"
