"""What a synthetic workload offers on average, in closed form, before anything runs.

Sessions arrive as a Poisson process and last a lognormal time of known mean, so by Little's law
``rate x mean length`` of them run at once in steady state. Each operation draws its shared
references from the namespace's Zipf popularity and its private ones uniformly, with
replacement, and references an object once however often it was drawn: the expected number of
distinct objects is ``sum(1 - (1 - p) ** draws)``. Object sizes are lognormal by kind, cut to
1 B..4 GiB as drawn: of mean ``median x exp(sigma**2 / 2)`` while the cut is far out, the cut
distribution's mean always (:func:`clipped_lognormal_mean`). These means size a GPU budget and
a link before a study runs, and a test checks them against drawn plans.

From an empty start the sessions at once climb to that level as ``rate x E[min(D, t)]``: the
sessions started by ``t`` that are still running (the equilibrium distribution of the length
D). With lognormal lengths of coefficient of variation 0.5 they are at 81 % of it after one
mean length, and within 1 % only after 2.4: the least warm-up a study needs before its memory
is level (leases that outlive their sessions, and shared objects first referenced late, take
longer).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nnrpsim.plain_numbers import separated
from nnrpsim.protocol.frame_submit import INLINE_OBJECT_ALIGN, INLINE_OBJECT_HEADER

from .config import WorkloadConfig
from .slot_frames import slot_counts
from .workload import OBJECT_SIZE_RANGE, popularity, size_laws, spread_kinds


@dataclass(frozen=True)
class WorkloadMeans:
    """Steady-state means of a synthetic workload over all hosts."""

    concurrent_sessions: float
    operations_per_s: float
    references_per_operation: float  # distinct objects an operation references
    frames_per_operation: float  # FRAME_SUBMITs a request needs on average, at the least
    shared_bytes: float  # every shared object of every namespace
    private_bytes_in_use: float  # the private objects of the sessions running at once
    inline_bytes_per_s: float  # object blocks per second if every reference went inline
    sessions_level_s: float  # from an empty start, when the sessions at once are within 1 %

    @property
    def references_per_s(self) -> float:
        return self.operations_per_s * self.references_per_operation


def _mean_sizes(kinds: np.ndarray, config: WorkloadConfig) -> np.ndarray:
    """The mean size of each object of ``kinds``, as its kind's sizes are drawn (a lognormal
    cut to :data:`OBJECT_SIZE_RANGE`): worked out once a kind."""
    distinct, each = np.unique(kinds, return_inverse=True)
    laws = zip(*size_laws(distinct, config), strict=True)
    means = [clipped_lognormal_mean(mu, sigma, *OBJECT_SIZE_RANGE) for mu, sigma in laws]
    return np.asarray(means, dtype=np.float64)[each]


def clipped_lognormal_mean(mu: float, sigma: float, low: float, high: float) -> float:
    """``E[min(max(X, low), high)]`` for X lognormal(``mu``, ``sigma``); ``low`` 0: no lower
    cut. ``low P(X < low) + E[X; low <= X <= high] + high P(X > high)``, the middle in logs:
    ``exp(mu + sigma**2 / 2)`` alone overflows past a shape of about 37, where the cut mean is
    still a few GiB."""
    if sigma == 0:
        return min(max(math.exp(mu), low), high)
    above = high * normal_cdf((mu - math.log(high)) / sigma)
    middle = math.exp(_log_moment_below(high, mu, sigma))
    if low <= 0:
        return middle + above
    below = low * normal_cdf((math.log(low) - mu) / sigma)
    return below + middle - math.exp(_log_moment_below(low, mu, sigma)) + above


def _log_moment_below(edge: float, mu: float, sigma: float, power: int = 1) -> float:
    """``log E[X**power; X <= edge]``, ``k mu + (k sigma)**2 / 2 + log Phi(x)`` for
    ``k = power``, ``x = z - k sigma`` and ``z = (log edge - mu) / sigma``. Far below zero,
    where Phi underflows, it is rewritten as ``k log edge - z**2 / 2 + (log Phi(x) + x**2 / 2)``
    (the squares of sigma cancel), the bracket from Phi's asymptotic series."""
    z = (math.log(edge) - mu) / sigma
    x = z - power * sigma
    if x > -30:  # (then k sigma < 30 + z: the sum is below k log edge, and finite)
        return power * mu + (power * sigma) ** 2 / 2 + math.log(normal_cdf(x))
    u = 1 / (x * x)
    series = -math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log1p(-u + 3 * u * u - 15 * u**3)
    return power * math.log(edge) - z * z / 2 + series


def _inline_bytes(mean_size: np.ndarray) -> np.ndarray:
    """An inline block's mean bytes: header, payload, and on average half the padding's range
    (sizes are spread over many multiples of the alignment)."""
    return INLINE_OBJECT_HEADER.size + mean_size + (INLINE_OBJECT_ALIGN - 1) / 2


