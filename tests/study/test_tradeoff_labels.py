"""The labels beside the trade-off plot's points: what they are, and where they go."""

from __future__ import annotations

import matplotlib.pyplot
import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Annotation

from nnrpsim import plots

TTL, RATE = "host_policy.ttl_fraction", "workload.invalidations.rate_per_s"
BUDGET, SESSIONS = "topology.gpu_memory", "workload.sessions.rate_per_s"


def _summary(keys: tuple[str, str], rows: str, first_factor: float = 1.0) -> pd.DataFrame:
    """A study's summary from rows of its two swept values, mean memory held (MiB), hit rate
    and its interval; two replications a point."""
    table = np.array([line.split() for line in rows.strip().splitlines()], dtype=float)
    return pd.DataFrame(
        {
            keys[0]: table[:, 0] * first_factor,
            keys[1]: table[:, 1],
            "mean_gpu_bytes": table[:, 2] * 2**20,
            "hit_rate": table[:, 3],
            "hit_rate_ci95": table[:, 4],
            "replications": 2,
        }
    )


# the quickstart study's summary (2026-12-04): two lines of five TTLs close together, where a
# label placed clear of the other labels only lay over the other line's points
QUICKSTART = _summary(
    (TTL, RATE),
    """
    0.05 0 3.12 0.3913 0.1166
    0.05 0.02 2.94 0.3755 0.1059
    0.1 0 4.27 0.4897 0.1084
    0.1 0.02 3.92 0.4642 0.1013
    0.25 0 5.62 0.5957 0.0937
    0.25 0.02 5.02 0.5532 0.0788
    0.5 0 6.38 0.6522 0.0855
    0.5 0.02 5.53 0.5957 0.0644
    0.75 0 6.56 0.6630 0.0914
    0.75 0.02 5.71 0.6084 0.0531
    """,
)
# the capacity_planning study's: budgets (MiB) along three session rates, where three budgets
# of the first rate hold nearly the same memory and share a label
CAPACITY = _summary(
    (BUDGET, SESSIONS),
    """
    32 0.5 31.67 0.3563 0.0422
    32 1 31.64 0.2888 0.0077
    32 2 31.71 0.2645 0.0138
    64 0.5 63.54 0.5549 0.0030
    64 1 63.60 0.4194 0.0191
    64 2 63.67 0.3623 0.0021
    128 0.5 115.03 0.7948 0.1277
    128 1 127.41 0.6076 0.0727
    128 2 127.66 0.4847 0.0229
    256 0.5 123.39 0.8108 0.0675
    256 1 217.88 0.8155 0.0655
    256 2 255.07 0.6828 0.0819
    512 0.5 123.39 0.8108 0.0675
    512 1 220.60 0.8175 0.0898
    512 2 346.10 0.8050 0.0298
    """,
    2**20,
)
# the refused_puts study's: two budgets (MiB) along four backoffs (ms), whose lines lie
# within a few pixels of each other
BACKOFF = "host_policy.refused_put_backoff"
REFUSED = _summary(
    (BUDGET, BACKOFF),
    """
    64 0 63.92 0.5002 0.0182
    128 0 127.70 0.6566 0.0276
    64 2000 63.90 0.4991 0.0124
    128 2000 127.59 0.6577 0.0286
    64 10000 63.85 0.4917 0.0200
    128 10000 127.32 0.6455 0.0320
    64 60000 63.68 0.4814 0.0217
    128 60000 126.56 0.6411 0.0253
    """,
    2**20,
)
STUDIES = {
    "quickstart": (QUICKSTART, [TTL, RATE]),
    "capacity_planning": (CAPACITY, [BUDGET, SESSIONS]),
}


def _drawn(drawn: list, summary: pd.DataFrame, swept: list[str]):
    """The trade-off of hit rate that ``summary`` draws, laid out."""
    before = len(drawn)
    plots._capacity_tradeoff(summary, swept, None, "hit_rate")
    (figure,) = drawn[before:]
    figure.canvas.draw()
    return figure


def test_the_plot_says_which_swept_key_labels_its_points(drawn):
    figure = _drawn(drawn, QUICKSTART, [TTL, RATE])
    (ax,) = figure.axes
    assert "beside each point: its ttl_fraction" in ax.get_title(loc="left")
    labels = sorted(text.get_text() for text in ax.texts if isinstance(text, Annotation))
    assert labels == sorted(["0.05", "0.1", "0.25", "0.5", "0.75"] * 2)


