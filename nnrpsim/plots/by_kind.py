"""Where the memory goes and where the savings come from, object kind by object kind."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..display_units import bytes_scale, described
from .notes import runs_text, say_over
from .placement import place_legend

MAX_KIND_POINTS = 12
"""Beyond this many sweep points the bars by kind would not be readable: kinds.csv has them."""


def bytes_by_kind_figure(
    kinds: pd.DataFrame, summary: pd.DataFrame, swept: list[str]
) -> Figure | None:
    """Where the memory goes and where the savings come from: for each sweep point, the mean
    GPU memory each object kind held and the inline bytes its hits kept off the wire, as bars
    stacked by kind (means over the replications). None without kinds, or with more than
    :data:`MAX_KIND_POINTS` points."""
    if kinds.empty or len(summary) > MAX_KIND_POINTS:
        return None
    means = kinds.groupby(["point", "kind"])[["mean_gpu_bytes", "bytes_from_cache"]].mean()
    points = summary["point"].tolist()
    labels = [  # (by column: a row of numbers only is all floats, "point 0.0")
        described(swept, values) or f"point {point}"
        for point, *values in summary[["point", *swept]].itertuples(index=False)
    ]
    fig, axes = plt.subplots(1, 2, figsize=(11, 1.5 + 0.45 * len(points)), sharey=True)
    panels = (
        ("mean_gpu_bytes", "mean GPU memory held"),
        ("bytes_from_cache", "bytes hits kept off the wire"),
    )
    for ax, (metric, what) in zip(axes, panels, strict=True):
        table = means[metric].unstack("kind", fill_value=0.0).reindex(points, fill_value=0.0)
        factor, unit = bytes_scale(table.sum(axis=1).to_numpy())
        left = np.zeros(len(points))
        for kind in table.columns:
            ax.barh(range(len(points)), table[kind] / factor, left=left, label=kind)
            left += table[kind].to_numpy() / factor
        ax.set_xlabel(f"{what} ({unit})")
        ax.grid(axis="x", alpha=0.3)
    runs = runs_text(summary)
    say_over(axes[0], [f"each bar: {runs}, stacked by object kind"] if runs else [])
    axes[0].set_yticks(range(len(points)), labels, fontsize=7)
    axes[0].invert_yaxis()  # point 0 on top, as in summary.csv
    place_legend(axes[1], fontsize=7, title="object kind", title_fontsize=7)
    return fig
