"""The lines under ``nnrpsim run``'s table: what its bare means are (over how many
replications, how wide the hit rate's intervals run) and where the points' differences read
sharper."""

import numpy as np
import pandas as pd

from nnrpsim.cli import main
from nnrpsim.display_units import figures
from nnrpsim.printed_tables import summary_note

COMPARE = (
    "the points share their random numbers: nnrpsim compare --baseline KEY=VALUE gives their "
    "differences with sharper intervals"
)


def _summary(replications: list[int], half_widths: list[float]) -> pd.DataFrame:
    n = len(replications)
    return pd.DataFrame(
        {
            "point": range(n),
            "host_policy.ttl_fraction": np.linspace(0.1, 0.9, n),
            "replications": replications,
            "failures": [0] * n,
            "hit_rate": [0.5] * n,
            "hit_rate_ci95": half_widths,
        }
    )


def test_the_note_gives_the_replications_and_the_widest_hit_rate_interval():
    note = summary_note(_summary([2, 2, 2], [0.0041, 0.1234, 0.05]))
    assert note.splitlines() == [
        "means over 2 replications a point; hit_rate's 95 % interval up to ± 0.12 "
        "(summary.csv has each metric's)",
        COMPARE,
    ]


def test_points_with_failed_runs_give_the_range_of_replications():
    """A point whose runs failed has fewer replications; one with none finished counts not."""
    summary = _summary([3, 2, 0], [0.01, 0.02, np.nan])
    assert summary_note(summary).splitlines()[0].startswith("means over 2-3 replications")


def test_one_replication_has_no_interval_to_give():
    assert summary_note(_summary([1, 1], [np.nan, np.nan])) == (
        "one replication a point: no intervals (study.replications: 2 or more)"
    )


def test_a_single_point_has_no_differences_to_compare():
    note = summary_note(_summary([4], [0.02]))
    assert note == (
        "means over 4 replications a point; hit_rate's 95 % interval up to ± 0.02 "
        "(summary.csv has each metric's)"
    )


def test_a_summary_without_intervals_says_only_the_replications():
    """A summary an earlier version wrote may lack a metric's interval: none is made up."""
    summary = _summary([2, 2], [0.1, 0.1]).drop(columns="hit_rate_ci95")
    assert summary_note(summary).splitlines() == ["means over 2 replications a point", COMPARE]


def test_no_finished_run_no_note():
    assert summary_note(_summary([0, 0], [np.nan, np.nan])) == ""
    assert summary_note(pd.DataFrame()) == ""


def test_the_note_wraps_to_the_terminal_as_the_table_does():
    note = summary_note(_summary([2, 2], [0.01, 0.2]), width=50)
    assert max(map(len, note.splitlines())) <= 50
    assert " ".join(note.split()) == " ".join(summary_note(_summary([2, 2], [0.01, 0.2])).split())


def test_run_prints_the_note_under_its_table(tmp_path, small_yaml, capsys):
    """End to end: the widest hit rate interval named is the summary's own."""
    out = tmp_path / "out"
    assert main(["run", str(small_yaml), "--out", str(out), "--quiet"]) == 0
    *_, first, second, results = capsys.readouterr().out.splitlines()
    widest = pd.read_csv(out / "summary.csv")["hit_rate_ci95"].max()
    assert widest > 0
    assert first == (
        f"means over 2 replications a point; hit_rate's 95 % interval up to ± "
        f"{figures(widest, 2)} (summary.csv has each metric's)"
    )
    assert second == COMPARE and results.startswith("results: ")