@pytest.mark.parametrize("study", STUDIES)
def test_a_label_keeps_off_the_other_points_and_their_bars(drawn, study):
    """No label covers the marker of a point other than its own, on any line, nor of a point
    that shares its label; nor crosses its error bar where a place clear of bars is free (in
    the quickstart study none is, among three points of two lines within 0.2 MiB)."""
    summary, swept = STUDIES[study]
    figure = _drawn(drawn, summary, swept)
    (ax,) = figure.axes
    reach = 3 * figure.dpi / 72  # a marker's half width: 6 points across
    x = summary["mean_gpu_bytes"].to_numpy() / 2**20
    y, ci = summary["hit_rate"].to_numpy(), summary["hit_rate_ci95"].to_numpy()
    centres = ax.transData.transform(np.column_stack([x, y]))
    lows = ax.transData.transform(np.column_stack([x, y - ci]))[:, 1]
    highs = ax.transData.transform(np.column_stack([x, y + ci]))[:, 1]
    for label in (text for text in ax.texts if isinstance(text, Annotation)):
        box = label.get_window_extent()
        own = ax.transData.transform(label.xy)
        for (cx, cy), low, high in zip(centres, lows, highs, strict=True):
            if np.allclose((cx, cy), own):
                continue
            over_marker = box.x0 < cx + reach and cx - reach < box.x1
            over_marker &= box.y0 < cy + reach and cy - reach < box.y1
            over_bar = box.x0 < cx < box.x1 and box.y0 < high and low < box.y1
            assert not over_marker, (label.get_text(), cx, cy)
            assert not (over_bar and study == "capacity_planning"), (label.get_text(), cx, cy)


@pytest.mark.parametrize("axis", ["linear", "log"])
def test_the_axis_widens_for_the_rightmost_label_on_its_right(drawn, axis):
    """The rightmost point's label had no room on its right and went left, over the point
    before it ("0.75" over the point of 0.5): the x axis now leaves the room, on a log axis
    (memory held over decades) too."""
    summary = QUICKSTART.copy()
    if axis == "log":
        summary["mean_gpu_bytes"] = 2.0 ** np.arange(20, 30)
    figure = _drawn(drawn, summary, [TTL, RATE])
    (ax,) = figure.axes
    assert ax.get_xscale() == axis
    labels = [text for text in ax.texts if isinstance(text, Annotation)]
    last = max(labels, key=lambda label: label.xy[0])
    box, frame = last.get_window_extent(), ax.get_window_extent()
    assert ax.transData.transform(last.xy)[0] < box.x0 and box.x1 <= frame.x1


def test_lines_at_one_place_share_the_label_of_their_value(drawn):
    """Four lines through the same two budgets at nearly the same places named each budget
    four times, in a heap; once is enough. Points of a line at one place share one too."""
    figure = _drawn(drawn, REFUSED, [BUDGET, BACKOFF])
    (ax,) = figure.axes
    labels = sorted(text.get_text() for text in ax.texts if isinstance(text, Annotation))
    assert labels == ["128 MiB", "64 MiB"]
    one_line = REFUSED[REFUSED[BACKOFF] == 0].copy()
    one_line[BUDGET] = [64 * 2**20, 96 * 2**20]  # both hold what the first holds
    one_line["mean_gpu_bytes"], one_line["hit_rate"] = 63.9 * 2**20, 0.5
    figure = _drawn(drawn, one_line, [BUDGET])
    (label,) = [text for text in figure.axes[0].texts if isinstance(text, Annotation)]
    assert label.get_text() == "64 MiB, 96 MiB"


