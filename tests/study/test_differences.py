"""Paired differences from a baseline point (``nnrpsim compare``): each point's runs less its
baseline point's, replication by replication, where the common random numbers make the
difference sharper than either point's own interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.differences import paired_differences
from nnrpsim.student_t import t95
from tests.conftest import SMALL_STUDY

TTL, BUDGET = "host_policy.ttl_hint", "topology.gpu_memory"


def _runs() -> pd.DataFrame:
    """Two swept keys (a TTL, and a budget with a null: unlimited), three replications each;
    point 1's second replication failed. No run has a latency (as none on the vector
    engine)."""
    rows = []
    for point, (ttl, budget) in enumerate(
        [(5_000.0, 2**20), (5_000.0, np.nan), (30_000.0, 2**20), (30_000.0, np.nan)]
    ):
        for replication in range(3):
            failed = point == 1 and replication == 1
            rows.append(
                {
                    "point": point,
                    "replication": replication,
                    "seed": replication,
                    TTL: ttl,
                    BUDGET: budget,
                    "hit_rate": np.nan if failed else 0.1 * point + 0.01 * replication**2,
                    "wire_bytes": np.nan if failed else 1000.0 * point + replication,
                    "p50_latency_ms": np.nan,
                    "error": "boom" if failed else None,
                    "wall_s": 0.1,
                }
            )
    return pd.DataFrame(rows)


def test_each_point_less_its_baseline_point_replication_by_replication():
    runs = _runs()
    table = paired_differences(runs, {BUDGET: np.nan}).set_index("point")
    # the unlimited points are the baselines; each point with a budget has its TTL's
    assert table.index.tolist() == [0, 2] and table["baseline_point"].tolist() == [1, 3]
    assert table[TTL].tolist() == [5_000.0, 30_000.0]
    assert table["pairs"].tolist() == [2, 3]  # (point 1's failed replication pairs with none)
    assert table["p50_latency_ms"].isna().all()  # (a metric no run has pairs nothing away)
    # point 0 less point 1, replications 0 and 2: -0.1 each; point 2 less 3: -0.1 each
    np.testing.assert_allclose(table["hit_rate"], [-0.1, -0.1])
    assert table["hit_rate_ci95"].tolist() == pytest.approx([0, 0], abs=1e-12)
    by_ttl = paired_differences(runs, {TTL: 30_000.0}).set_index("point")
    assert by_ttl.index.tolist() == [0, 1] and by_ttl["baseline_point"].tolist() == [2, 3]
    differences = [-2000.0, -2000.0, -2000.0]  # wire_bytes: point less point + 2
    assert by_ttl.loc[0, "wire_bytes"] == pytest.approx(np.mean(differences))
    hit = [(0.0 - 0.2) + 0.0, (0.0 - 0.2), (0.04 - 0.2 - 0.04)]
    assert by_ttl.loc[0, "hit_rate"] == pytest.approx(np.mean(hit))
    point_1 = np.array([0.1 - 0.3, 0.14 - 0.34])  # replications 0 and 2
    half = t95(1) * point_1.std(ddof=1) / math.sqrt(2)
    assert by_ttl.loc[1, ["hit_rate", "hit_rate_ci95"]].tolist() == pytest.approx(
        [point_1.mean(), half]
    )


def test_a_baseline_that_is_not_swept_or_not_among_the_values_is_named():
    runs = _runs()
    with pytest.raises(nnrpsim.ScenarioError, match=r"host_policy.name is not a swept key"):
        paired_differences(runs, {"host_policy.name": "never"})
    with pytest.raises(nnrpsim.ScenarioError, match=r"20 s is not one of its swept values"):
        paired_differences(runs, {TTL: 20_000.0})
    # a sweep of 300 budgets listed them all, a line of 2,900 characters: the first six
    first = runs[runs["point"] == 0]
    many = pd.concat([first.assign(point=i, **{BUDGET: (i + 1) * 2**20}) for i in range(300)])
    with pytest.raises(nnrpsim.ScenarioError) as refused:
        paired_differences(many, {BUDGET: 2**30})
    assert str(refused.value) == (
        "--baseline topology.gpu_memory: 1 GiB is not one of its swept values (1 MiB, 2 MiB, "
        "3 MiB, 4 MiB, 5 MiB, 6 MiB (and 294 more))"
    )


def test_where_no_point_has_a_baseline_the_error_says_why():
    runs = _runs()
    # every point left holds the baseline's TTL: none differs from it
    with pytest.raises(nnrpsim.ScenarioError, match=r"every sweep point has host_policy.ttl_h"):
        paired_differences(runs[runs[TTL] == 5_000.0], {TTL: 5_000.0})
    # zipped: the TTL never changes without the budget
    zipped = runs[runs["point"].isin([0, 3])]
    with pytest.raises(nnrpsim.ScenarioError, match=r"differs from another in host_policy.tt"):
        paired_differences(zipped, {TTL: 5_000.0})
    # the pairs exist, but a failed run leaves none finished
    failed = runs.copy()
    failed.loc[failed["point"] == 0, ["error", "hit_rate", "wire_bytes"]] = ["boom", np.nan, np.nan]
    with pytest.raises(nnrpsim.ScenarioError, match=r"no sweep point has a baseline point with f"):
        paired_differences(failed[failed["point"].isin([0, 1])], {BUDGET: np.nan})


def test_compare_reads_values_as_the_scenario_does_and_pairs_sharper_than_either_point(
    tmp_path, capsys
):
    """The small study: a lease TTL hint of a tenth of the session against half of it. Runs
    of one replication share their sessions and references, so the difference of two
    points' hit rates varies less than either: its interval is narrower than theirs."""
    study = {**SMALL_STUDY, "study": {**SMALL_STUDY["study"], "replications": 4}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(study))
    result = nnrpsim.run(path, out=tmp_path / "out", jobs=2, progress=False)
    table = nnrpsim.compare(tmp_path / "out", "host_policy.ttl_fraction=0.5").set_index("point")
    summary = result.summary.set_index("point")
    assert table.index.tolist() == [0, 1] and table["baseline_point"].tolist() == [2, 3]
    for point, base in ((0, 2), (1, 3)):
        row = table.loc[point]
        expected = summary.loc[point, "hit_rate"] - summary.loc[base, "hit_rate"]
        assert row["hit_rate"] == pytest.approx(expected) and row["pairs"] == 4
        own = min(summary.loc[[point, base], "hit_rate_ci95"])
        assert row["hit_rate_ci95"] < 0.8 * own  # (unpaired: about 1.4 times as wide)
    assert (
        main(["compare", str(tmp_path / "out"), "--baseline", "host_policy.ttl_fraction=0.5"]) == 0
    )
    *rows, footer = capsys.readouterr().out.splitlines()
    assert rows[0].split()[:5] == [
        "point",
        "ttl_fraction",
        "invalidations.rate_per_s",
        "baseline_point",
        "pairs",
    ]
    first = rows[1].split()
    assert first[:5] == ["0", "0.1", "0", "2", "4"]
    assert first[5] == f"{table.loc[0, 'hit_rate']:+.4g}" and first[6] == "±"
    assert "host_policy.ttl_fraction=0.5" in footer


