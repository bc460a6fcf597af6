"""The short names legends, notes and the printed summary give swept keys."""

from __future__ import annotations

import pandas as pd

from nnrpsim import plots
from nnrpsim.scenario.key_catalog import RESULT_COLUMNS, SHORT_KEYS

SIZE = "workload.objects.size.median"


def test_each_short_name_is_an_ending_of_its_key_and_names_it_alone():
    assert len(set(SHORT_KEYS.values())) == len(SHORT_KEYS)
    for key, name in SHORT_KEYS.items():
        assert key == name or key.endswith(f".{name}"), key
        assert name not in RESULT_COLUMNS, key


def test_a_vague_ending_says_what_it_is_of():
    """``median`` or ``sigma`` alone read as statistics of the results, ``format`` or
    ``column`` as nothing in particular: each takes its parent's name."""
    assert SHORT_KEYS[SIZE] == "size.median"
    assert SHORT_KEYS["workload.objects.size.sigma"] == "size.sigma"
    assert SHORT_KEYS["workload.trace.format"] == "trace.format"
    assert SHORT_KEYS["workload.sessions.arrivals.column"] == "arrivals.column"
    assert SHORT_KEYS["host_policy.ttl_fraction"] == "ttl_fraction"  # (clear alone: kept)


def test_the_trade_off_of_a_size_sweep_says_its_labels_are_sizes(drawn):
    """Over points that are each the mean of replications, "beside each point: its median"
    read as the median of those runs."""
    summary = pd.DataFrame(
        {
            SIZE: [256.0, 4096.0, 65536.0],
            "mean_gpu_bytes": [1e5, 1e6, 1e7],
            "hit_rate": [0.2, 0.5, 0.7],
            "hit_rate_ci95": [0.01, 0.02, 0.01],
            "replications": 2,
        }
    )
    plots._capacity_tradeoff(summary, [SIZE], None, "hit_rate")
    (figure,) = drawn
    assert figure.axes[0].get_title(loc="left").endswith("beside each point: its size.median")
