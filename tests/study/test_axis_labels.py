"""Every numeric key the scenario library sweeps is drawn on an axis that says what it is."""

from __future__ import annotations

import pytest

from nnrpsim import plots
from nnrpsim.scenario import load_scenario, sweep_points
from tests.conftest import ROOT


def _swept_numeric_keys() -> set[str]:
    keys = set()
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        for point in sweep_points(load_scenario(path)):
            keys |= {
                key
                for key, value in point.params.items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            }
    return keys


@pytest.mark.parametrize("key", sorted(_swept_numeric_keys()))
def test_a_swept_numeric_key_has_an_axis_label_of_its_own(key):
    """A swept key drawn along an axis was labelled by its bare name (`host_policy.renew_margin`,
    which says neither what the fraction is of nor that it is one)."""
    assert plots._label(key, "") != key
