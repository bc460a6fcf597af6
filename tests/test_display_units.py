"""How numbers are written for people: durations in the unit that suits them."""

from __future__ import annotations

import math

import pytest

from nnrpsim.display_units import durations_text

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
