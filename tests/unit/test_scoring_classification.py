"""P, R, F1 and Acc for the ``true`` class, with zero denominators."""

from __future__ import annotations

import re

import numpy as np
import pytest

from leaderboard.scoring.classification import binary_measures

T, F = True, False


def _measures(gold: list[bool], predicted: list[bool]) -> dict[str, float]:
    return binary_measures(np.array(gold, dtype=bool), np.array(predicted, dtype=bool))


def test_counts() -> None:
    # gold T T T F F, predicted T T F T F: TP 2, FN 1, FP 1, TN 1.
    # P = 2/3, R = 2/3, F1 = 2/3, Acc = 3/5.
    result = _measures([T, T, T, F, F], [T, T, F, T, F])
    assert result["P"] == pytest.approx(2 / 3, abs=1e-15)
    assert result["R"] == pytest.approx(2 / 3, abs=1e-15)
    assert result["F1"] == pytest.approx(2 / 3, abs=1e-15)
    assert result["Acc"] == 0.6
    assert set(result) == {"P", "R", "F1", "Acc"}


def test_unequal_precision_and_recall() -> None:
    # gold T T T T F, predicted T F F F F: TP 1, FN 3, FP 0, TN 1.
    # P = 1, R = 1/4, F1 = 2 * 1 * 0.25 / 1.25 = 0.4, Acc = 2/5.
    result = _measures([T, T, T, T, F], [T, F, F, F, F])
    assert result == {"P": 1.0, "R": 0.25, "F1": 0.4, "Acc": 0.4}


def test_no_true_predicted() -> None:
    # TP + FP = 0 -> P = 0; R = 0/2 = 0; P + R = 0 -> F1 = 0; Acc = 2/4.
    result = _measures([T, T, F, F], [F, F, F, F])
    assert result == {"P": 0.0, "R": 0.0, "F1": 0.0, "Acc": 0.5}


def test_no_true_in_gold() -> None:
    # P = 0/3, TP + FN = 0 -> R = 0, F1 = 0, Acc = 1/4.
    result = _measures([F, F, F, F], [T, T, T, F])
    assert result == {"P": 0.0, "R": 0.0, "F1": 0.0, "Acc": 0.25}


def test_nothing_true_anywhere() -> None:
    result = _measures([F, F], [F, F])
    assert result == {"P": 0.0, "R": 0.0, "F1": 0.0, "Acc": 1.0}


def test_all_true_prediction() -> None:
    # All-true baseline: R = 1, P = Acc = share of true lines (2/5), F1 = 2 * 0.4 / 1.4 = 4/7.
    result = _measures([T, F, T, F, F], [T] * 5)
    assert result["R"] == 1.0
    assert result["P"] == 0.4
    assert result["Acc"] == 0.4
    assert result["F1"] == pytest.approx(4 / 7, abs=1e-15)


@pytest.mark.parametrize(
    ("gold", "predicted", "refusal"),
    [
        ([], [], "cannot compute classification measures on no lines"),
        ([T, F], [T], "gold and predicted must be 1-D arrays of the same length"),
        ([[T]], [[T]], "gold and predicted must be 1-D arrays of the same length"),
    ],
)
def test_rejects_bad_shapes(gold: list[object], predicted: list[object], refusal: str) -> None:
    with pytest.raises(ValueError, match=re.escape(refusal)):
        binary_measures(np.array(gold, dtype=bool), np.array(predicted, dtype=bool))
