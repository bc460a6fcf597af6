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


@pytest.mark.parametrize(
    ("config", "field", "refused", "accepted"),
    [
        (LinkConfig, "loss", (1.0, -0.01), (0.0, 0.99)),
        (ServerConfig, "default_lease_ttl_ms", (0, 2**32), (1, 2**32 - 1)),
        (ServerConfig, "workers", (0,), (1, None)),
        (ServerConfig, "sweep_interval_ms", (0.999,), (1.0, 1.5)),  # (the clock in whole ms)
        (ModelConfig, "sample_interval_ms", (0.999,), (1.0, 1.5)),  # (samples on whole ms)
        (PolicyConfig, "ttl_fraction", (0.0, 10.5), (0.01, 10.0)),
        (PolicyConfig, "renew_margin", (-0.1, 1.1), (0.0, 1.0)),
        (PolicyConfig, "ttl_hint_ms", (-1, 2**32), (0, 2**32 - 1)),
        (PolicyConfig, "connection_ttl_ms", (0, 2**32), (1, 2**32 - 1)),
        (PolicyConfig, "refused_backoff_ms", (-1.0, INF), (0.0, 1e9)),
        (WorkloadConfig, "max_in_flight_operations", (0, 2**16), (1, 2**16 - 1)),
        (WorkloadConfig, "private_dependency_share", (-0.1, 1.1), (0.0, 1.0)),
        (FaultConfig, "memory_pressure_fraction", (0.0, 1.5), (0.01, 1.0)),
        (ModelConfig, "routing", ("random",), ("round_robin", "hash", "least_sessions")),
    ],
)
def test_a_bounded_field_refuses_just_outside_its_range_and_takes_its_ends(
    config, field, refused, accepted
):
    """A bound written one off (``<`` for ``<=``) refuses a value the protocol allows or lets
    through one it cannot carry (a TTL past the u32 of its field)."""
    for value in refused:
        with pytest.raises(ValueError, match=rf"^{field} must be .*, got {value!r}$"):
            config(**{field: value})
    for value in accepted:
        assert getattr(config(**{field: value}), field) == value


@pytest.mark.parametrize(
    ("config", "values", "message"),
    [
        (WorkloadConfig, {"shared_kinds": ()}, "shared_kinds must name at least one object kind"),
        (WorkloadConfig, {"private_kinds": ((10, 1.0),)}, "private_kinds: 10 is not an object"),
        (WorkloadConfig, {"kind_sizes": ((0, 1024, 0.5),)}, "kind_sizes: 0 is not an object"),
        (
            WorkloadConfig,
            {"private_dependency_share": 0.5, "shared_objects_per_namespace": 0},
            "private_dependency_share needs shared objects to depend on",
        ),
        (ModelConfig, {"warmup_ms": 5.0, "duration_ms": 5.0}, "warmup_ms must be shorter"),
        (ModelConfig, {"warmup_ms": 4.5, "duration_ms": 5.0}, "warmup_ms must end a whole"),
    ],
)
def test_fields_that_must_agree_are_refused_together(config, values, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        config(**values)