def _least_frames(*objects: tuple[np.ndarray, np.ndarray]) -> float:
    """A lower bound on the FRAME_SUBMITs a request needs on average, over ``objects`` (each
    a kind per object, and the chance a request references it): one for each distinct object
    of the slotted kind it names most (:mod:`.slot_frames`), one at the least. The mean of
    that maximum is at least the maximum of the kinds' means, which are sums of chances."""
    per_kind = sum(slot_counts(kinds, seen) for kinds, seen in objects)
    return max(1.0, float(np.max(per_kind)))


def references_seen(config: WorkloadConfig) -> tuple[np.ndarray, np.ndarray]:
    """The chance that an operation references each shared object of a namespace, by rank,
    and each private object of its session, at least once (the operation's distinct objects)."""
    shared_seen = (
        1
        - (1 - popularity(config.shared_objects_per_namespace, config.zipf_alpha))
        ** config.shared_refs_per_operation
    )
    n_private = config.private_objects_per_session
    private_seen = (
        np.full(n_private, 1 - (1 - 1 / n_private) ** config.private_refs_per_operation)
        if n_private
        else np.zeros(0)
    )
    return shared_seen, private_seen


@functools.lru_cache(maxsize=1024)
def workload_means(config: WorkloadConfig, sessions_per_s: float) -> WorkloadMeans:
    """The means of ``config`` with sessions starting at ``sessions_per_s`` over all hosts
    (kept: the points of a sweep share their workload, and validate asks for each point's
    means more than once; 88 us each)."""
    concurrent = sessions_per_s * config.session_duration_ms / 1000.0
    operations_per_s = concurrent * config.operation_rate_per_s

    shared_seen, private_seen = references_seen(config)
    shared_kinds = spread_kinds(config.shared_kinds, config.shared_objects_per_namespace)
    private_kinds = spread_kinds(config.private_kinds, config.private_objects_per_session)
    shared_sizes = _mean_sizes(shared_kinds, config)
    private_sizes = _mean_sizes(private_kinds, config)
    inline_per_operation = float(
        shared_seen @ _inline_bytes(shared_sizes) + private_seen @ _inline_bytes(private_sizes)
    )
    return WorkloadMeans(
        concurrent_sessions=concurrent,
        operations_per_s=operations_per_s,
        references_per_operation=float(shared_seen.sum() + private_seen.sum()),
        frames_per_operation=_least_frames(
            (shared_kinds, shared_seen), (private_kinds, private_seen)
        ),
        shared_bytes=config.namespaces * float(shared_sizes.sum()),
        private_bytes_in_use=concurrent * float(private_sizes.sum()),
        inline_bytes_per_s=operations_per_s * inline_per_operation,
        sessions_level_s=ramp_time_ms(config.session_duration_ms, config.session_duration_cv)
        / 1000.0,
    )


LEVEL = 0.99
"""How close to their steady number the sessions at once must come (:func:`ramp_time_ms`),
or average over the measured time (:func:`least_warmup_ms`)."""


def length_law(mean_ms: float, cv: float) -> tuple[float, float]:
    """``(mu, sigma**2)`` of the lognormal session lengths of mean ``mean_ms`` and coefficient
    of variation ``cv``, as the synthetic workload draws them: ``sigma**2`` is 0 for a fixed
    length, or a spread too small to tell from none."""
    sigma2 = math.log1p(cv * cv)
    return math.log(mean_ms) - sigma2 / 2, sigma2


def sessions_ramp(t_ms: float, mean_ms: float, cv: float) -> float:
    """The sessions at once ``t_ms`` after an empty start, as a fraction of their steady
    number: ``E[min(D, t)] / E[D]`` for lengths D of mean ``mean_ms``, lognormal of coefficient
    of variation ``cv`` (fixed for 0), as the synthetic workload draws them."""
    if t_ms <= 0:
        return 0.0
    mu, sigma2 = length_law(mean_ms, cv)
    cut_mean = clipped_lognormal_mean(mu, math.sqrt(sigma2), 0.0, t_ms)
    return min(cut_mean / mean_ms, 1.0)  # (exp(log(mean)) may round above the mean)


def sessions_shorter_share(length_ms: float, mean_ms: float, cv: float) -> float:
    """The share of sessions shorter than ``length_ms``, their lengths of mean ``mean_ms``,
    lognormal of coefficient of variation ``cv`` (fixed for 0), as the synthetic workload
    draws them."""
    mu, sigma2 = length_law(mean_ms, cv)
    if sigma2 == 0:
        return float(mean_ms < length_ms)
    if length_ms <= 0:
        return 0.0
    return normal_cdf((math.log(length_ms) - mu) / math.sqrt(sigma2))


@functools.lru_cache(maxsize=256)
def ramp_time_ms(mean_ms: float, cv: float, level: float = LEVEL) -> float:
    """When :func:`sessions_ramp` first reaches ``level``. Kept, as :func:`measured_ramp`:
    a sweep's points mostly share their session lengths, and each search takes 0.06 ms
    (validating 10,000 points took 0.5-1.2 s longer without it)."""
    high = mean_ms
    while sessions_ramp(high, mean_ms, cv) < level:
        high *= 2
    return _least_reaching(lambda t: sessions_ramp(t, mean_ms, cv) >= level, 0.0, high)


