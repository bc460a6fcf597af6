"""The summary's confidence intervals: Student's t, right for any number of replications."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.student_t import t95, t_quantile
from nnrpsim.summaries import means_and_intervals, summarize

# Student's t 0.975 quantiles from published tables (df: value).
TABLE = {1: 12.706, 2: 4.303, 10: 2.228, 30: 2.042, 31: 2.040, 40: 2.021, 60: 2.000, 120: 1.980}


@pytest.mark.parametrize(("df", "quantile"), TABLE.items())
def test_t_quantiles(df, quantile):
    assert t95(df) == pytest.approx(quantile, abs=1e-3)


def _student_t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom, its density integrated from 0
    (trapezoids, 40,000 of them): an oracle for the quantiles, found another way."""
    x = np.linspace(0.0, t, 40_001)
    scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(scale - (df + 1) / 2 * np.log1p(x * x / df))
    return 0.5 + float(np.trapezoid(density, x))


@pytest.mark.parametrize("df", range(1, 61))
def test_each_quantile_leaves_two_and_a_half_percent_above_it(df):
    """Each quantile from 1 to 60 degrees of freedom (when they came from a table, a typo in
    one entry was caught by no other test)."""
    assert _student_t_cdf(t95(df), df) == pytest.approx(0.975, abs=1e-4)


def test_t_approaches_the_normal_quantile_from_above():
    values = [t95(df) for df in [*range(1, 100), 150, 300, 600, 1000, 1998]]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert t95(1999) == pytest.approx(1.9612, abs=1e-4)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 30, 200])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.99, 0.999, 0.9999])
def test_any_quantile_leaves_its_tail_above_it(p, df):
    """The warm-up check's wider intervals (Bonferroni's, for many points judged at once)
    need quantiles beyond the table's 0.975: the density integrated to each leaves 1 - p."""
    assert _student_t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-7)


@given(st.floats(0.5, 1 - 1e-9, exclude_min=True))
def test_quantiles_of_one_and_two_degrees_are_their_closed_forms(p):
    """Cauchy's tan(pi (p - 1/2)) for one degree of freedom, (2p - 1) / sqrt(2p(1 - p)) for
    two, far into the tail and near the middle. (Near 1 the tangent's argument is within a
    rounding of pi / 2, where its other form, 1 / tan(pi (1 - p)), is exact.)"""
    cauchy = math.tan(math.pi * (p - 0.5)) if p < 0.75 else 1 / math.tan(math.pi * (1 - p))
    assert t_quantile(p, 1) == pytest.approx(cauchy, rel=1e-12)
    two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    assert t_quantile(p, 2) == pytest.approx(two, rel=1e-12)


@pytest.mark.parametrize("df", [1, 4, 1000])
def test_the_median_is_zero_and_just_above_it_the_quantiles_grow_from_zero(df):
    """The distribution is symmetric about 0; the middle form keeps the quantile just above
    the median exact, where the tail's form would lose it to cancellation."""
    assert t_quantile(0.5, df) == 0.0
    near = t_quantile(0.5 + 1e-12, df)
    density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    assert near == pytest.approx(1e-12 / density, rel=1e-6)


def test_a_quantile_outside_its_range_is_refused():
    with pytest.raises(ValueError, match=r"0\.5 <= p < 1"):
        t_quantile(0.4, 3)
    with pytest.raises(ValueError, match="df >= 1"):
        t_quantile(0.9, 0)


def test_half_width_is_t_times_the_standard_error():
    frame = pd.DataFrame(
        {
            "point": [0, 0, 0, 0, 1] + [2] * 41,
            "m": [1.0, 2.0, 4.0, None, 1.0, *range(41)],  # a failed replication left out
        }
    )
    stats = means_and_intervals(frame, ["point"], ["m", "absent"])
    assert list(stats.columns) == ["m", "m_ci95", "absent", "absent_ci95"]
    assert stats.loc[0, "m_ci95"] == pytest.approx(4.303 * math.sqrt(7 / 3) / math.sqrt(3), 1e-3)
    assert math.isnan(stats.loc[1, "m_ci95"]) and stats.loc[1, "m"] == 1.0  # one: no interval
    many = pd.Series(range(41), dtype=float)
    assert stats.loc[2, "m_ci95"] == pytest.approx(2.021 * many.std() / math.sqrt(41), 1e-3)
    assert stats[["absent", "absent_ci95"]].isna().all().all()


def _oracle(values: list[float]) -> tuple[float, float]:
    """A point's mean and half-width from the definitions, one point at a time."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return math.nan, math.nan
    if len(values) < 2:
        return statistics.fmean(values), math.nan
    return statistics.fmean(values), t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(
        len(values)
    )


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            st.integers(0, 6),  # point
            st.booleans(),  # failed
            st.one_of(st.just(math.nan), st.floats(0, 1e6)),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_a_summary_is_each_points_statistics_of_its_finished_runs(runs):
    """Per point, over the runs that finished: the counts, the mean and the t interval, as
    the definitions give them one point at a time; the swept value is the point's first
    run's."""
    frame = pd.DataFrame(runs, columns=["point", "failed", "hit_rate"])
    frame["replication"] = frame.groupby("point").cumcount()
    frame["seed"] = 7
    frame["wall_s"] = 0.1
    frame["error"] = [("boom" if failed else None) for failed in frame["failed"]]
    frame["key"] = frame["point"] * 10 + frame["replication"]
    summary = summarize(frame.drop(columns="failed"))
    assert summary["point"].tolist() == sorted(frame["point"].unique())
    for row in summary.itertuples():
        mine = frame[frame["point"] == row.point]
        finished = mine[~mine["failed"]]
        assert row.key == mine["key"].iloc[0]
        assert (row.replications, row.failures) == (len(finished), len(mine) - len(finished))
        mean, half = _oracle(finished["hit_rate"].tolist())
        assert row.hit_rate == pytest.approx(mean, rel=1e-9, nan_ok=True)
        assert row.hit_rate_ci95 == pytest.approx(half, rel=1e-6, abs=1e-6, nan_ok=True)
        assert math.isnan(row.p99_latency_ms)  # a metric no run has