@pytest.mark.parametrize(
    ("baseline", "error"),
    [
        ("host_policy.ttl_fraction", "error: --baseline: expected KEY=VALUE"),
        ("host_policy.name=never", "error: --baseline: host_policy.name is not a swept key"),
        ("host_policy.ttl_fraction=0.3", "error: --baseline host_policy.ttl_fraction: 0.3 is not"),
        ("host_policy.ttl_fraction=-1", "error: --baseline host_policy.ttl_fraction: "),
        ("host_policy.ttl_fractio=0.5", "error: --baseline host_policy.ttl_fractio: unknown key"),
    ],
)
def test_a_bad_baseline_is_one_line_and_status_2(tmp_path, small_yaml, capsys, baseline, error):
    nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "out"), "--baseline", baseline]) == 2
    out, err = capsys.readouterr()
    assert not out and err.startswith(error) and err.count("\n") == 1


def test_a_baseline_named_as_the_tables_name_its_key_is_the_same_baseline(
    tmp_path, small_yaml, capsys
):
    """The summary's and compare's headers name a swept key by its short name
    (``ttl_fraction``); a baseline written so is that key's, and one key given twice, by
    either name, is an error rather than the last one kept."""
    nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    full = ["host_policy.ttl_fraction=0.5", "workload.invalidations.rate_per_s=0"]
    short = ["ttl_fraction=0.5", "invalidations.rate_per_s=0"]
    pd.testing.assert_frame_equal(
        nnrpsim.compare(tmp_path / "out", short), nnrpsim.compare(tmp_path / "out", full)
    )
    capsys.readouterr()
    twice = ["--baseline", "ttl_fraction=0.5", "--baseline", "host_policy.ttl_fraction=0.1"]
    assert main(["compare", str(tmp_path / "out"), *twice]) == 2
    assert capsys.readouterr().err == "error: --baseline host_policy.ttl_fraction: given twice\n"