def measured_ramp(warmup_ms: float, end_ms: float, mean_ms: float, cv: float) -> float:
    """The sessions at once averaged from ``warmup_ms`` to ``end_ms``, as a fraction of their
    steady number: what a mean over the measured time sees of the climb. Exact, from the
    shortfall :func:`_ramp_shortfall` at the two ends (3 us; the trapezoid rule over 512 steps
    it replaced took 0.6 ms, and a least warm-up's 50 of them 30 ms)."""
    lacked = _ramp_shortfall(end_ms, mean_ms, cv) - _ramp_shortfall(warmup_ms, mean_ms, cv)
    return min(max(1.0 - lacked / (end_ms - warmup_ms) / mean_ms, 0.0), 1.0)


def _ramp_shortfall(t_ms: float, mean_ms: float, cv: float) -> float:
    """``integral of E[(D - s)+] ds from 0 to t``, for lengths D as :func:`sessions_ramp` draws
    them: the sessions at once lack ``rate x E[(D - s)+]`` of their steady number at ``s``, so
    this is what they lack from an empty start to ``t``, over the rate. It is
    ``E[D**2; D < t] / 2 + t E[D; D >= t] - t**2 P(D >= t) / 2`` (the last two at least
    halve the second: no cancelling). It levels off at ``E[D**2] / 2``, so the difference of
    two stays accurate where the sessions are level (the integral of the ramp itself grows as
    ``t x mean``: over half a millisecond at 8 minutes, its difference was 1e-9 off)."""
    if t_ms <= 0:
        return 0.0
    mu, sigma2 = length_law(mean_ms, cv)
    if sigma2 == 0:
        return t_ms * (mean_ms - t_ms / 2) if t_ms < mean_ms else mean_ms * mean_ms / 2
    sigma = math.sqrt(sigma2)
    z = (math.log(t_ms) - mu) / sigma
    below = math.exp(_log_moment_below(t_ms, mu, sigma, power=2))
    return below / 2 + t_ms * (mean_ms * normal_cdf(sigma - z) - t_ms * normal_cdf(-z) / 2)


@functools.lru_cache(maxsize=256)
def least_warmup_ms(end_ms: float, mean_ms: float, cv: float, level: float = LEVEL) -> float | None:
    """The shortest warm-up after which the sessions at once average at least ``level`` of
    their steady number until ``end_ms`` (None if none shorter than the run does; 0 if the
    run needs none). Kept, as a sweep's points mostly share their timings: 50 ramps each."""
    latest = end_ms * 0.999
    if measured_ramp(latest, end_ms, mean_ms, cv) < level:
        return None
    if measured_ramp(0.0, end_ms, mean_ms, cv) >= level:
        return 0.0
    return _least_reaching(lambda w: measured_ramp(w, end_ms, mean_ms, cv) >= level, 0.0, latest)


def written_warmup_ms(least_ms: float, end_ms: float) -> float:
    """A least warm-up as ``auto`` writes it, and the advice gives it: whole seconds, rounded
    up, where the run has room for them, else whole milliseconds (119.2 s of a 120 s run is
    119,201 ms, not the whole run)."""
    seconds = math.ceil(least_ms / 1e3) * 1e3
    return seconds if seconds < end_ms else float(math.ceil(least_ms))


def _least_reaching(reaches: Callable[[float], bool], low: float, high: float) -> float:
    """The least x in (``low``, ``high``] for which ``reaches`` holds, to 2^-50 of the range,
    by bisection: it must hold at ``high`` and, once it holds, for every larger x."""
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def describe_means(means: WorkloadMeans) -> str:
    """One line for ``nnrpsim validate``."""
    return (
        f"~{_mean(means.concurrent_sessions, 0)} sessions at once "
        f"(within 1 % of that {_mean(means.sessions_level_s, 0)} s after the start), "
        f"{_mean(means.operations_per_s, 1)} operations/s{_frames(means)}, "
        f"{_mean(means.references_per_s, 1)} references/s; "
        f"shared objects {_bytes(means.shared_bytes)}, "
        f"private objects in use {_bytes(means.private_bytes_in_use)}; "
        f"inlining everything sends {_bytes(means.inline_bytes_per_s)}/s"
    )


def _frames(means: WorkloadMeans) -> str:
    """Where a request may name two objects of a slotted kind: the frames it takes."""
    if means.frames_per_operation == 1:
        return ""
    return f" (requests of {_mean(means.frames_per_operation, 2)} frames or more on average)"


def _mean(value: float, decimals: int) -> str:
    """A mean with ``decimals`` decimals, thousands separated, or two significant figures
    below one (a session every 1,000 s: ``~0.06 sessions at once``, not ``~0``)."""
    return separated(value, decimals) if value >= 1 or value == 0 else f"{value:.2g}"


def _bytes(n: float) -> str:
    if n < 1000:
        return f"{n:,.0f} B"
    exponent = min(int(math.log10(n) // 3), 6)
    return f"{separated(n / 1000**exponent, 1)} {'kMGTPE'[exponent - 1]}B"
