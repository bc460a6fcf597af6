"""The formats a study's figures are written in: PNG and SVG, or those NNRPSIM_PLOT_FORMATS
names (``none``: no figures). Apart from :mod:`nnrpsim.plots`, which loads matplotlib, so that
the command line's help names them without it."""

from __future__ import annotations

import os

from .quoted import quoted

FORMATS = ("png", "svg")
"""The files each figure is written as, unless :data:`FORMATS_VARIABLE` says otherwise: PNG to
look at, SVG to print or edit."""
FORMATS_VARIABLE = "NNRPSIM_PLOT_FORMATS"
"""Names the formats figures are written in, comma-separated, of :data:`KNOWN_FORMATS`:
``png`` alone skips the SVG writer, a fifth to a third of the plots' time. Or :data:`NO_FORMAT`."""
NO_FORMAT = "none"
"""Alone in :data:`FORMATS_VARIABLE`: a study draws no figures (two fifths of a small study's
time): for a sweep whose figures are drawn later, by ``nnrpsim plot``, or from its tables."""
KNOWN_FORMATS = ("png", "svg", "pdf")
"""The formats matplotlib writes with nothing more installed: raster, and two for print."""


def plot_formats() -> tuple[str, ...]:
    """The formats figures are written in, read at each use: a study's spawned workers, which
    draw its figures, take its environment. None at all for :data:`NO_FORMAT`."""
    text = os.environ.get(FORMATS_VARIABLE)
    if text is None:
        return FORMATS
    if text.strip().lower() == NO_FORMAT:
        return ()
    kinds = tuple(dict.fromkeys(kind.strip().lower() for kind in text.split(",")))
    if not all(kind in KNOWN_FORMATS for kind in kinds):
        from .scenario import ScenarioError  # (here: the help above needs no pydantic)

        raise ScenarioError(
            FORMATS_VARIABLE,
            f"names {', '.join(KNOWN_FORMATS)}, comma-separated (png,svg by default), or "
            f"{NO_FORMAT}, not {quoted(text)}",
        )
    return kinds


def redrawing_formats() -> tuple[str, ...]:
    """The formats a drawing of saved results writes: refused for :data:`NO_FORMAT`, where it
    would draw nothing (a study run under it draws no figures, and these draw them later)."""
    if not (kinds := plot_formats()):
        from .scenario import ScenarioError

        raise ScenarioError(
            FORMATS_VARIABLE,
            f"is {NO_FORMAT}, so nothing would be drawn: name the formats to draw the figures "
            f"in, of {', '.join(KNOWN_FORMATS)}, or unset it for png,svg",
        )
    return kinds


def formats_text(kinds: tuple[str, ...]) -> str:
    """``kinds`` as a sentence names them: ``PNG and SVG``, ``PDF, PNG and SVG``."""
    *others, last = (kind.upper() for kind in kinds)
    return f"{', '.join(others)} and {last}" if others else last