def test_labels_in_a_heap_at_the_origin_stay_within_the_axes(drawn):
    """Points of three lines that hold nothing lie at the origin, where the axes begin: the
    places beside it left of the y axis or below the x axis are outside, and the one inside
    went to the first label. The others sent their labels across the y axis; now they go a
    line or two farther up, each clear of the others."""
    heap = _summary(
        (BUDGET, SESSIONS),
        """
        1 0.5 0 0 0
        2 1 0 0 0
        4 2 0 0 0
        64 0.5 63.5 0.55 0.01
        64 1 63.6 0.42 0.02
        64 2 63.7 0.36 0.01
        """,
        2**20,
    )
    figure = _drawn(drawn, heap, [BUDGET, SESSIONS])
    (ax,) = figure.axes
    figure.tight_layout()
    figure.canvas.draw()
    frame = ax.get_window_extent()
    labels = [text for text in ax.texts if isinstance(text, Annotation)]
    assert sorted(label.get_text() for label in labels) == sorted(
        ["1 MiB", "2 MiB", "4 MiB"] + ["64 MiB"] * 3
    )
    boxes = [label.get_window_extent() for label in labels]
    for label, box in zip(labels, boxes, strict=True):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, label.get_text()
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, label.get_text()
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_a_notebook_draws_the_trade_off_with_the_summarys_own_swept_keys():
    """``tradeoff_figure`` returns what ``plots/`` saves, its swept keys read from the summary
    when not given; None where no run measured the memory held (nothing to draw)."""
    columns = ["point", TTL, RATE, "replications", "mean_gpu_bytes", "hit_rate", "hit_rate_ci95"]
    summary = QUICKSTART.assign(point=range(len(QUICKSTART)))[columns]  # as a study lays it out
    figure = plots.tradeoff_figure(summary, "hit_rate")
    (ax,) = figure.axes
    assert "beside each point: its ttl_fraction" in ax.get_title(loc="left")
    assert [text.get_text() for text in ax.get_legend().get_texts()] == [
        "invalidations.rate_per_s = 0",
        "invalidations.rate_per_s = 0.02",
    ]
    matplotlib.pyplot.close(figure)
    unmeasured = summary.assign(mean_gpu_bytes=np.nan)
    assert plots.tradeoff_figure(unmeasured, "hit_rate") is None


def _budgets(count: int) -> pd.DataFrame:
    """A sweep of ``count`` budgets of 0.1 MiB steps, the hit rate climbing to a level and
    the memory held with it (a little above and below its trend, as measured): the points
    crowd where the budget passes the working set."""
    budgets = (np.arange(count) + 1) * 0.1
    held = np.minimum(budgets * 0.7, 7.0) * (1 - 0.02 * np.sin(budgets))
    hits = 0.77 * (1 - np.exp(-budgets / 2.5))
    rows = "\n".join(
        f"{b:.1f} 1 {h:.4f} {r:.4f} 0.05" for b, h, r in zip(budgets, held, hits, strict=True)
    )
    return _summary((BUDGET, SESSIONS), rows, 2**20)


def test_labels_with_no_room_clear_of_the_others_are_left_out_the_ends_kept(drawn):
    """300 budgets along a line wrote their labels over each other where the points crowd,
    none legible: no two overlap now, a label of each end of the line is there, and the note
    says that only the points with room are named."""
    summary = _budgets(300)
    figure = _drawn(drawn, summary, [BUDGET])
    (ax,) = figure.axes
    labels = [text for text in ax.texts if isinstance(text, Annotation)]
    boxes = [label.get_window_extent() for label in labels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    texts = [label.get_text() for label in labels]
    assert "102.4 KiB" in texts and any(text.endswith(" 30 MiB (206 points)") for text in texts)
    assert 10 < len(labels) < 100  # (some left out, not all)
    assert "beside each point with room for it: its gpu_memory" in ax.get_title(loc="left")
    few = _drawn(drawn, summary.head(8), [BUDGET])
    assert "beside each point: its gpu_memory" in few.axes[0].get_title(loc="left")


@pytest.mark.parametrize(("count", "marked"), [(60, True), (61, False)])
def test_a_line_of_many_points_draws_no_markers(drawn, count, marked):
    """Markers 6 points across, 300 of them along a line, were a row of dots hiding its
    shape and band: beyond 60 a line is drawn alone, on the trade-off and the metric plots."""
    summary = _budgets(count)
    metric = plots.metric_figure(summary, BUDGET, "hit_rate", [BUDGET])
    lines = [_drawn(drawn, summary, [BUDGET]).axes[0].get_lines()[0], *metric.axes[0].get_lines()]
    assert [line.get_marker() not in ("", "None") for line in lines] == [marked, marked]
    matplotlib.pyplot.close(metric)
