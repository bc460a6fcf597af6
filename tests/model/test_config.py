"""A configuration built from Python (a notebook's) is checked as a scenario file is: a number
the run cannot use is refused when the configuration is built, naming the field. Every
comparison with NaN is false, so a check written ``value < 0`` lets it through."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nnrpsim.model import (
    FaultConfig,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    ServerConfig,
    WorkloadConfig,
    simulate,
)
from nnrpsim.namespaces import MAX_HOSTS, MAX_SHARED_NAMESPACES, PRIVATE_NAMESPACE_BASE

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (LinkConfig, "latency_ms"),
        (LinkConfig, "bandwidth_bytes_per_ms"),
        (LinkConfig, "retransmit_timeout_ms"),
        (ServerConfig, "per_operation_ms"),
        (ServerConfig, "sweep_interval_ms"),
        (WorkloadConfig, "session_rate_per_s"),
        (WorkloadConfig, "zipf_alpha"),
        (FaultConfig, "restart_at_ms"),
        (FaultConfig, "memory_pressure_at_ms"),
        (ModelConfig, "duration_ms"),
        (ModelConfig, "warmup_ms"),
        (ModelConfig, "operation_timeout_ms"),
        (PolicyConfig, "min_object_bytes"),
        (PolicyConfig, "min_expected_reuse"),
    ],
)
def test_nan_and_negative_numbers_are_refused_by_name(config, field):
    for value in (NAN, -1):
        with pytest.raises(ValueError, match=f"^{field} must be "):
            config(**{field: value})


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (ModelConfig, "duration_ms"),  # the run would never end
        (WorkloadConfig, "session_rate_per_s"),
        (WorkloadConfig, "operation_rate_per_s"),
        (ServerConfig, "per_inline_byte_ms"),
        (ModelConfig, "operation_timeout_ms"),
    ],
)
def test_infinity_is_refused_where_it_means_nothing(config, field):
    with pytest.raises(ValueError, match=f"^{field} must be finite and "):
        config(**{field: INF})


def test_an_infinitely_fast_link_is_an_instant_one():
    """Infinite bandwidth is what the tests against closed forms use: no serialisation delay
    (and with no latency and no server time, an operation takes no time at all)."""
    instant = LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=INF)
    free = ServerConfig(per_operation_ms=0.0, per_inline_byte_ms=0.0, per_put_byte_ms=0.0)
    config = ModelConfig(duration_ms=5_000.0, uplink=instant, downlink=instant, server=free)
    result = simulate(config, 1)
    assert result.counters["hot_path_frames"] > 0 and result.violations == 0
    assert (result.operations["latency_ms"] == 0).all()


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (ModelConfig, "hosts"),
        (ServerConfig, "workers"),
        (WorkloadConfig, "shared_objects_per_namespace"),
        (WorkloadConfig, "max_in_flight_operations"),
        (PolicyConfig, "min_object_bytes"),
    ],
)
def test_a_count_must_be_a_whole_number(config, field):
    """A count of 2.5 (or NaN, or True) failed deep in the run; numpy's integers are counts."""
    for value in (2.5, NAN, True):
        with pytest.raises(ValueError, match=f"^{field} must be a whole number, got "):
            config(**{field: value})
    assert getattr(config(**{field: np.int64(3)}), field) == 3


def test_namespaces_and_hosts_stay_below_where_their_ranges_would_meet():
    """Shared namespaces count up from 1, each host's private one from 2^20: one more shared
    namespace would be host 0's, and its objects' identities those of host 0's sessions."""
    assert MAX_SHARED_NAMESPACES == PRIVATE_NAMESPACE_BASE - 1
    WorkloadConfig(namespaces=MAX_SHARED_NAMESPACES)
    with pytest.raises(ValueError, match=r"^namespaces must be at most 1,048,575$"):
        WorkloadConfig(namespaces=MAX_SHARED_NAMESPACES + 1)
    assert PRIVATE_NAMESPACE_BASE + MAX_HOSTS - 1 == 0xFFFF_FFFF  # the last host's, a u32
    with pytest.raises(ValueError, match=r"^hosts must be at most 4,293,918,720$"):
        ModelConfig(hosts=MAX_HOSTS + 1)
