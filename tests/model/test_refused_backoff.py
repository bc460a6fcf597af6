"""A host that backs off after a CACHE_ACK refuses room (``refused_backoff_ms``) inlines the
object without another CACHE_PUT for that long; without it, every use puts the body again."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nnrpsim.engine import CacheLimits
from nnrpsim.metrics import des_metrics
from nnrpsim.model import (
    FaultConfig,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    RefOutcome,
    ServerConfig,
    simulate,
)
from nnrpsim.protocol import inline_object_bytes
from nnrpsim.vector_run import vector_run

from .plans import one_session
from .test_dependencies import MADE
from .test_dependencies import _plan as source_plan

A, B = 0, 1
SIZE = 4096
INSTALLED, HIT, REFUSED = RefOutcome.INSTALLED, RefOutcome.HIT, RefOutcome.INSTALL_REJECTED
INLINED = RefOutcome.INLINED_AFTER_INVALIDATE


def _config(
    backoff_ms: float, capacity: int = SIZE, duration_ms: float = 1_500.0, ttl_ms: int = 1_000
) -> ModelConfig:
    link = LinkConfig(latency_ms=0.0)
    return ModelConfig(
        duration_ms=duration_ms,
        uplink=link,
        downlink=link,
        server=ServerConfig(limits=CacheLimits(capacity_bytes=capacity, eviction="none")),
        policy=PolicyConfig(
            name="threshold",
            min_object_bytes=0,
            min_expected_reuse=0,
            ttl_hint_ms=ttl_ms,
            renew_margin=0.0,
            refused_backoff_ms=backoff_ms,
        ),
    )


def _a_then_b():
    """A at 0, which fills the cache (no eviction) while its lease lasts; B every 100 ms."""
    return one_session(
        [(0.0, [A])] + [(100.0 * k, [B]) for k in range(1, 15)], [SIZE, SIZE], [10.0, 10.0], 1_500
    )


@pytest.mark.parametrize(
    ("backoff_ms", "b_outcomes", "b_puts"),
    [
        # Every use of B puts it, refused until A's lease ends at 1000 and frees the room.
        (0.0, [REFUSED] * 9 + [INSTALLED] + [HIT] * 4, 10),
        # PUTs at 100, 500 and 900 (refused), then none until 1250: the uses in between go
        # inline with no PUT, and B is installed at 1300. Six bodies fewer, three hits fewer.
        (350.0, [REFUSED] * 12 + [INSTALLED, HIT], 4),
    ],
)
def test_a_refused_object_is_inlined_without_a_put_while_the_host_backs_off(
    backoff_ms, b_outcomes, b_puts
):
    result = simulate(_config(backoff_ms), 1, _a_then_b())
    refs = result.references
    assert refs["outcome"][refs["object"] == B].tolist() == b_outcomes
    assert result.wire["put_body"] == (1 + b_puts) * SIZE  # A's one install, and B's
    assert result.wire["inline"] == b_outcomes.count(REFUSED) * inline_object_bytes(SIZE)
    assert result.violations == 0 and result.fallback_success_rate == 1.0


@pytest.mark.parametrize(
    ("backoff_ms", "outcomes", "source_puts"),
    [
        (0.0, [INLINED] * 5, 5),
        # The source's PUT is refused at 10 and 2000 (the back-off ends at 1510 and 3500):
        # meanwhile the segment goes inline for its source's refusal, and nothing is put.
        (1_500.0, [INLINED, REFUSED, INLINED, REFUSED, INLINED], 3),
    ],
)
def test_what_is_made_from_a_refused_source_goes_inline_while_the_host_backs_off(
    backoff_ms, outcomes, source_puts
):
    # The segment (4 KiB) fits and keeps its lease; its source (8 KiB) never fits. A segment
    # whose source holds no lease cannot be referenced, so it goes inline every time.
    config = _config(backoff_ms, capacity=6_000, duration_ms=5_000.0, ttl_ms=60_000)
    result = simulate(config, 1, source_plan())
    refs = result.references
    assert refs["object"].tolist() == [MADE] * 5
    assert refs["outcome"].tolist() == outcomes
    assert result.wire["put_body"] == 4_096 + source_puts * 8_192
    assert result.violations == 0 and result.audit["fallbacks"] == 0


@pytest.mark.parametrize(
    ("announce", "b_outcomes"),
    [
        # Told of the restart, the host puts B at its next use, into the emptied cache.
        (True, [REFUSED, REFUSED, INSTALLED] + [HIT] * 11),
        # Not told, it backs off all the same, for 1000 ms from the millisecond the refusal
        # reached it (100, just after): B is put at 1100.
        (False, [REFUSED] * 10 + [INSTALLED] + [HIT] * 3),
    ],
)
def test_a_restart_the_host_is_told_of_ends_its_back_off(announce, b_outcomes):
    config = replace(
        _config(1_000.0, ttl_ms=60_000),
        faults=FaultConfig(restart_at_ms=250.0, announce_restart=announce),
    )
    result = simulate(config, 1, _a_then_b())
    refs = result.references
    assert refs["outcome"][refs["object"] == B].tolist() == b_outcomes


def test_a_back_off_counts_whole_milliseconds_on_both_engines():
    """B's PUT is refused at 100.6 ms (A fills the cache until its lease ends at 1,000); the
    back-off of 1,000 ms runs from millisecond 100 to 1,100, the clock of the vector engine
    too, so B is put at 1,100.3 on both (counted from 100.6, it would still be backing off)."""
    plan = one_session(
        [(0.6, [A]), (100.6, [B]), (1_100.3, [B])], [SIZE, SIZE], [10.0, 10.0], 1_500
    )
    config = _config(1_000.0)
    result = simulate(config, 1, plan)
    refs = result.references
    assert refs["outcome"][refs["object"] == B].tolist() == [REFUSED, INSTALLED]
    des, vector = des_metrics(result, 0.0), vector_run(config, plan).metrics
    for name in ("hit_rate", "installs", "refused_puts"):
        assert des[name] == vector[name], name
    for name in ("invalidations", "wire_bytes_saved"):
        assert des[name] == vector[name], name
