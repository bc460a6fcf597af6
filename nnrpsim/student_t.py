"""Student's t quantile for 95 % confidence intervals over replications: the summary's and
``compare``'s intervals, and the warm-up check's (no SciPy for one quantile)."""

from __future__ import annotations

_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(df: int) -> float:
    """Student's t quantile 0.975: the table up to 30 degrees of freedom, then the Cornish-Fisher
    expansion around the normal quantile (within 0.001 there, where 1.96 would be 4 % short)."""
    if df <= len(_T95):
        return _T95[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
