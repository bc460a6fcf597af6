"""Student's t quantiles for confidence intervals over replications: the summary's and
``compare``'s 95 % intervals, and the warm-up check's, which widens its interval for the many
points it judges one by one (no SciPy for a few quantiles)."""

from __future__ import annotations

import functools
import math


def t95(df: int) -> float:
    """Student's t quantile 0.975: the half-width of a 95 % interval, in standard errors."""
    return t_quantile(0.975, df)


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile ``p`` (from 0.5, below 1) for ``df`` degrees of freedom, to about
    1e-13 relative, by the regularised incomplete beta function: the upper tail 1 - p is
    I_x(df/2, 1/2) / 2 at x = df / (df + t^2), and (precise near the middle, where the tail is
    nearly 1/2) p - 1/2 is I_y(1/2, df/2) / 2 at y = 1 - x."""
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    if p == 0.5:
        return 0.0
    if p < 0.75:
        log_y = _log_argument(2 * (p - 0.5), 0.5, df / 2)
        return math.sqrt(df * math.exp(log_y) / -math.expm1(log_y))
    log_x = _log_argument(2 * (1 - p), df / 2, 0.5)
    return math.sqrt(df * -math.expm1(log_x) / math.exp(log_x))  # (1 - x without cancelling)


def _log_argument(value: float, a: float, b: float) -> float:
    """The log of the x in (0, 1) where I_x(a, b) = ``value``, by bisection on log x (I_x
    grows with x, from 0 to 1): 64 halvings of the floats' range leave log x within 4e-17."""
    low, high = math.log(1e-300), 0.0
    for _ in range(64):
        middle = (low + high) / 2
        if _incomplete_beta(math.exp(middle), a, b) < value:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
    Lentz), taken from the side where it converges fast: I_x(a, b) = 1 - I_(1-x)(b, a)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1 - x, b, a)
    log_front = (
        a * math.log(x) + b * math.log1p(-x) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    )
    return math.exp(log_front) * _beta_fraction(x, a, b) / a


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b), 1 / (1 + d1 / (1 + d2 / ...)) (Abramowitz and
    Stegun 26.5.8), evaluated by Lentz's method."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return fraction
