"""The formats a study's figures are written in: PNG and SVG, or those NNRPSIM_PLOT_FORMATS
names. Apart from :mod:`nnrpsim.plots`, which loads matplotlib, so that the command line's
help names them without it."""

from __future__ import annotations

import os

from .quoted import quoted

FORMATS = ("png", "svg")
"""The files each figure is written as, unless :data:`FORMATS_VARIABLE` says otherwise: PNG to
look at, SVG to print or edit."""
FORMATS_VARIABLE = "NNRPSIM_PLOT_FORMATS"
"""Names the formats figures are written in, comma-separated, of :data:`KNOWN_FORMATS`:
``png`` alone skips the SVG writer, a fifth to a third of the plots' time (the tests' default)."""
KNOWN_FORMATS = ("png", "svg", "pdf")
"""The formats matplotlib writes with nothing more installed: raster, and two for print."""


def plot_formats() -> tuple[str, ...]:
    """The formats figures are written in, read at each use: a study's spawned workers, which
    draw its figures, take its environment."""
    text = os.environ.get(FORMATS_VARIABLE)
    if text is None:
        return FORMATS
    kinds = tuple(dict.fromkeys(kind.strip().lower() for kind in text.split(",")))
    if not all(kind in KNOWN_FORMATS for kind in kinds):
        from .scenario import ScenarioError  # (here: the help above needs no pydantic)

        raise ScenarioError(
            FORMATS_VARIABLE,
            f"names {', '.join(KNOWN_FORMATS)}, comma-separated (png,svg by default), "
            f"not {quoted(text)}",
        )
    return kinds


def formats_text(kinds: tuple[str, ...]) -> str:
    """``kinds`` as a sentence names them: ``PNG and SVG``, ``PDF, PNG and SVG``."""
    *others, last = (kind.upper() for kind in kinds)
    return f"{', '.join(others)} and {last}" if others else last
