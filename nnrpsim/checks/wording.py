"""How the checks word what they find: one warning for each text (or for many alike), naming
the sweep points it holds for, and spans of time as a warning gives them."""

from __future__ import annotations

from ..display_units import points_text
from ..lines_alike import lines_by_text
from ..plain_numbers import separated

MERGED_BEYOND = 3
"""More warnings than this alike but for their numbers make one, with the ranges
(:func:`~nnrpsim.lines_alike.lines_by_text`): three lines still read one by one."""


def warnings_by_text(found: list[tuple[str, int]], of_points: int) -> list[str]:
    """One warning for each text found, naming the points (of ``of_points``) it holds for;
    one for the texts alike but for their numbers where they are many."""
    return [
        f"warning: {points_named(indices, of_points)}: {text}"
        for indices, text in lines_by_text(found, MERGED_BEYOND)
    ]


def points_named(indices: list[int], of_points: int) -> str:
    """The points a warning holds for: all of them by that word, else by number."""
    return "all points" if len(indices) == of_points else points_text(indices)


def span_text(ms: float) -> str:
    """A span as a warning gives it: whole seconds from 100 s, three figures below."""
    seconds = ms / 1e3
    if seconds >= 100:
        return f"{separated(seconds)} s"
    return f"{seconds:.3g} s" if seconds >= 1 else f"{ms:.3g} ms"
