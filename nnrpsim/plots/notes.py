"""What a plot says over its axes: what a point and its band or bars are, and what it
leaves out."""

from __future__ import annotations

import pandas as pd

from ..scenario.key_catalog import SHORT_KEYS


def interval_note(
    ax,
    summary: pd.DataFrame,
    drawn_as: str,
    lines: tuple[int, int] = (0, 0),
    labelled_by: str | None = None,
    some_unlabelled: bool = False,
) -> None:
    """Say over the plot what a point and its band or bars are: a mean over how many
    replications, with its 95 % t interval (two replications give a wide one); nothing
    for a summary that does not say (one made by hand). ``lines``: how many lines are drawn
    of how many there are, said when fewer (:func:`.lines.spread`). ``labelled_by``: the swept key
    whose value is written beside each point (a bare "0.25" does not say what it is);
    ``some_unlabelled``: beside those with room for it (:func:`.placement.label_points`)."""
    notes = []
    runs = runs_text(summary)
    if runs == ONE_RUN:
        notes.append(f"each point: {ONE_RUN} (no confidence interval)")
    elif runs is not None:
        notes.append(f"each point: {runs}; {drawn_as}: its 95 % confidence interval")
    if labelled_by is not None:
        which = " with room for it" if some_unlabelled else ""
        notes.append(f"beside each point{which}: its {SHORT_KEYS.get(labelled_by, labelled_by)}")
    drawn, there_are = lines
    if drawn < there_are:
        notes.append(
            f"{drawn} of the {there_are} lines, spread over the other swept values "
            "(summary.csv has them all)"
        )
    say_over(ax, notes)


ONE_RUN = "one replication"


def runs_text(summary: pd.DataFrame) -> str | None:
    """What a point of the summary is: :data:`ONE_RUN`, or the mean of how many ("1-2", where
    a run failed); None for a summary that does not say."""
    if "replications" not in summary:
        return None
    counts = summary["replications"].dropna().astype(int)
    least, most = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    if most <= 1:
        return ONE_RUN
    return f"the mean of {least if least == most else f'{least}-{most}'} replications"


def say_over(ax, notes: list[str]) -> None:
    """Notes on what the plot shows, over it, small and grey, a line each."""
    if notes:
        ax.set_title("\n".join(notes), fontsize=7, loc="left", color="0.35")
