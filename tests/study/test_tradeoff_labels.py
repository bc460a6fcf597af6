"""The labels beside the trade-off plot's points: what they are, and where they go."""

from __future__ import annotations

import matplotlib.pyplot
import numpy as np
import pandas as pd
from matplotlib.text import Annotation

from nnrpsim import plots

TTL, RATE = "host_policy.ttl_fraction", "workload.invalidations.rate_per_s"

# the quickstart study's summary (2026-12-04): two lines of five TTLs close together, so that a
# label placed clear of the other labels only lay over the other line's points
QUICKSTART = pd.DataFrame(
    {
        TTL: [0.05, 0.05, 0.1, 0.1, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75],
        RATE: [0.0, 0.02] * 5,
        "mean_gpu_bytes": [
            *(3268482, 3080435, 4481880, 4108530, 5889361),
            *(5259589, 6688210, 5796744, 6881539, 5986260),
        ],
        "hit_rate": [0.3913, 0.3755, 0.4897, 0.4642, 0.5957, 0.5532, 0.6522, 0.5957, 0.663, 0.6084],
        "hit_rate_ci95": [0.117, 0.106, 0.108, 0.101, 0.094, 0.079, 0.086, 0.064, 0.091, 0.053],
        "replications": 2,
    }
)


def _drawn(monkeypatch, summary: pd.DataFrame, swept: list[str]):
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, folder, name: drawn.append(fig) or [])
    plots._capacity_tradeoff(summary, swept, None, "hit_rate")
    (figure,) = drawn
    figure.canvas.draw()
    return figure


def test_the_plot_says_which_swept_key_labels_its_points(monkeypatch):
    figure = _drawn(monkeypatch, QUICKSTART, [TTL, RATE])
    (ax,) = figure.axes
    assert "beside each point: its ttl_fraction" in ax.get_title(loc="left")
    labels = sorted(text.get_text() for text in ax.texts if isinstance(text, Annotation))
    assert labels == sorted(["0.05", "0.1", "0.25", "0.5", "0.75"] * 2)
    matplotlib.pyplot.close(figure)


def test_a_label_keeps_off_the_other_points(monkeypatch):
    """No label covers the marker of a point other than its own, on either line."""
    figure = _drawn(monkeypatch, QUICKSTART, [TTL, RATE])
    (ax,) = figure.axes
    reach = 3 * figure.dpi / 72  # a marker's half width: 6 points across
    places = QUICKSTART[["mean_gpu_bytes", "hit_rate"]].to_numpy() / [2**20, 1]
    centres = ax.transData.transform(places)
    for label in (text for text in ax.texts if isinstance(text, Annotation)):
        box = label.get_window_extent()
        own = ax.transData.transform(label.xy)
        for centre in centres:
            if np.allclose(centre, own):
                continue
            covered = (
                box.x0 < centre[0] + reach
                and centre[0] - reach < box.x1
                and box.y0 < centre[1] + reach
                and centre[1] - reach < box.y1
            )
            assert not covered, (label.get_text(), centre)
    matplotlib.pyplot.close(figure)
