"""Where a legend and the points' labels go: clear of what the axes draw (lines, markers,
bars, other labels) and inside the axes where they can be."""

from __future__ import annotations

import numpy as np
from matplotlib.container import BarContainer

from ..display_units import value_text

LEGEND_PLACES = (
    "upper right",
    "upper left",
    "lower left",
    "lower right",
    "right",
    "center left",
    "center right",
    "lower center",
    "upper center",
    "center",
)
"""Where a legend may go inside the axes, in the order it is tried (matplotlib's codes)."""


def place_legend(ax, **options) -> None:
    """The legend at the first place inside the axes where it covers no part of a line (its
    samples and the segments between, a marker, a bar's cap), no bar of a bar chart, nor a
    point's label, else beside the axes on the right, the figure widened for it: eight lines
    over time filled the axes with a legend that hid the line it named second, and the bars
    by kind one that hid the top two bars. A place, not matplotlib's "best": that is worked
    out again once the layout is tight, and where no place is free it covers what it must."""
    ax.autoscale_view()
    places = drawn_places(ax)
    # (extents from the figure's own renderer: an SVG or PDF canvas has no get_renderer)
    boxes = [text.get_window_extent() for text in ax.texts] + [
        bar.get_window_extent()
        for bars in ax.containers
        if isinstance(bars, BarContainer)
        for bar in bars
        if bar.get_width() and bar.get_height()  # (a kind a point has none of: no bar)
    ]
    reach = MARKER_REACH * ax.figure.dpi / 72  # a marker on the legend's edge: under it
    legend = ax.legend(**options)
    for place in LEGEND_PLACES:
        legend.set_loc(place)  # (one legend moved: making one takes 15 ms)
        box = legend.get_window_extent().padded(reach)
        if not box.count_contains(places) and not any(box.overlaps(b) for b in boxes):
            return
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, **options)
    width, height = ax.figure.get_size_inches()
    beside = legend.get_window_extent().width / ax.figure.dpi
    ax.figure.set_size_inches(width + beside + 0.1, height)


def drawn_places(ax, along_segment: int = 16) -> np.ndarray:
    """The pixels the axes' lines pass through: each vertex, and ``along_segment`` places
    evenly along each segment (a line of two points crosses the axes between them)."""
    places = [np.empty((0, 2))]
    for line in ax.get_lines():
        xy = line.get_transform().transform(line.get_xydata())
        steps = np.linspace(0.0, 1.0, along_segment)[None, :, None]
        places += [xy, (xy[:-1, None, :] + steps * (xy[1:] - xy[:-1])[:, None, :]).reshape(-1, 2)]
    return np.concatenate(places)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two (left, right, bottom, top) boxes overlap. Plain tuples, where the legend
    takes matplotlib's ``Bbox``: each of a point's label's places is checked against every
    other point's marker and bar, and ``Bbox.overlaps`` takes 2.7 us a check to 0.11."""
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def _inside(box: tuple[float, ...], frame: tuple[float, ...]) -> bool:
    """Whether a (left, right, bottom, top) box lies wholly within another."""
    return frame[0] <= box[0] and box[1] <= frame[1] and frame[2] <= box[2] and box[3] <= frame[3]


LABEL_GAP, LABEL_LINE, LABEL_RINGS = 3, 8, 3
"""A point's label goes ``LABEL_GAP`` points right or left of it, just below or above it, or
up to ``LABEL_RINGS - 1`` lines of ``LABEL_LINE`` points farther: only when no nearer place is
both clear of the other labels and within the axes (three lines' points in a heap at the
origin, where the axes begin, sent labels across the y axis)."""
LABEL_PLACES = tuple(
    tuple(
        (dx, dy, "left" if dx > 0 else "right")
        for dx in (LABEL_GAP, -LABEL_GAP)
        for dy in (-9 - ring * LABEL_LINE, 3 + ring * LABEL_LINE)
    )
    for ring in range(LABEL_RINGS)
)
"""Where a point's label may go, in points from it, ring by ring, nearest first."""


MAX_SHARED_LABELS = 3
"""Beyond this many points of a line at one place (or equal lines drawn as one), their label
gives the first and the last."""