def test_a_null_swept_is_named_by_its_word_in_the_tables(tmp_path):
    """The tables show a null budget as ``unlimited`` (a null TTL hint as ``none``): a
    baseline written so is the null; ``eviction=none``, a policy, stays the word."""
    study = {
        **SMALL_STUDY,
        "sweep": {
            "grid": {"topology.gpu_memory": [None, "64KiB"], "topology.eviction": ["lru", "none"]}
        },
    }
    nnrpsim.run(study, out=tmp_path / "out", jobs=1, progress=False)
    pd.testing.assert_frame_equal(
        nnrpsim.compare(tmp_path / "out", "gpu_memory=unlimited"),
        nnrpsim.compare(tmp_path / "out", "topology.gpu_memory=null"),
    )
    by_policy = nnrpsim.compare(tmp_path / "out", "eviction=none")
    assert (by_policy["topology.eviction"] == "lru").all() and len(by_policy) == 2
    with pytest.raises(nnrpsim.ScenarioError, match=r"malformed duration 'none'"):
        nnrpsim.compare(tmp_path / "out", ["eviction=lru", "ttl_hint=none"])  # (not swept)


def test_a_folder_without_its_manifest_is_named(tmp_path, small_yaml, capsys):
    """The baseline's values are read as the study's scenario reads them (``45s``: 45000.0
    ms), which the manifest records: without it, ``45s`` was text, and matched no value. A
    manifest missing, damaged or without a scenario is said as such."""
    nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    manifest = tmp_path / "out/manifest.json"
    manifest.unlink()
    capsys.readouterr()
    for text, says in (
        (None, "no such file: not a results folder?"),
        ("[]", "records no scenario to read the baseline's values by"),
    ):
        if text is not None:
            manifest.write_text(text)
        assert (
            main(["compare", str(tmp_path / "out"), "--baseline", "host_policy.ttl_fraction=0.5"])
            == 2
        )
        assert capsys.readouterr().err == f"error: {manifest}: {says}\n"


def test_compare_writes_every_metric_to_csv_and_refuses_a_path_it_cannot_write(
    tmp_path, small_yaml, capsys
):
    nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    args = ["compare", str(tmp_path / "out"), "--baseline", "host_policy.ttl_fraction=0.5"]
    capsys.readouterr()
    assert main([*args, "--csv", str(tmp_path / "d.csv")]) == 0
    assert capsys.readouterr().out.endswith(f"every metric's differences: {tmp_path / 'd.csv'}\n")
    written = pd.read_csv(tmp_path / "d.csv")
    expected = nnrpsim.compare(tmp_path / "out", "host_policy.ttl_fraction=0.5")
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    for path, reason in (
        (tmp_path, f"{tmp_path} is a folder, not a file"),
        (tmp_path / "none/d.csv", f"cannot write {tmp_path / 'none/d.csv'}: "),
        (tmp_path / ("x" * 300), f"cannot write {tmp_path / ('x' * 300)}: File name too long"),
    ):
        assert main([*args, "--csv", str(path)]) == 2
        out, err = capsys.readouterr()
        assert not out and err.startswith(f"error: --csv: {reason}") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "out", "small.yaml"]


