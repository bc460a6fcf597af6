"""The lines under ``nnrpsim run``'s table: what its bare means are (over how many
replications, how wide the hit rate's intervals run) and where the points' differences read
sharper."""

import re
import shlex

import numpy as np
import pandas as pd
import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.differences import baseline_item
from nnrpsim.display_units import figures
from nnrpsim.printed_tables import summary_note
from tests.conftest import SMALL_STUDY, write_yaml

COMPARE = (
    "the points share their random numbers: nnrpsim compare RESULTS --baseline KEY=VALUE gives "
    "each point's difference from the point at that value (its other swept values alike), with "
    "sharper intervals"
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


def test_run_prints_the_note_under_its_table_with_a_compare_command_that_runs(
    tmp_path, small_yaml, capsys
):
    """End to end: the widest hit rate interval named is the summary's own, and the compare
    command named, copied to a shell, compares with the first swept key's last value."""
    out = tmp_path / "out folder"  # (a space: the command quotes it)
    assert main(["run", str(small_yaml), "--out", str(out), "--quiet"]) == 0
    *_, first, second, results = capsys.readouterr().out.splitlines()
    widest = pd.read_csv(out / "summary.csv")["hit_rate_ci95"].max()
    assert widest > 0
    assert first == (
        f"means over 2 replications a point; hit_rate's 95 % interval up to ± "
        f"{figures(widest, 2)} (summary.csv has each metric's)"
    )
    command = re.fullmatch(
        r"the points share their random numbers: (nnrpsim compare .*) gives each point's "
        r"difference from the point at that value \(its other swept values alike\), with "
        r"sharper intervals",
        second,
    )[1]
    assert shlex.split(command) == [
        "nnrpsim", "compare", str(out), "--baseline", "ttl_fraction=0.5"
    ]  # fmt: skip
    assert results.startswith("results: ")
    assert main(shlex.split(command)[1:]) == 0
    assert "the point with ttl_fraction=0.5" in capsys.readouterr().out


def test_a_study_sweeping_policy_never_is_compared_against_it(tmp_path, capsys):
    """Inlining everything is the baseline of caching: where the study sweeps it, the
    command compares with it (the first swept key, a TTL, would be a baseline of no note)."""
    document = {
        **SMALL_STUDY,
        "sweep": {
            "grid": {
                "host_policy.ttl_fraction": [0.1, 0.5],
                "host_policy.name": ["never", "best_practice"],  # (the last point's: not it)
            }
        },
    }
    out = tmp_path / "out"
    assert main(["run", str(write_yaml(tmp_path, document)), "--out", str(out), "--quiet"]) == 0
    command = re.search(r"(nnrpsim compare .*) gives each", capsys.readouterr().out)[1]
    assert shlex.split(command)[3:] == ["--baseline", "host_policy.name=never"]
    assert main(shlex.split(command)[1:]) == 0
    printed = capsys.readouterr().out
    assert "the point with host_policy.name=never" in printed


@pytest.mark.parametrize(
    ("key", "values", "item"),
    [
        ("topology.gpu_memory", [None, "512MiB"], "gpu_memory=512 MiB"),
        ("topology.gpu_memory", ["512MiB", None], "gpu_memory=unlimited"),
        ("topology.eviction", ["lru", "none"], "eviction=none"),  # (a policy, no null)
        # as the tables write it, 0.666667, it would name no point: the value itself
        ("host_policy.ttl_fraction", [0.5, 2 / 3], "ttl_fraction=0.6666666666666666"),
    ],
)
def test_the_baseline_named_is_one_compare_reads_as_that_point(tmp_path, key, values, item):
    document = {
        **SMALL_STUDY,
        "study": {**SMALL_STUDY["study"], "duration": "10s", "warmup": "0s"},
        "sweep": {"grid": {key: values}},
    }
    out = tmp_path / "out"
    nnrpsim.run(write_yaml(tmp_path, document), out=out, jobs=1, progress=False)
    summary = pd.read_parquet(out / "summary.parquet")
    assert baseline_item(out, key, summary[key].iloc[-1]) == item
    differences = nnrpsim.compare(out, item)
    assert differences["baseline_point"].tolist() == [1]


def test_a_manifest_that_cannot_be_read_leaves_the_note_its_general_command(
    tmp_path, small_yaml, capsys, monkeypatch
):
    """The command is a hint: where the manifest cannot say how to write the baseline (it
    changed under the study, say), the note names compare in general and the study ends as
    it ran, not with an error."""

    def unreadable(folder, purpose):
        raise nnrpsim.ScenarioError(str(folder / "manifest.json"), "cannot be read")

    monkeypatch.setattr("nnrpsim.differences.recorded_scenario", unreadable)
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    *_, second, results = capsys.readouterr().out.splitlines()
    assert second == COMPARE and results.startswith("results: ")
