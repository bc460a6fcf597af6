"""How much of a synthetic workload a host policy's thresholds let it cache, and how much
of it lies beyond a size, in closed form.

A host caches an object in a session when the object is larger than the policy's least size
and its expected reuse there passes the policy's least reuse (shared/spec/nnrp-cache.md section
14: more than 1 KiB, more than twice). The expected reuse is the object's references per
operation times the operations the session's length makes (for connection-owned objects under a
connection TTL, those of the host's sessions of its namespace while a lease lasts, whatever the
session's length): so each object passes in the sessions longer than a threshold length. A
session's references grow with its length, so those sessions make ``E[D; D > t] / E[D]`` of the
references, for lengths D lognormal as drawn. Sizes are lognormal by kind, cut to whole bytes.

Left out, as each only caches less: the server's kinds and size ceiling, and an object made
from another being cached only with its source. So the share is a ceiling of what the policy
caches: where it is near zero, its caching keys (TTLs, renewal, memory) have next to no say,
and a hit rate near zero is the thresholds' verdict on the workload.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .config import WorkloadConfig
from .policies import CachePolicy
from .workload import OBJECT_SIZE_RANGE, popularity, size_laws, spread_kinds
from .workload_means import length_law, normal_cdf, references_seen


@dataclass(frozen=True)
class PolicyReach:
    """The share of the references whose object the policy caches in its session, and the
    expected reuse that share turns on, in a session of the mean length."""

    cached_share: float  # of the references (an operation's distinct objects); NaN: none
    large_enough_share: float  # of the references, to objects larger than the least size
    private_reuse: float  # of a private object
    top_shared_reuse: float  # of the most popular shared object (NaN: no shared references)


@dataclass(frozen=True)
class Thresholds:
    """What of a policy decides which objects it caches (its TTLs and renewal do not)."""

    caches: bool
    min_object_bytes: int
    min_expected_reuse: float
    connection_ttl_ms: int | None


def policy_reach(
    config: WorkloadConfig, policy: CachePolicy, sessions_per_ms_per_host: float
) -> PolicyReach:
    """:class:`PolicyReach` of ``policy`` on ``config``, whose sessions start at
    ``sessions_per_ms_per_host`` on each host (the connection TTL's reuse counts a host's
    sessions)."""
    thresholds = Thresholds(
        policy.caches, policy.min_object_bytes, policy.min_expected_reuse, policy.connection_ttl_ms
    )
    return _reach(config, thresholds, sessions_per_ms_per_host)


@functools.lru_cache(maxsize=1024)
def _reach(
    config: WorkloadConfig, policy: Thresholds, sessions_per_ms_per_host: float
) -> PolicyReach:
    """:func:`policy_reach`, kept as :func:`~nnrpsim.model.workload_means.workload_means` is:
    a sweep's points mostly share their workload and thresholds (a TTL sweep: all of them),
    and ``validate`` asks twice a point."""
    ops_per_ms = config.operation_rate_per_s / 1000.0
    mean, cv = config.session_duration_ms, config.session_duration_cv
    shared_seen, private_seen = references_seen(config)

    zipf = popularity(config.shared_objects_per_namespace, config.zipf_alpha)
    shared_rate = ops_per_ms * zipf * config.shared_refs_per_operation  # a session's, per ms
    if policy.connection_ttl_ms is None:
        shared_reuse = shared_rate * mean
        shared_passes = _longer_weights(_threshold_lengths(policy, shared_rate), mean, cv)
    else:  # the host's sessions of the namespace at once, while the connection's lease lasts
        sessions = sessions_per_ms_per_host * mean / config.namespaces
        shared_reuse = shared_rate * sessions * policy.connection_ttl_ms
        shared_passes = (shared_reuse > policy.min_expected_reuse).astype(np.float64)

    n_private = config.private_objects_per_session
    private_rate = np.full(
        n_private, ops_per_ms * config.private_refs_per_operation / max(n_private, 1)
    )
    private_passes = _longer_weights(_threshold_lengths(policy, private_rate), mean, cv)

    kinds, seen = _objects(config)
    larger = _larger_shares(kinds, config, policy.min_object_bytes)
    cached = seen * np.concatenate([shared_passes, private_passes]) * larger
    references = float(seen.sum())
    if references == 0:
        return PolicyReach(math.nan, math.nan, math.nan, math.nan)
    return PolicyReach(
        cached_share=float(cached.sum()) / references if policy.caches else 0.0,
        large_enough_share=float(seen @ larger) / references,
        private_reuse=float(private_rate[0] * mean) if private_seen.sum() > 0 else math.nan,
        top_shared_reuse=float(shared_reuse[0]) if shared_seen.sum() > 0 else math.nan,
    )


@functools.lru_cache(maxsize=1024)
def references_larger_share(config: WorkloadConfig, size_bytes: int) -> float:
    """The share of the references (an operation's distinct objects) made to objects larger
    than ``size_bytes``, as their sizes are drawn (NaN: no references). Kept, as
    :func:`policy_reach` is."""
    kinds, seen = _objects(config)
    references = float(seen.sum())
    if references == 0:
        return math.nan
    return float(seen @ _larger_shares(kinds, config, size_bytes)) / references


def _objects(config: WorkloadConfig) -> tuple[np.ndarray, np.ndarray]:
    """The kinds of a namespace's shared objects, then of a session's private ones, and the
    chance that an operation references each (:func:`references_seen`)."""
    kinds = np.concatenate(
        [
            spread_kinds(config.shared_kinds, config.shared_objects_per_namespace),
            spread_kinds(config.private_kinds, config.private_objects_per_session),
        ]
    )
    return kinds, np.concatenate(references_seen(config))


def _threshold_lengths(policy: Thresholds, references_per_ms: np.ndarray) -> np.ndarray:
    """For each object referenced at ``references_per_ms`` in a session, the session length
    beyond which its expected reuse passes the policy's least (inf: never; 0: always)."""
    if policy.min_expected_reuse < 0:
        return np.zeros(len(references_per_ms))
    referenced = references_per_ms > 0
    lengths = np.full(len(references_per_ms), np.inf)
    lengths[referenced] = policy.min_expected_reuse / references_per_ms[referenced]
    return lengths


def _longer_weights(lengths: np.ndarray, mean: float, cv: float) -> np.ndarray:
    """The share of the references made in sessions longer than each of ``lengths``:
    ``E[D; D > t] / E[D]``, for D lognormal of mean ``mean`` and coefficient of variation
    ``cv`` (fixed for 0), as the workload draws its session lengths."""
    mu, sigma2 = length_law(mean, cv)
    if sigma2 == 0:
        return (mean > lengths).astype(np.float64)
    sigma = math.sqrt(sigma2)
    return np.array(
        [
            1.0 if t <= 0 else 1.0 - normal_cdf((math.log(t) - mu - sigma2) / sigma)
            for t in lengths.tolist()
        ]
    )


def _larger_shares(kinds: np.ndarray, config: WorkloadConfig, size_bytes: int) -> np.ndarray:
    """For each object of ``kinds``, the chance that its size, drawn from its kind's law and
    cut to whole bytes in :data:`OBJECT_SIZE_RANGE`, exceeds ``size_bytes``."""
    least = size_bytes + 1  # whole bytes: larger than the size is at least this
    low, high = OBJECT_SIZE_RANGE
    if least <= low:
        return np.ones(len(kinds))
    if least > high:
        return np.zeros(len(kinds))
    mus, sigmas = size_laws(kinds, config)
    return np.array(
        [
            float(np.floor(np.exp(mu)) >= least)  # (as drawn: a lognormal of shape 0)
            if sigma == 0
            else 1.0 - normal_cdf((math.log(least) - mu) / sigma)
            for mu, sigma in zip(mus.tolist(), sigmas.tolist(), strict=True)
        ]
    )
