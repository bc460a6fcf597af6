"""Scenario units: what each unit a scenario may write is worth, in any case."""

from __future__ import annotations

import pytest

from nnrpsim.scenario.units import parse_duration_ms, parse_rate, parse_size

SIZES = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
SIZES |= {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
DURATIONS_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "sec": 1e3, "min": 60e3, "h": 3600e3}
RATES = {"B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}  # bytes a second
RATES |= {"bit/s": 1 / 8, "kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8, "Gbit/s": 1e9 / 8}
RATES |= {"bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8}


@pytest.mark.parametrize(
    ("parse", "units"),
    [(parse_size, SIZES), (parse_duration_ms, DURATIONS_MS), (parse_rate, RATES)],
    ids=["size", "duration", "rate"],
)
def test_each_unit_is_worth_what_its_name_says_in_any_case(parse, units):
    for unit, worth in units.items():
        for written in (f"3{unit}", f" 3 {unit.upper()} "):
            assert parse(written) == pytest.approx(3 * worth, rel=1e-12), written


def test_a_size_is_the_nearest_whole_byte():
    rounded = {"0.7B": 1, "1.9999999B": 2, "0.3KiB": 307, "2.5kB": 2500}
    assert {text: parse_size(text) for text in rounded} == rounded