def test_csv_replaces_only_an_empty_file_or_compares_own(tmp_path, small_yaml, capsys):
    """``--csv`` wrote over any file: ``--csv small.yaml`` replaced the scenario."""
    nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    args = ["compare", str(tmp_path / "out"), "--baseline", "host_policy.ttl_fraction=0.5"]
    scenario = small_yaml.read_bytes()
    assert main([*args, "--csv", str(small_yaml)]) == 2
    assert capsys.readouterr().err == (
        f"error: --csv: {small_yaml} holds something other than compare's differences: choose "
        "another file, or remove it\n"
    )
    assert small_yaml.read_bytes() == scenario
    summary = tmp_path / "summary.csv"  # a copy of the study's: its header begins with point
    summary.write_bytes(written := (tmp_path / "out" / "summary.csv").read_bytes())
    assert written.startswith(b"point,") and main([*args, "--csv", str(summary)]) == 2
    assert "holds something other than compare's" in capsys.readouterr().err
    assert summary.read_bytes() == written
    empty, earlier = tmp_path / "empty.csv", tmp_path / "earlier.csv"
    empty.touch()
    earlier.write_text("point,ttl_fraction,baseline_point,pairs,hit_rate\n0,0.1,1,2,0.5\n")
    expected = nnrpsim.compare(tmp_path / "out", "host_policy.ttl_fraction=0.5")
    for path in (empty, earlier):
        assert main([*args, "--csv", str(path)]) == 0
        pd.testing.assert_frame_equal(pd.read_csv(path), expected, check_dtype=False)


def test_without_a_baseline_compare_takes_the_one_run_names(tmp_path, small_yaml, capsys):
    """No ``--baseline``: the first swept key at its last point's value, as the note under
    run's table writes it out; the same differences as that baseline named."""
    out = tmp_path / "out"
    nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    named, default = nnrpsim.compare(out, "ttl_fraction=0.5"), nnrpsim.compare(out)
    pd.testing.assert_frame_equal(default, named)
    assert default.attrs["baseline"] == named.attrs["baseline"] == ["ttl_fraction=0.5"]
    capsys.readouterr()
    assert main(["compare", str(out)]) == 0
    assert "the point with ttl_fraction=0.5 and its other" in capsys.readouterr().out


def test_without_a_baseline_a_swept_never_is_the_baseline(tmp_path):
    """Inlining everything is the baseline of caching, wherever the study lists it; a study
    that sweeps policies but not never is compared with its last point's, as for any key."""
    for names, baseline, pairs in (
        (["never", "always"], "never", [[1, 0]]),
        (["always", "never"], "never", [[0, 1]]),
        (["always", "best_practice"], "best_practice", [[0, 1]]),
    ):
        document = {**SMALL_STUDY, "sweep": {"grid": {"host_policy.name": names}}}
        path = tmp_path / f"{'-'.join(names)}.yaml"
        path.write_text(yaml.safe_dump(document))
        nnrpsim.run(path, out=tmp_path / path.stem, jobs=1, progress=False)
        differences = nnrpsim.compare(tmp_path / path.stem)
        assert differences.attrs["baseline"] == [f"host_policy.name={baseline}"]
        assert differences[["point", "baseline_point"]].values.tolist() == pairs
        if baseline == "never":
            assert (differences["hit_rate"] > 0).all()  # (always caches; never hits nothing)


def test_a_study_without_a_sweep_has_nothing_to_compare(tmp_path, capsys):
    document = {**SMALL_STUDY, "sweep": None}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(document))
    nnrpsim.run(tmp_path / "s.yaml", out=tmp_path / "out", jobs=1, progress=False)
    assert main(["compare", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "error: --baseline: the study sweeps no key: it has no points to compare\n"
    )
