"""Pearson's r from summed per-item statistics, so that resampling takes one matrix product.

Each item contributes the row [1, u, v, u², v², uv], with u = x − c and v = y − c (x the
prediction, y the gold, c a fixed offset). Summed over any sample of items, with n = Σ1,

    r = (n Σuv − Σu Σv) / sqrt((n Σu² − (Σu)²) (n Σv² − (Σv)²)),

which is Pearson's r of x and y, since a common shift changes nothing. The offset must be the
same for every run compared on the same items (randomization moves rows between runs), so it
comes from the gold: its mean, near which predictions lie.

Sums lose accuracy when the values are far from the offset relative to their spread: the
relative error of r is about 1e-15 × κ, with κ = Σu² / Σ(u − ū)² the cancellation factor.
``sums_accurate`` says whether a run's items keep κ small enough; a run that does not is
recomputed on each sample instead.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Columns of an item's row: [1, u, v, u², v², uv].
COLUMNS = 6
#: A side is constant on a sample when n Σu² − (Σu)² ≤ CONSTANT · n Σu². Exactly equal values
#: leave at most about 1e-11 of rounding there (200,000 items); a side that varies leaves 1/κ.
CONSTANT = 1e-9
#: The largest cancellation factor κ for which sums are used: r then agrees with the two-pass
#: formula to about 1e-12.
MAX_CANCELLATION = 1e3
#: The largest |u| for which sums are used: squares and their sums stay finite and normal.
MAX_MAGNITUDE = 1e100
#: The smallest largest |u| of a varying side for which sums are used (squares must not vanish).
MIN_MAGNITUDE = 1e-100


def pearson_rows(x: FloatArray, y: FloatArray, offset: float) -> FloatArray:
    """Return each item's row [1, u, v, u², v², uv], u = x − offset and v = y − offset."""
    # A run that fails sums_accurate may go past the float range; its sums are not used.
    with np.errstate(over="ignore", invalid="ignore"):
        u = np.asarray(x, dtype=np.float64) - offset
        v = np.asarray(y, dtype=np.float64) - offset
        return np.column_stack([np.ones_like(u), u, v, u * u, v * v, u * v])


def pearson_from_sums(sums: FloatArray) -> FloatArray:
    """Return r from summed rows (shape ..., 6), vectorized; NaN where a side is constant.

    r = (n Σuv − Σu Σv) / sqrt((n Σu² − (Σu)²) (n Σv² − (Σv)²)), clipped to [−1, 1]; a side
    is constant (also with fewer than 2 items) when n Σu² − (Σu)² ≤ CONSTANT · n Σu².
    """
    s = np.asarray(sums, dtype=np.float64)
    n, su, sv, suu, svv, suv = (s[..., k] for k in range(COLUMNS))
    var_x = n * suu - su * su
    var_y = n * svv - sv * sv
    defined = (var_x > CONSTANT * n * suu) & (var_y > CONSTANT * n * svv)
    # The square roots apart: their product could overflow where each is finite.
    scale = np.sqrt(np.where(defined, var_x, 1.0)) * np.sqrt(np.where(defined, var_y, 1.0))
    r = np.where(defined, (n * suv - su * sv) / scale, np.nan)
    return np.clip(r, -1.0, 1.0)


def sums_accurate(values: FloatArray, offset: float) -> bool:
    """Return whether sums of ``values − offset`` give r accurately (constant values do).

    True when the values are all equal, or when max |u| lies within MIN_MAGNITUDE..MAX_MAGNITUDE
    and κ = Σu² / Σ(u − ū)² ≤ MAX_CANCELLATION.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0 or x.min() == x.max():
        return True
    with np.errstate(over="ignore"):
        u = x - offset
    peak = float(np.max(np.abs(u)))
    if not MIN_MAGNITUDE <= peak <= MAX_MAGNITUDE:
        return False
    # Scaled to a largest magnitude of 1, the two-pass variance cannot overflow or underflow.
    w = u / peak
    spread = float(np.sum((w - w.mean()) ** 2))
    return spread > 0 and float(np.sum(w * w)) <= MAX_CANCELLATION * spread
