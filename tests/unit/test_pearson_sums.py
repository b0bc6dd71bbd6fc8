"""Pearson's r from summed rows against scipy: on all items, on bootstrap samples, constant sides.

The expected values are scipy's ``pearsonr`` on the items themselves; a side with equal values
(or fewer than two items) has no r (NaN). ``sums_accurate`` tells apart the runs whose sums keep
r within 1e-12 from those that must be recomputed.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from leaderboard.scoring.pearson_sums import (
    pearson_from_sums,
    pearson_rows,
    sums_accurate,
)


def scipy_r(x: np.ndarray, y: np.ndarray) -> float:
    """Return scipy's r, NaN when a side is constant or has fewer than two items."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.pearsonr(x, y).statistic)


def data(seed: int, n: int, scale: float, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 51, n) / 10.0  # STS-like gold, 0 to 5 in steps of 0.1
    x = shift + scale * (y + rng.normal(0, 1.2, n))
    return x, y


@pytest.mark.parametrize(
    ("scale", "shift"), [(1.0, 0.0), (0.2, 2.0), (20.0, -40.0), (1e-3, 2.5), (1e5, 1e5)]
)
def test_r_from_sums_is_scipys_on_all_items_and_on_bootstrap_samples(
    scale: float, shift: float
) -> None:
    x, y = data(1, 700, scale, shift)
    offset = float(y.mean())
    assert sums_accurate(x, offset) and sums_accurate(y, offset)
    rows = pearson_rows(x, y, offset)
    assert float(pearson_from_sums(rows.sum(axis=0))) == pytest.approx(scipy_r(x, y), abs=1e-12)
    rng = np.random.default_rng(2)
    draws = rng.integers(0, len(x), (40, len(x)))
    counts = np.stack([np.bincount(d, minlength=len(x)) for d in draws]).astype(np.float64)
    ours = pearson_from_sums(counts @ rows)  # vectorized over the samples
    theirs = [scipy_r(x[d], y[d]) for d in draws]
    assert np.allclose(ours, theirs, rtol=0, atol=1e-12)


def test_a_constant_side_or_fewer_than_two_items_has_no_r() -> None:
    x, y = data(3, 50, 1.0, 0.0)
    offset = 2.4713  # not a value of the data: u of equal values carries rounding
    for constant in (np.full(50, 0.1), np.full(50, 1e6), np.full(50, 3.3)):
        assert np.isnan(pearson_from_sums(pearson_rows(constant, y, offset).sum(axis=0)))
        assert np.isnan(pearson_from_sums(pearson_rows(x, constant, offset).sum(axis=0)))
        assert sums_accurate(constant, offset)
    rows = pearson_rows(x, y, offset)
    sums = np.stack([rows[:0].sum(axis=0), rows[:1].sum(axis=0), rows[[4, 4, 4]].sum(axis=0)])
    assert np.isnan(pearson_from_sums(sums)).all()
    # Two distinct items: r is ±1 (or NaN where one side ties), as scipy's.
    for pair in ([0, 1], [2, 7], [3, 9]):
        expected = scipy_r(x[pair], y[pair])
        got = float(pearson_from_sums(rows[pair].sum(axis=0)))
        assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)


def test_perfect_correlation_is_clipped_to_one() -> None:
    x = np.linspace(0.1, 4.9, 333)
    r = pearson_from_sums(pearson_rows(x, 3 * x + 0.7, 2.5).sum(axis=0))
    assert float(r) == pytest.approx(1.0, abs=1e-14) and float(r) <= 1.0


@pytest.mark.parametrize(
    ("x", "offset"),
    [
        (1000.0 + np.linspace(0, 1e-3, 100), 2.5),  # far from the offset for their spread
        (2.5 + 1e-3 + np.linspace(0, 1e-9, 100), 2.5),  # almost constant near it
        (1e200 * np.linspace(1, 2, 100), 2.5),  # squares beyond the float range
        (np.linspace(1e-120, 2e-120, 100), 0.0),  # squares below it
    ],
)
def test_values_sums_would_not_reproduce_are_flagged(x: np.ndarray, offset: float) -> None:
    assert not sums_accurate(x, offset)
    assert sums_accurate(np.linspace(0, 5, 100), offset)
