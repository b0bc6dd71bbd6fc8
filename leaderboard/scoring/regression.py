"""Regression measures (pure numpy): Pearson, Spearman, Kendall's tau-b and the mean errors.

The correlations follow ``scipy.stats.pearsonr``, ``spearmanr`` and ``kendalltau`` (tau-b);
a constant gold or prediction (or fewer than 2 items) has no correlation: None. ``MSE``,
``MAE`` and ``RMSE`` are lower-is-better errors in the data's unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from leaderboard.scoring.registry import Measure, MeasureRegistry

_CORRELATIONS = {
    "Pearson": "Pearson correlation",
    "Spearman": "Spearman rank correlation (Pearson of average ranks)",
    "Kendall": "Kendall's tau-b",
}
_ERRORS = {
    "MSE": "mean squared error",
    "MAE": "mean absolute error",
    "RMSE": "root mean squared error",
}

REGRESSION_REGISTRY = MeasureRegistry(
    "regression",
    [
        *(Measure(k, k, "correlation", 4, 4, notes=n) for k, n in _CORRELATIONS.items()),
        *(Measure(k, k, "score", 4, 4, lower_is_better=True, notes=n) for k, n in _ERRORS.items()),
    ],
)


def _pair(gold: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return both as float arrays; raise ValueError unless 1-D, same length, finite, non-empty."""
    g = np.asarray(gold, dtype=np.float64)
    p = np.asarray(predicted, dtype=np.float64)
    if g.shape != p.shape or g.ndim != 1:
        raise ValueError(f"gold and predicted must be 1-D of one length, got {g.shape}, {p.shape}")
    if g.size == 0:
        raise ValueError("cannot compute regression measures on no items")
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(p))):
        raise ValueError("regression measures need finite values")
    return g, p


def pearson(gold: np.ndarray, predicted: np.ndarray) -> float | None:
    """Return Pearson's r = Σ(x−x̄)(y−ȳ) / sqrt(Σ(x−x̄)² Σ(y−ȳ)²); None when either is constant."""
    x, y = _pair(gold, predicted)
    # Exact equality: a constant such as 0.1 leaves rounding noise that would yield any r.
    if x.size < 2 or x.min() == x.max() or y.min() == y.max():
        return None
    # r ignores scale: dividing by the largest magnitude keeps the sums below from overflowing.
    x = x / float(np.max(np.abs(x)))
    y = y / float(np.max(np.abs(y)))
    dx = x - x.mean()
    dy = y - y.mean()
    r = float(np.dot(dx, dy)) / math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy)))
    # Rounding can push |r| a hair past 1 for perfectly (anti)correlated data.
    return min(1.0, max(-1.0, r))