def first_to_last(texts: list[str], separator: str) -> str:
    """Texts in order, each up to :data:`MAX_SHARED_LABELS`, else the first and the last."""
    if len(texts) <= MAX_SHARED_LABELS:
        return separator.join(texts)
    return f"{texts[0]} ... {texts[-1]}"


def _shared_label(texts: list[str]) -> str:
    """The label of points of a line at one place, in the line's order: each named up to
    :data:`MAX_SHARED_LABELS`, else the first and the last and how many (a study whose
    points all hold nothing named them all, wider than the figure)."""
    text = first_to_last(texts, ", ")
    return text if len(texts) <= MAX_SHARED_LABELS else f"{text} ({len(texts)} points)"


def label_points(ax, along: str, series, x_factor: float, metric: str, y_factor: float) -> int:
    """Name each point's place on its line (its budget, its TTL) beside it (see
    :func:`_named_places`), keeping off the other points' markers and bars where it can (two
    lines close together: a label over the other line's point hid it). The memory axis widens
    on the right for the labels there. A label with no place clear of those placed before is
    left out, and then the ends of each line are placed first: 300 budgets along a line wrote
    their labels over each other, none of them legible. Returns how many are left out."""
    ax.autoscale_view()
    pixels = ax.figure.dpi / 72  # per point
    points = [  # (line, x, y, its bar's half height, its label's text), in data coordinates
        (index, x, y, ci, value_text(along, value))
        for index, (_, part) in enumerate(series)
        for value, x, y, ci in zip(
            part[along],
            part["mean_gpu_bytes"] / x_factor,
            part[metric] / y_factor,
            np.nan_to_num(part[f"{metric}_ci95"] / y_factor),
            strict=True,
        )
        if np.isfinite(x) and np.isfinite(y)
    ]
    if not points:
        return 0
    named = [
        (at, members, _shared_label([points[m][4] for m in members]))
        for at, members in _named_places(ax, points)
    ]
    _room_on_the_right(ax, [(points[at][1], _label_width(text, pixels)) for at, _, text in named])
    # in pixels, again: the axis may have widened since the points were grouped
    anchors = ax.transData.transform([(x, y) for _, x, y, _, _ in points])
    marks = [  # (the box its marker covers, its bar's), in pixels
        _marks_of(ax, anchor, (x, y - ci), (x, y + ci), pixels)
        for anchor, (_, x, y, ci, _) in zip(anchors, points, strict=True)
    ]
    extent = ax.get_window_extent()
    frame = (extent.x0, extent.x1, extent.y0, extent.y1)
    placed = _clear_places(named, anchors, marks, frame, pixels)
    if len(placed) < len(named):  # again, the labels of the lines' ends first (a sort keeps
        # the others in order): where labels are left out, not those
        ends = {index for index in range(len(points)) if _ends_its_line(points, index)}
        firsts = sorted(named, key=lambda label: ends.isdisjoint(label[1]))
        placed = _clear_places(firsts, anchors, marks, frame, pixels)
    for at, text, (dx, dy, align) in placed:
        ax.annotate(
            text,
            points[at][1:3],
            xytext=(dx, dy),
            textcoords="offset points",
            ha=align,
            fontsize=6,
        )
    return len(named) - len(placed)


