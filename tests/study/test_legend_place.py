"""Where a plot's legend goes: inside the axes where it hides no line or bar, else beside them."""

from __future__ import annotations

import matplotlib.pyplot
import numpy as np
import pytest

from nnrpsim.plots import placement

SIZE = (6.4, 4.2)


def _lines(ax, levels) -> None:
    """A line across the axes at each level (a level a point settles to, over time)."""
    x = np.linspace(0, 300, 300)
    for i, level in enumerate(levels):
        ax.plot(x, np.full_like(x, level), label=f"point {i}, a long name")


def _box(legend, figure):
    return legend.get_window_extent(figure.canvas.get_renderer())


def _covers(box, places: np.ndarray) -> bool:
    """Whether any of the pixel ``places`` lies in ``box``, edges included."""
    x, y = places[:, 0], places[:, 1]
    return bool(((box.x0 <= x) & (x <= box.x1) & (box.y0 <= y) & (y <= box.y1)).any())


@pytest.fixture
def figure():
    fig, _ = matplotlib.pyplot.subplots(figsize=SIZE)
    yield fig
    matplotlib.pyplot.close(fig)


def test_a_legend_over_lines_everywhere_goes_beside_the_axes(figure):
    """Eight lines over time filling the axes: the legend inside hid the first ones."""
    (ax,) = figure.axes
    _lines(ax, np.linspace(0, 1, 8))
    placement.place_legend(ax, fontsize=7)
    figure.tight_layout()
    box, frame = _box(ax.get_legend(), figure), ax.get_window_extent()
    assert box.x0 > frame.x1  # on the right of the axes
    assert figure.get_size_inches()[0] > SIZE[0] + 1  # widened for it
    assert figure.get_size_inches()[1] == SIZE[1]
    assert box.x1 <= figure.bbox.x1  # and within the figure


def test_a_legend_with_room_stays_inside_where_it_hides_nothing(figure):
    (ax,) = figure.axes
    _lines(ax, [0.9, 0.95, 1.0])  # all in the top part
    ax.set_ylim(0, 1.05)
    placement.place_legend(ax, fontsize=7)
    box, frame = _box(ax.get_legend(), figure), ax.get_window_extent()
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
    assert tuple(figure.get_size_inches()) == SIZE
    assert not _covers(box, placement.drawn_places(ax))


def test_a_segment_between_two_points_counts_as_drawn(figure):
    """A line of two points crosses the axes between them: matplotlib's upper right, clear of
    both ends, lay over the segment of a line from the lower left to the upper right."""
    (ax,) = figure.axes
    ax.plot([0, 1], [0, 1], "o-", label="a diagonal")
    ax.plot([0, 1], [1, 0], "o-", label="the other")
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(-0.5, 1.5)
    placement.place_legend(ax, fontsize=7)
    box = _box(ax.get_legend(), figure)
    crossing = placement.drawn_places(ax)
    assert not _covers(box, crossing)
    assert len(crossing) > 4  # the segments' places, beside the four ends


def test_a_legend_keeps_off_a_marker_at_its_edge(figure):
    """The trade-off plot of server_load: a line of points at (0, 0), in the corner; the
    legend in the lower left hid it (the marker's centre lay just outside its box)."""
    (ax,) = figure.axes
    ax.plot([5, 180], [1.0, 1.0], "o-", label="best_practice")
    ax.plot([0, 0], [0, 0], "o-", label="never")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.05)
    placement.place_legend(ax, fontsize=6)
    box = _box(ax.get_legend(), figure)
    corner = ax.transData.transform((0, 0))
    assert not box.padded(placement.MARKER_REACH * figure.dpi / 72).contains(*corner)


def test_a_legend_keeps_off_the_points_labels(figure):
    """A point's label (the trade-off plot's) where the legend would go first: in the upper
    right, with the lines below."""
    (ax,) = figure.axes
    ax.plot([0, 1], [0.1, 0.2], "o-", label="a line")
    ax.plot([0, 1], [0.15, 0.25], "o-", label="another")
    ax.set_ylim(0, 1)
    label = ax.annotate("256 MiB, 512 MiB", (0.95, 0.97), ha="right", va="top")
    placement.place_legend(ax, fontsize=6)
    renderer = figure.canvas.get_renderer()
    assert not _box(ax.get_legend(), figure).overlaps(label.get_window_extent(renderer))


def test_a_legend_keeps_off_the_bars(figure):
    """The bars by kind of refused_puts: long bars in every row, the top two reaching the
    upper right; the legend lay over them. Here no place inside is free."""
    (ax,) = figure.axes
    rows = np.arange(8)
    ax.barh(rows, 6.0 + rows % 2, label="prompt_segment")
    ax.barh(rows, 2.0, left=6.0 + rows % 2, label="tool_schema")
    ax.invert_yaxis()
    placement.place_legend(ax, fontsize=7)
    box = _box(ax.get_legend(), figure)
    assert not any(box.overlaps(bar.get_window_extent()) for bar in ax.patches)
    assert box.x0 > ax.get_window_extent().x1


def test_a_legend_takes_the_room_the_bars_leave(figure):
    """Bars growing down the axes (ttl_sweep's) leave the upper right free."""
    (ax,) = figure.axes
    rows = np.arange(6)
    ax.barh(rows, 1.0 + rows, label="prompt_segment")
    ax.barh(rows, 0.5, left=1.0 + rows, label="tool_schema")
    ax.invert_yaxis()
    placement.place_legend(ax, fontsize=7)
    box, frame = _box(ax.get_legend(), figure), ax.get_window_extent()
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1
    assert not any(box.overlaps(bar.get_window_extent()) for bar in ax.patches)


@pytest.mark.parametrize("backend", ["svg", "pdf"])
def test_a_legend_is_placed_on_any_backend(backend):
    """A canvas of the SVG or PDF backend (MPLBACKEND=svg, which nnrpsim.plots keeps) has no
    get_renderer, which placing the legend called."""
    from importlib import import_module

    from matplotlib.figure import Figure

    figure = Figure(figsize=SIZE)
    import_module(f"matplotlib.backends.backend_{backend}").FigureCanvas(figure)
    ax = figure.subplots()
    _lines(ax, np.linspace(0, 1, 8))
    placement.place_legend(ax, fontsize=7)
    assert ax.get_legend().get_window_extent().x0 > ax.get_window_extent().x1
