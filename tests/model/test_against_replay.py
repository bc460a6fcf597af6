"""With zero latency and no capacity limit, the SimPy model is the replay: same hits, same misses
by cause, and (through the replay) the closed forms of shared/reference/analytic-models.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nnrpsim.engine import CacheLimits
from nnrpsim.engine.replay import replay
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.metrics import des_metrics, vector_metrics
from nnrpsim.model import (
    InstallCause,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    simulate,
    stream_plan,
)
from nnrpsim.protocol import MessageType, packet_bytes
from tests.engine.streams import poisson_stream

T = 10_000
MEAN_GAP = 10_000
N_OBJECTS = 100
DURATION = 1_500_000
INSTANT = LinkConfig(latency_ms=0.0, bandwidth_bytes_per_ms=float("inf"))


def _stream(purge_per_ms: float) -> ReferenceStream:
    stream = poisson_stream(
        np.random.default_rng(99), N_OBJECTS, 1 / MEAN_GAP, DURATION, purge_per_ms
    )
    # Keep invalidations off the milliseconds that carry references: same-millisecond order is
    # a modelling choice the two paths need not share.
    keep = ~np.isin(stream.invalidation_time_ms, stream.time_ms)
    return ReferenceStream(
        stream.time_ms,
        stream.object_id,
        stream.size + 4095,
        stream.invalidation_time_ms[keep],
        stream.invalidation_object_id[keep],
        0,
        DURATION,
    )


def _model(stream: ReferenceStream, mode: str, limits: CacheLimits | None = None):
    config = ModelConfig(
        duration_ms=float(DURATION),
        uplink=INSTANT,
        downlink=INSTANT,
        server=ServerConfig(
            limits=limits or CacheLimits(capacity_bytes=None),
            per_operation_ms=0.0,
            per_inline_byte_ms=0.0,
            per_put_byte_ms=0.0,
            sweep_interval_ms=5_000.0,
        ),
        policy=PolicyConfig(
            name="always",
            ttl_hint_ms=T,
            renew_margin=1.0 if mode == "reset" else 0.0,
            inline_after_invalidate=False,
        ),
        sample_interval_ms=60_000.0,
    )
    return simulate(config, 0, stream_plan(stream))


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("purge_per_ms", [0.0, 1 / MEAN_GAP])
def test_model_equals_replay_and_closed_forms(mode, purge_per_ms):
    stream = _stream(purge_per_ms)
    result = _model(stream, mode)
    sweep = replay(stream, [T], mode)
    outcome, cause = result.references["outcome"], result.references["cause"]
    installed = outcome == RefOutcome.INSTALLED
    assert result.violations == 0
    assert int((outcome == RefOutcome.HIT).sum()) == int(sweep.hits[0])
    assert int((installed & (cause == InstallCause.COLD)).sum()) == int(sweep.cold_misses[0])
    assert int((installed & (cause == InstallCause.EXPIRED)).sum()) == int(sweep.expired_misses[0])
    invalidated = installed & (cause == InstallCause.INVALIDATED)
    assert int(invalidated.sum()) == int(sweep.invalidated_misses[0])
    assert result.counters["renewals"] == int(sweep.renewals[0])

    lam, mu = 1 / MEAN_GAP, purge_per_ms
    if mode == "reset":
        expected = lam / (lam + mu) * (1 - math.exp(-(lam + mu) * T))
    else:
        life = T if mu == 0 else (1 - math.exp(-mu * T)) / mu
        expected = lam * life / (1 + lam * life)
    hits = np.bincount(stream.object_id, weights=outcome == RefOutcome.HIT, minlength=N_OBJECTS)
    refs = np.bincount(stream.object_id, minlength=N_OBJECTS)
    ratio = hits.sum() / refs.sum()
    se = math.sqrt(((hits - ratio * refs) ** 2).sum()) / refs.sum()
    assert abs(ratio - expected) <= 4 * se


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("eviction", ["lru", "fifo", "size", "ttl"])
def test_with_a_capacity_the_model_still_equals_the_replay(mode, eviction):
    """Evictions, announced by CACHE_INVALIDATE, and reinstalls on the next reference."""
    stream = _stream(1 / MEAN_GAP)
    capacity = int(stream.size.mean() * 40)  # room for 40 of the 100 objects
    result = _model(stream, mode, CacheLimits(capacity_bytes=capacity, eviction=eviction))
    sweep = replay(stream, [T], mode, capacity_bytes=capacity, policy=eviction)
    assert sweep.evicted_misses[0] > 1000 and result.invalidations["evicted"] > 1000
    assert result.violations == 0
    assert int((result.references["outcome"] == RefOutcome.HIT).sum()) == int(sweep.hits[0])
    assert result.counters["installs"] == int(sweep.installs[0])


@pytest.mark.parametrize("mode", ["reset", "non_reset"])
@pytest.mark.parametrize("eviction", ["none", "lru"])
def test_wire_bytes_equal_the_replays_but_for_the_cache_invalidate_frames(mode, eviction):
    """Byte for byte, the replay's hosts pay what the model's pay: a PUT the server refuses
    (``none``: no room, nothing evicted) sends its body, then the body goes inline. Only the
    CACHE_INVALIDATE frames are the model's alone: the replay's hosts know their leases."""
    stream = _stream(1 / MEAN_GAP)
    capacity = int(stream.size.mean() * 40)
    result = _model(stream, mode, CacheLimits(capacity_bytes=capacity, eviction=eviction))
    sweep = replay(stream, [T], mode, capacity_bytes=capacity, policy=eviction, per_object=True)
    object_sizes = np.zeros(stream.n_objects, np.int64)
    object_sizes[stream.object_id] = stream.size
    everything_cached = np.zeros(len(stream.size), dtype=bool)
    vector = vector_metrics(sweep, 0, stream.size, object_sizes, everything_cached, True)
    des = des_metrics(result, 0.0)
    assert des["refused_puts"] == vector["refused_puts"]
    assert (des["refused_puts"] > 1000) == (eviction == "none")
    invalidate_frames = sum(result.invalidations.values()) * packet_bytes(
        MessageType.CACHE_INVALIDATE
    )
    assert des["wire_bytes_saved"] == vector["wire_bytes_saved"] - invalidate_frames