def _clear_places(
    named: list, anchors: np.ndarray, marks: list, frame: tuple[float, ...], pixels: float
) -> list[tuple[int, str, tuple[float, float, str]]]:
    """Each of the ``named`` labels (its point, the points it names, its text) in turn, at
    its best place beside its point (``anchors``, in pixels), given the labels placed before
    it and the other points' ``marks`` (:func:`_marks_of`); left out where none is clear of
    those labels. Returns (point, text, (dx, dy, alignment)) of those placed."""
    boxes: list[tuple[float, ...]] = []  # labels placed, (left, right, bottom, top) in pixels
    placed = []
    for at, _, text in named:
        anchor = anchors[at]
        width, height = _label_width(text, pixels), 7 * pixels
        others = marks[:at] + marks[at + 1 :]
        places = []
        for farther, ring in enumerate(LABEL_PLACES):
            for dx, dy, align in ring:
                left = anchor[0] + dx * pixels - (width if align == "right" else 0)
                bottom = anchor[1] + dy * pixels
                box = (left, left + width, bottom, bottom + height)
                places.append(((dx, dy, align), box, farther))
        # clear of the other labels, then within the axes (a point in a corner), then nearest
        # its point, then over the fewest other points' markers, then across the fewest bars
        # (a line's points at one place share the label, and it keeps off the bars of all but
        # its own); the first place of the best
        offset, box, _ = min(
            places,
            key=lambda place: (
                any(_overlap(place[1], b) for b in boxes),
                not _inside(place[1], frame),
                place[2],
                sum(_overlap(place[1], marker) for marker, _ in others),
                sum(_overlap(place[1], bar) for _, bar in others),
            ),
        )
        if not any(_overlap(box, b) for b in boxes):
            boxes.append(box)
            placed.append((at, text, offset))
    return placed


def _ends_its_line(points: list, index: int) -> bool:
    """Whether the point at ``index`` of ``points`` (line, x, y, bar, text; each line's in
    its order) is its line's first or last."""
    line = points[index][0]
    return not (
        0 < index < len(points) - 1 and points[index - 1][0] == points[index + 1][0] == line
    )


LABEL_REACH = 12
"""Points closer than this many pixels each way share a label."""


def _named_places(ax, points: list) -> list[tuple[int, list[int]]]:
    """Which of the ``points`` (line, x, y, bar, text) a label is beside, and the points
    whose texts it names, where no label is yet. Points of a line within a label's reach of
    each other share one ("256 MiB, 512 MiB", where a budget beyond the working set holds no
    more), and so do points of several lines with the same value there (four lines at
    "64 MiB" named it four times, in a heap)."""
    anchors = ax.transData.transform([(x, y) for _, x, y, _, _ in points])
    named: list[tuple[int, list[int]]] = []
    for index, (line, *_, text) in enumerate(points):
        near = [n for n in named if (abs(anchors[n[0]] - anchors[index]) < LABEL_REACH).all()]
        if any(text == points[m][4] for _, members in near for m in members):
            continue  # named already, by another line's label at this place too
        same_line = [members for at, members in near if points[at][0] == line]
        if same_line:
            same_line[0].append(index)
        else:
            named.append((index, [index]))
    return named


def _label_width(text: str, pixels: float) -> float:
    """About how wide a point's label is, in pixels (6-point type)."""
    return 3.4 * len(text) * pixels


def _room_on_the_right(ax, labels: list[tuple[float, float]]) -> None:
    """Widen the x axis where a label, (x of its point, width in pixels), would not fit right
    of its point within the axes: it went left then, over the points before it ("0.75" over
    the point of 0.5). On a log axis too."""
    gap, axis_width = LABEL_GAP * ax.figure.dpi / 72, ax.get_window_extent().width
    scale = ax.xaxis.get_transform()
    left, right = scale.transform(np.array(ax.get_xlim()))
    wider = right
    for x, width in labels:
        needed = (width + gap) / axis_width  # of the axis
        if needed < 0.5:
            at = scale.transform(np.array([x]))[0]
            wider = max(wider, left + (at - left) / (1 - needed))
    if wider > right:
        ax.set_xlim(right=scale.inverted().transform(np.array([wider]))[0])


MARKER_REACH = 3.5
"""Half the width of a point's marker, in points (matplotlib's markers are 6 across), and a
little more, for its edge."""


def _marks_of(
    ax, anchor: np.ndarray, low, high, pixels: float
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The (left, right, bottom, top) pixel boxes a drawn point covers: its marker, and its
    error bar from ``low`` to ``high`` (data coordinates; on a log axis, a bar below zero
    reaches below the axes, as matplotlib clips it)."""
    reach = MARKER_REACH * pixels
    marker = (anchor[0] - reach, anchor[0] + reach, anchor[1] - reach, anchor[1] + reach)
    bottom, top = ax.transData.transform([low, high])[:, 1]
    return marker, (anchor[0] - pixels, anchor[0] + pixels, min(bottom, top), max(bottom, top))