def _ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the average ranks (1-based, ties share their mean) and 0-based dense ranks."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new_group = np.empty(ordered.size, dtype=bool)
    new_group[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    ends = np.r_[starts[1:], ordered.size]
    # A tie group occupying positions s..e-1 (0-based) gets the rank (s+1 + e) / 2.
    sizes = ends - starts
    average = np.empty(values.size, dtype=np.float64)
    average[order] = np.repeat((starts + 1 + ends) / 2.0, sizes)
    dense = np.empty(values.size, dtype=np.int64)
    dense[order] = np.cumsum(new_group) - 1
    return average, dense


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Return 1-based ranks, ties sharing the mean of their positions (scipy's rankdata)."""
    return _ranks(np.asarray(values, dtype=np.float64))[0]


def spearman(gold: np.ndarray, predicted: np.ndarray) -> float | None:
    """Return Spearman's rho: Pearson's r of the average ranks; None when either is constant."""
    g, p = _pair(gold, predicted)
    return pearson(average_ranks(g), average_ranks(p))


def _tied_pairs(ranks: np.ndarray) -> int:
    """Return the number of pairs sharing a rank: Σ c(c−1)/2 over the rank counts c."""
    counts = np.bincount(ranks).astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _inversions(values: np.ndarray) -> int:
    """Return the pairs i < j with values[i] > values[j] (non-negative ints), in O(n log n).

    Bit by bit from the highest: within a group of items sharing the higher bits (kept in
    original order), a pair is inverted at this bit iff the earlier item has bit 1 and the
    later bit 0. Each group is then split, stably, into its 0s and its 1s for the next bit.
    """
    n = values.size
    if n < 2:
        return 0
    current = values.astype(np.int64)
    positions = np.arange(n)
    starts = np.zeros(1, dtype=np.int64)  # one group: everything
    total = 0
    for b in range(int(current.max()).bit_length() - 1, -1, -1):
        sizes = np.diff(np.r_[starts, n])
        group_start = np.repeat(starts, sizes)
        bit = (current >> b) & 1
        ones_through = np.cumsum(bit)
        ones_before = ones_through - bit
        ones_in_group_before = ones_before - ones_before[group_start]
        total += int(ones_in_group_before[bit == 0].sum())
        ones_in_group = np.repeat(ones_through[starts + sizes - 1] - ones_before[starts], sizes)
        zeros_before = positions - group_start - ones_in_group_before
        zeros_in_group = np.repeat(sizes, sizes) - ones_in_group
        target = group_start + np.where(
            bit == 0, zeros_before, zeros_in_group + ones_in_group_before
        )
        regrouped = np.empty_like(current)
        regrouped[target] = current
        current = regrouped
        # The new groups: each old group's 0s, then its 1s (empty parts dropped).
        ends = starts + sizes
        split = ends - (ones_through[ends - 1] - ones_before[starts])
        pairs = np.column_stack((starts, split))
        keep = np.column_stack(
            (np.ones(starts.size, dtype=bool), (split > starts) & (split < ends))
        )
        starts = pairs[keep]
    return total


def kendall_tau_b(gold: np.ndarray, predicted: np.ndarray) -> float | None:
    """Return Kendall's tau-b, None when either side is constant.

    tau_b = (C − D) / sqrt((T − T_x)(T − T_y)), T = n(n−1)/2 pairs, T_x and T_y the pairs tied
    in gold and in prediction, C − D = T − T_x − T_y + T_xy − 2D with T_xy the pairs tied in
    both and D the discordant pairs, counted as inversions after sorting by (gold, prediction).
    """
    g, p = _pair(gold, predicted)
    return _tau_b(_ranks(g)[1], _ranks(p)[1])


def _tau_b(x: np.ndarray, y: np.ndarray) -> float | None:
    """Return tau-b of two dense rank arrays (see kendall_tau_b)."""
    n = x.size
    total = n * (n - 1) // 2
    x_ties = _tied_pairs(x)
    y_ties = _tied_pairs(y)
    if n < 2 or x_ties == total or y_ties == total:
        return None
    # One sort by (x, y): both are dense ranks below n, so x·n + y orders pairs exactly.
    keys = np.sort(x * n + y)
    joint = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1], True])
    sizes = np.diff(joint).astype(np.int64)
    both_ties = int((sizes * (sizes - 1) // 2).sum())
    discordant = _inversions(keys % n)
    concordant_minus = total - x_ties - y_ties + both_ties - 2 * discordant
    tau = concordant_minus / math.sqrt(total - x_ties) / math.sqrt(total - y_ties)
    return min(1.0, max(-1.0, tau))


def squared_errors(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return (predicted − gold)² per item (MSE's per-item values)."""
    g, p = _pair(gold, predicted)
    with np.errstate(over="ignore"):  # beyond the float range is inf, reported by the means
        return (p - g) ** 2


def absolute_errors(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return |predicted − gold| per item (MAE's per-item values)."""
    g, p = _pair(gold, predicted)
    with np.errstate(over="ignore"):
        return np.abs(p - g)


def _finite(value: float) -> float | None:
    """Return ``value``, or None when it overflowed the float range."""
    return value if math.isfinite(value) else None


def regression_measures(
    gold: np.ndarray, predicted: np.ndarray, keys: Iterable[str] = REGRESSION_REGISTRY.keys
) -> dict[str, float | None]:
    """Return each measure in ``keys`` (default: all) of ``predicted`` against ``gold``.

    Pearson r = Σ(x−x̄)(y−ȳ) / sqrt(Σ(x−x̄)² Σ(y−ȳ)²); Spearman = Pearson of average ranks;
    Kendall = tau-b; MSE = mean((y−x)²), MAE = mean(|y−x|), RMSE = sqrt(MSE). An error beyond
    the float range (values near 1e308) is None, like an undefined correlation.
    """
    keys = list(keys)
    for key in keys:
        REGRESSION_REGISTRY.get(key)
    g, p = _pair(gold, predicted)
    out: dict[str, float | None] = {}
    if "Pearson" in keys:
        out["Pearson"] = pearson(g, p)
    if {"Spearman", "Kendall"} & set(keys):
        # One sort per side serves both rank correlations.
        g_average, g_dense = _ranks(g)
        p_average, p_dense = _ranks(p)
        out["Spearman"] = pearson(g_average, p_average)
        out["Kendall"] = _tau_b(g_dense, p_dense)
    if {"MSE", "RMSE"} & set(keys):
        with np.errstate(over="ignore"):
            mse = float(np.mean(squared_errors(g, p)))
        out["MSE"] = _finite(mse)
        out["RMSE"] = _finite(math.sqrt(mse))
    if "MAE" in keys:
        with np.errstate(over="ignore"):
            out["MAE"] = _finite(float(np.mean(absolute_errors(g, p))))
    return {key: out[key] for key in keys}
