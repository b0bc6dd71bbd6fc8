"""Pearson correlation, pair-weighted overall and the official 5-decimal form, on hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.scoring.correlation import official, pearson, weighted_overall


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def test_pearson_identical_is_one() -> None:
    assert pearson(arr(1, 2, 3), arr(1, 2, 3)) == 1.0


def test_pearson_reversed_is_minus_one() -> None:
    assert pearson(arr(1, 2, 3), arr(3, 2, 1)) == -1.0


def test_pearson_hand_case_four_fifths() -> None:
    # dx = dy-permuted = [-1.5, -.5, .5, 1.5]: sum dx*dy = 4, sum dx^2 = sum dy^2 = 5 -> 0.8
    assert pearson(arr(1, 2, 3, 4), arr(1, 3, 2, 4)) == pytest.approx(0.8, abs=1e-15)


def test_pearson_hand_case_one_half() -> None:
    # dx = [-1/3, -1/3, 2/3], dy = [-2/3, 1/3, 1/3]: (1/3) / sqrt(6/9 * 6/9) = 0.5
    assert pearson(arr(0, 0, 1), arr(0, 1, 1)) == pytest.approx(0.5, abs=1e-15)


def test_pearson_ignores_positive_affine_change_and_flips_on_negation() -> None:
    x, y = arr(0, 0, 1), arr(0, 1, 1)
    assert pearson(2 * x + 1, y) == pytest.approx(0.5, abs=1e-15)
    assert pearson(-x, y) == pytest.approx(-0.5, abs=1e-15)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (arr(2.5, 2.5, 2.5), arr(1, 2, 3)),
        (arr(1, 2, 3), arr(4, 4, 4)),
        # 0.1 is not exact in binary: a variance threshold of 0 would see rounding noise.
        (arr(0.1, 0.1, 0.1, 0.1), arr(1, 2, 3, 4)),
        (arr(1.0), arr(2.0)),
    ],
)
def test_pearson_constant_or_single_is_none(x: np.ndarray, y: np.ndarray) -> None:
    assert pearson(x, y) is None


def test_pearson_refuses_mismatched_lengths_and_non_finite() -> None:
    with pytest.raises(
        ValueError, match=r"pearson needs two 1-D arrays of one length, got \(3,\) and \(2,\)"
    ):
        pearson(arr(1, 2, 3), arr(1, 2))
    with pytest.raises(ValueError, match="pearson needs finite values"):
        pearson(arr(1, np.nan, 3), arr(1, 2, 3))


def test_weighted_overall_weights_by_scored_pairs() -> None:
    # (1 * 0.5 + 3 * 1.0) / 4
    assert weighted_overall({"a": 0.5, "b": 1.0}, {"a": 1, "b": 3}) == 0.875


def test_weighted_overall_en_weights_hand_computed() -> None:
    per_set = {"aa": 0.4, "hl": 0.5, "pl": 0.7, "pe": 0.8, "qq": 0.1}
    weights = {"aa": 254, "hl": 249, "pl": 230, "pe": 244, "qq": 209}
    # 101.6 + 124.5 + 161 + 195.2 + 20.9 = 603.2 over 1186 pairs
    assert weighted_overall(per_set, weights) == pytest.approx(603.2 / 1186, abs=1e-15)
    assert official(weighted_overall(per_set, weights)) == "0.50860"


def test_weighted_overall_refuses_mismatched_sets_and_zero_weights() -> None:
    with pytest.raises(
        ValueError, match=r"weights are for sets \['a', 'b'\], but values are for sets \['a'\]"
    ):
        weighted_overall({"a": 0.5}, {"a": 1, "b": 2})
    with pytest.raises(
        ValueError, match=r"weights are for sets \['a', 'b'\], but values are for sets \['a', 'c'\]"
    ):
        weighted_overall({"a": 0.5, "c": 0.1}, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="the weights add up to zero"):
        weighted_overall({"a": 0.5}, {"a": 0})
    with pytest.raises(ValueError, match="no per-set values to combine"):
        weighted_overall({}, {})


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.743214, "0.74321"), (-0.012344, "-0.01234"), (1.0, "1.00000"), (0.5, "0.50000")],
)
def test_official_is_five_decimals(value: float, shown: str) -> None:
    assert official(value) == shown
