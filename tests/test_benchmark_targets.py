"""`make bench` says of each figure with a target whether this run met it."""

from __future__ import annotations

from benchmarks.__main__ import _verdict


def test_each_figure_with_a_target_is_called_met_or_not():
    assert _verdict("model.frames_per_s", 50_000.0).endswith("target >= 50,000: met")
    assert _verdict("model.frames_per_s", 49_999.0).endswith(": NOT MET")
    assert _verdict("engine.expire_1m_ms", 10.5).endswith("target <= 10: NOT MET")
    assert _verdict("sweep.runner_overhead_fraction", 0.05).endswith("target < 0.05: NOT MET")
    assert _verdict("model.frames_per_s_memory_pressure", 1.0) == ""  # no target
