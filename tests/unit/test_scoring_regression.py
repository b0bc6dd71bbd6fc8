"""Regression measures: hand-computed values, undefined correlations, the O(n log n) Kendall."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from leaderboard.scoring.regression import (
    REGRESSION_REGISTRY,
    _inversions,
    average_ranks,
    kendall_tau_b,
    regression_measures,
    spearman,
)


def test_hand_computed_values() -> None:
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    predicted = np.array([1.0, 3.0, 2.0, 6.0])
    got = regression_measures(gold, predicted)
    assert got["MSE"] == pytest.approx((0 + 1 + 1 + 4) / 4)
    assert got["MAE"] == pytest.approx((0 + 1 + 1 + 2) / 4)
    assert got["RMSE"] == pytest.approx(1.5**0.5)
    # 6 pairs, 1 discordant (2,3), no ties: (5 - 1) / 6
    assert got["Kendall"] == pytest.approx(4 / 6)
    # ranks (1,2,3,4) and (1,3,2,4): 1 - 6·Σd² / (n(n²-1)) = 1 - 12/60
    assert got["Spearman"] == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("gold", "predicted"),
    [([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]), ([1.0, 1.0], [0.0, 5.0]), ([3.0], [4.0])],
)
def test_no_correlation_without_variation(gold, predicted) -> None:
    got = regression_measures(np.array(gold), np.array(predicted))
    assert got["Pearson"] is None and got["Spearman"] is None and got["Kendall"] is None
    assert got["MSE"] is not None


def test_errors_beyond_the_float_range_are_none() -> None:
    got = regression_measures(np.array([-1e308, 1e308]), np.array([1e308, -1e308]))
    assert got["MSE"] is None and got["RMSE"] is None and got["MAE"] is None
    assert got["Pearson"] == -1.0


def test_keys_are_checked_and_kept_in_order() -> None:
    got = regression_measures(np.array([1.0, 2.0]), np.array([2.0, 1.0]), ["RMSE", "Pearson"])
    assert list(got) == ["RMSE", "Pearson"]
    with pytest.raises(ValueError, match="unknown measure"):
        regression_measures(np.array([1.0]), np.array([1.0]), ["R2"])


@pytest.mark.parametrize(
    ("gold", "predicted", "message"),
    [([], [], "no items"), ([1.0], [1.0, 2.0], "one length"), ([np.nan], [1.0], "finite")],
)
def test_bad_inputs_are_refused(gold, predicted, message) -> None:
    with pytest.raises(ValueError, match=message):
        regression_measures(np.array(gold, dtype=float), np.array(predicted, dtype=float))


def test_registry_directions_and_scales() -> None:
    for key in ("Pearson", "Spearman", "Kendall"):
        entry = REGRESSION_REGISTRY.get(key)
        assert (entry.scale, entry.decimals, entry.lower_is_better) == ("correlation", 4, False)
    for key in ("MSE", "MAE", "RMSE"):
        entry = REGRESSION_REGISTRY.get(key)
        assert (entry.scale, entry.decimals, entry.lower_is_better) == ("score", 4, True)


def test_average_ranks_share_ties() -> None:
    assert average_ranks(np.array([10.0, 20.0, 10.0, 5.0])).tolist() == [2.5, 4.0, 2.5, 1.0]


def test_inversions_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 10, 65):
        for high in (1, 2, 5, 1000):
            values = rng.integers(0, high, size=n)
            brute = sum(1 for i, j in itertools.combinations(range(n), 2) if values[i] > values[j])
            assert _inversions(values) == brute


def test_spearman_and_kendall_of_a_perfect_order() -> None:
    x = np.arange(50.0)
    assert spearman(x, x * 3 + 1) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == -1.0
