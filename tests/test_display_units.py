"""How numbers are written for people: durations in the unit that suits them, three
figures without an exponent, a share below one that does not round to it."""

from __future__ import annotations

import math

import pytest

from nnrpsim.checks.wording import span_text
from nnrpsim.display_units import about, below_one, durations_text, figures, percent, points_text
from nnrpsim.plain_numbers import separated

NAN = math.nan


@pytest.mark.parametrize(
    ("values_ms", "text"),
    [
        ([2.09, 2.53], "2.09/2.53 ms"),
        ([7_750.0, 38_800.0], "7.75/38.8 s"),  # (.3g of the ms wrote 7.75e+03/3.88e+04)
        ([0.05, 0.2], "50/200 us"),
        ([0.0, 0.0], "0/0 ms"),
        ([NAN, 3.0], "n/a/3 ms"),
        ([NAN, 0.0], "n/a/0 ms"),
        ([NAN, NAN], "n/a"),
    ],
)
def test_durations_take_the_unit_of_the_largest(values_ms, text):
    assert durations_text(values_ms) == text


@pytest.mark.parametrize(
    ("value", "count", "text"),
    [
        (2_394.6, 3, "2,390"),
        (1_234_567.0, 3, "1,230,000"),
        (23.94, 3, "23.9"),
        (0.01, 3, "0.01"),
        (60.0, 3, "60"),
        (111.6, 2, "110"),  # (.2g wrote 1.1e+02 for 100-999: compare's intervals, say)
        (-150.0, 2, "-150"),
        (99.99, 2, "100"),
        (9.96, 2, "10"),
        (9.94, 2, "9.9"),
        (12_345.6, 4, "12,350"),
        (9.99e14, 3, "999,000,000,000,000"),
        (1e15, 3, "1e+15"),  # (from there an exponent: not 38 digits for 3.2e37)
        (-3.21e37, 2, "-3.2e+37"),
    ],
)
def test_figures_without_an_exponent(value, count, text):
    assert figures(value, count) == text


@pytest.mark.parametrize(
    ("fraction", "share", "percent"),
    [
        (0.96, "0.96", "96 %"),
        (0.5, "0.50", "50 %"),
        (0.0, "0.00", "0 %"),
        (1 - 1 / 2_390, "0.9996", "99.96 %"),
        (0.99996, "0.99996", "99.996 %"),
        (1 - 2e-6, "0.999998", "99.9998 %"),
        (1 - 1e-9, "0.999999", "99.9999 %"),  # (cut at six nines, not rounded up to 1)
        (1.0, "0.999999", "99.9999 %"),  # (a float rounded 1 - 1e-17 to it: no logarithm)
    ],
)
def test_a_share_below_one_keeps_decimals_enough_to_stay_below(fraction, share, percent):
    assert below_one(fraction) == (share, percent)


@pytest.mark.parametrize(
    ("share", "text"),
    [
        (0.0, "0 %"),
        (0.0051, "0.51 %"),
        (0.0999, "10 %"),
        (0.5, "50 %"),
        (0.997, "99.7 %"),
        (0.999, "99.9 %"),
        (0.9997, "99.97 %"),
        (0.99998, "99.998 %"),
        (0.9999999994, "over 99.999 %"),  # (not 99.99999994 %)
        (1.0, "100 %"),
    ],
)
def test_percent(share, text):
    assert percent(share) == text


@pytest.mark.parametrize(
    ("indices", "text"),
    [
        ([3], "point 3"),
        ([0, 2], "points 0, 2"),
        (list(range(7)), "points 0, 1, 2, 3, 4, 5 (and 1 more)"),
        (list(range(2_000)), "points 0, 1, 2, 3, 4, 5 (and 1,994 more)"),
    ],
)
def test_points_are_named_by_the_first_six(indices, text):
    assert points_text(indices) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (separated(1_234_567.891, 1), "1,234,567.9"),
        (separated(999_999_999_999_999.0), "999,999,999,999,999"),
        (separated(1e15), "1e+15"),  # (a typo's 1e300 a second wrote 300 digits)
        (separated(-2.5e300, 2), "-2.5e+300"),
        (about(103_499), "~103,000"),
        (about(6.629e303), "~6.63e+303"),
        (span_text(250_000), "250 s"),
        (span_text(1e303), "1e+300 s"),
    ],
)
def test_numbers_are_separated_until_an_exponent_reads_better(text, expected):
    assert text == expected
