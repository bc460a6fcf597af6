"""Lines that name the sweep points they hold for: one for each text, and one for texts alike
but for their numbers (a swept value, and what follows from it) where they are many, each
number that differs given as its range. A sweep of 2,000 session lengths printed 1,969
warnings and 2,848 lines of description, a line a point."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .display_units import points_text

IN_RANGES = "(each point by its own numbers, in these ranges)"
"""What ends a line made of many: its numbers are the points' ranges, not one point's."""

DESCRIBED_BEYOND = 40
"""More lines of a description alike but for their numbers than this make one: up to a
screenful, each point's own line says more than a range."""

_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[+-]?\d+)?")
"""A number as the lines write it: ``2,390``, ``0.75``, or with an exponent, taken whole
(``9.98e+204``, ``1e-05``: ``.3g`` writes one from :data:`~nnrpsim.plain_numbers.PLAIN_BELOW`
up and below 1e-4; its digits taken apart made ranges such as "2 to 9.98e+204 to 205")."""


def lines_by_text(found: Iterable[tuple[str, int]], beyond: int) -> list[tuple[list[int], str]]:
    """``(points, text)`` for each text found (with each point it holds for), in the order
    found; where more than ``beyond`` texts share a shape (their words alike, their numbers
    not), one for them all in the place of the first, with the ranges."""
    points: dict[str, list[int]] = {}
    for text, index in found:
        points.setdefault(text, []).append(index)
    shape = {text: _NUMBER.sub("#", text) for text in points}
    shapes: dict[str, list[str]] = {}
    for text in points:
        shapes.setdefault(shape[text], []).append(text)
    lines = []
    for text in points:
        alike = shapes[shape[text]]
        if len(alike) <= beyond:
            lines.append((points[text], text))
        elif text == alike[0]:
            indices = sorted(i for each in alike for i in points[each])
            lines.append((indices, f"{_ranges(alike)} {IN_RANGES}"))
    return lines


def described_by_text(found: Iterable[tuple[str, int]]) -> list[str]:
    """A description's lines, each led by the points it holds for (``points 0, 3: ...``), one
    for many alike beyond :data:`DESCRIBED_BEYOND`."""
    return [f"{points_text(i)}: {text}" for i, text in lines_by_text(found, DESCRIBED_BEYOND)]


def _ranges(texts: list[str]) -> str:
    """Texts alike but for their numbers, as one: each number that differs as its range."""
    words = _NUMBER.split(texts[0])
    merged = [words[0]]
    for place, numbers in enumerate(zip(*(_NUMBER.findall(text) for text in texts), strict=True)):
        values = [float(number.replace(",", "")) for number in numbers]
        low, high = numbers[values.index(min(values))], numbers[values.index(max(values))]
        merged += [low if min(values) == max(values) else f"{low} to {high}", words[place + 1]]
    return "".join(merged)
