"""The summary's confidence intervals: Student's t, right for any number of replications."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest

from nnrpsim.results import ci95_half_width, t95

# Student's t 0.975 quantiles from published tables (df: value).
TABLE = {1: 12.706, 2: 4.303, 10: 2.228, 30: 2.042, 31: 2.040, 40: 2.021, 60: 2.000, 120: 1.980}


@pytest.mark.parametrize(("df", "quantile"), TABLE.items())
def test_t_quantiles(df, quantile):
    assert t95(df) == pytest.approx(quantile, abs=1e-3)


def test_t_approaches_the_normal_quantile_from_above():
    values = [t95(df) for df in range(1, 2000)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(1.9612, abs=1e-4)  # df = 1999


def test_half_width_is_t_times_the_standard_error():
    sample = pd.Series([1.0, 2.0, 4.0, None])  # a failed replication is left out
    assert ci95_half_width(sample) == pytest.approx(4.303 * math.sqrt(7 / 3) / math.sqrt(3), 1e-3)
    assert math.isnan(ci95_half_width(pd.Series([1.0])))
    many = pd.Series(range(41), dtype=float)
    assert ci95_half_width(many) == pytest.approx(2.021 * many.std() / math.sqrt(41), 1e-3)
