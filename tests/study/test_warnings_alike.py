"""Warnings that differ in their numbers alone (a swept value and what follows from it) are
one line beyond three, each number that differs given as its range."""

from __future__ import annotations

from nnrpsim.checks.wording import warnings_by_text


def _hint(seconds: int) -> str:
    return f"host_policy.ttl_hint is {seconds:,} s, above topology.ttl_ceiling (3,600 s)"


def test_three_texts_alike_stay_apart_in_their_order():
    found = [(_hint(4_000), 0), ("a rule of its own", 1), (_hint(5_000), 2), (_hint(4_000), 3)]
    assert warnings_by_text(found, 5) == [
        f"warning: points 0, 3: {_hint(4_000)}",
        "warning: point 1: a rule of its own",
        f"warning: point 2: {_hint(5_000)}",
    ]


def test_more_are_one_line_in_the_place_of_the_first_with_the_ranges():
    hints = {0: 12_500, 2: 3_601, 3: 4_000, 4: 9_000, 5: 4_000}
    found = [(_hint(seconds), point) for point, seconds in hints.items()]
    found.insert(1, ("a rule of its own", 1))
    assert warnings_by_text(found, 7) == [
        "warning: points 0, 2, 3, 4, 5: host_policy.ttl_hint is 3,601 to 12,500 s, above "
        "topology.ttl_ceiling (3,600 s) (each point by its own numbers, in these ranges)",
        "warning: point 1: a rule of its own",
    ]


def test_decimals_and_numbers_alike_keep_their_writing_and_other_words_stay_apart():
    texts = [f"{share} % of 2 hosts at 0.5 s" for share in ("1.5", "10.25", "0.75", "3")]
    merged = "0.75 to 10.25 % of 2 hosts at 0.5 s (each point by its own numbers, in these ranges)"
    assert warnings_by_text([(t, i) for i, t in enumerate(texts)], 4) == [
        f"warning: all points: {merged}"
    ]
    other = [(f"{n} hosts", i) for i, n in enumerate(range(4))] + [("5 servers", 4)]
    assert warnings_by_text(other, 5)[-1] == "warning: point 4: 5 servers"


def test_a_number_with_an_exponent_is_one_number_of_the_range():
    texts = [f"keep {n} workers busy" for n in ("2", "9.98e+204", "1e-05", "410")]
    assert warnings_by_text([(t, i) for i, t in enumerate(texts)], 4) == [
        "warning: all points: keep 1e-05 to 9.98e+204 workers busy (each point by its own "
        "numbers, in these ranges)"
    ]
