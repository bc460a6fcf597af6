"""Replay against the closed forms of shared/reference/analytic-models.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nnrpsim.engine.replay import replay
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.protocol import U32_MAX
from tests.engine.streams import poisson_stream, renewal_stream, zipf_stream

MEAN_GAP_MS = 10_000  # lam = 1 per 10 s; T = 10 s gives lam T = 1, as in the reference points
T = 10_000
N_OBJECTS = 400
DURATION = 4_000_000


def _z(per_object_hits: np.ndarray, per_object_refs: np.ndarray, expected: float) -> float:
    """Ratio estimator over independent objects, with its standard error."""
    ratio = per_object_hits.sum() / per_object_refs.sum()
    resid = per_object_hits - ratio * per_object_refs
    se = math.sqrt((resid**2).sum()) / per_object_refs.sum()
    return (ratio - expected) / se


def _per_object(stream, mode, ttl):
    """Hits and references per object, by replaying each object's own sub-stream at once."""
    result = replay(stream, [ttl], mode)
    refs = np.bincount(stream.object_id, minlength=N_OBJECTS)
    hits = np.zeros(N_OBJECTS)
    # Objects are independent without a capacity: hits per object from a per-object replay.
    for obj in range(N_OBJECTS):
        sub = stream.object_id == obj
        inv = stream.invalidation_object_id == obj
        one = ReferenceStream(
            stream.time_ms[sub],
            np.zeros(sub.sum(), np.int64),
            stream.size[sub],
            stream.invalidation_time_ms[inv],
            np.zeros(inv.sum(), np.int64),
            0,
            DURATION,
        )
        hits[obj] = replay(one, [ttl], mode).hits[0]
    assert hits.sum() == result.hits[0]
    return hits, refs, result


@pytest.mark.parametrize(
    ("mode", "purge_per_ms", "expected"),
    [
        ("non_reset", 0.0, 0.5),
        ("reset", 0.0, 1 - math.exp(-1)),
        ("reset", 1 / MEAN_GAP_MS, 0.5 * (1 - math.exp(-2))),
        ("non_reset", 1 / MEAN_GAP_MS, (1 - math.exp(-1)) / (1 + (1 - math.exp(-1)))),
    ],
)
def test_ttl_hit_rate_and_occupancy_match_closed_forms(mode, purge_per_ms, expected):
    stream = poisson_stream(
        np.random.default_rng(2026), N_OBJECTS, 1 / MEAN_GAP_MS, DURATION, purge_per_ms
    )
    hits, refs, result = _per_object(stream, mode, T)
    assert abs(_z(hits, refs, expected)) <= 4
    occupancy = result.mean_live_bytes[0] / N_OBJECTS  # unit sizes: mean objects held
    assert abs(occupancy - expected) < 0.01  # Poisson: occupancy equals hit probability


def _erlang2_gaps(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Gaps of two exponential stages, mean ``MEAN_GAP_MS``: more regular than Poisson."""
    return rng.gamma(2.0, MEAN_GAP_MS / 2, shape)


# Erlang-2 arrivals of rate lam (stage rate k = 2 lam) with T = 1 / lam, so kT = 2:
# F(T) = 1 - e^-kT (1 + kT), lam * integral_0^T (1 - F) = (2 - e^-kT (2 + kT)) / 2, and the
# renewal function m(T) = kT / 2 - 1 / 4 + e^-2kT / 4.
_M_T = 1 - 0.25 + math.exp(-4) / 4


@pytest.mark.parametrize(
    ("mode", "hit", "occupancy"),
    [
        ("reset", 1 - 3 * math.exp(-2), 1 - 2 * math.exp(-2)),  # F(T); lam * integral
        ("non_reset", _M_T / (1 + _M_T), 1 / (1 + _M_T)),  # m / (1 + m); lam T / (1 + m)
    ],
)
def test_with_renewal_arrivals_hit_and_occupancy_part_as_the_closed_forms_say(mode, hit, occupancy):
    """Gaps more regular than Poisson: the hit rate and the time a lease is live are no longer
    equal (0.59 against 0.73 with renew-on-use, 0.43 against 0.57 without), and each must match
    its own closed form; one taken for the other would miss by 0.14."""
    stream = renewal_stream(
        np.random.default_rng(2027), N_OBJECTS, _erlang2_gaps, MEAN_GAP_MS, DURATION
    )
    hits, refs, result = _per_object(stream, mode, T)
    assert abs(_z(hits, refs, hit)) <= 4
    assert abs(result.mean_live_bytes[0] / N_OBJECTS - occupancy) < 0.01


def _hit_ratio(rates: np.ndarray, capacity: float, hit_probability) -> float:
    """Che-type approximation: find the characteristic time t_C at which the objects' hit
    (= occupancy) probabilities fill the capacity; the request-weighted hit ratio at t_C."""
    lo, hi = 0.0, 1.0
    while hit_probability(hi).sum() < capacity:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hit_probability(mid).sum() < capacity else (lo, mid)
    return float((rates * hit_probability(lo)).sum() / rates.sum())


def _che(p: np.ndarray, capacity: float, fifo: bool) -> float:
    if fifo:
        return _hit_ratio(p, capacity, lambda t: p * t / (1 + p * t))
    return _hit_ratio(p, capacity, lambda t: 1 - np.exp(-p * t))


@pytest.mark.parametrize(
    ("alpha", "policy", "reference_point"),
    [(0.8, "lru", 0.37779), (1.0, "lru", 0.57652), (0.8, "fifo", 0.33368), (1.0, "fifo", 0.52025)],
)
def test_che_approximation_for_zipf(alpha, policy, reference_point):
    n = 1000
    p = 1.0 / np.arange(1, n + 1) ** alpha
    assert _che(p / p.sum(), 100, policy == "fifo") == pytest.approx(reference_point, abs=1e-4)
    stream = zipf_stream(np.random.default_rng(7), n, 400_000, alpha, np.ones(n, dtype=np.int64))
    result = replay(stream, [U32_MAX], "non_reset", capacity_bytes=100, policy=policy)
    assert abs(result.hit_rate[0] - reference_point) <= 0.005


def test_lru_with_purges_matches_detti():
    """LRU with Poisson purges (Detti et al. 2018): h_i = lam_i / (lam_i + mu) (1 - exp(-(lam_i +
    mu) t_C)), the occupancies filling the capacity."""
    n, capacity, purge_per_ms = 1000, 100, 4e-3
    p = 1.0 / np.arange(1, n + 1) ** 0.8
    lam = p / p.sum()  # one request per millisecond in all
    expected = _hit_ratio(
        lam,
        capacity,
        lambda t: lam / (lam + purge_per_ms) * (1 - np.exp(-(lam + purge_per_ms) * t)),
    )
    assert (lam / (lam + purge_per_ms)).sum() > capacity  # purges alone do not keep it unfilled
    stream = poisson_stream(np.random.default_rng(11), n, lam, 400_000, purge_per_ms)
    result = replay(stream, [U32_MAX], "non_reset", capacity_bytes=capacity, policy="lru")
    without_purges = _che(lam, capacity, fifo=False)
    assert expected < without_purges - 0.02  # the purges matter at this rate
    assert abs(result.hit_rate[0] - expected) <= 0.005
