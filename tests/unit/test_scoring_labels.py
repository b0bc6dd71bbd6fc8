"""Classification measures: hand-computed values, measure keys, registry entries."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.scoring.labels import (
    CLASSIFICATION_REGISTRY,
    check_labels,
    check_measure,
    classification_measures,
    per_item_correct,
)
from leaderboard.scoring.registry import UnknownMeasure

LABELS = ["positive", "negative", "neutral"]


def test_a_hand_computed_confusion() -> None:
    # gold:      pos pos pos neg neg neu
    # predicted: pos pos neg neg neu neu
    gold = np.array([0, 0, 0, 1, 1, 2])
    predicted = np.array([0, 0, 1, 1, 2, 2])
    keys = [
        "Acc",
        "P[positive]",
        "R[positive]",
        "F1[negative]",
        "macro-R",
        "kappa",
        "MCC",
        "macro-F1[positive,negative]",
        "weighted-F1",
        "micro-F1",
    ]
    got = classification_measures(gold, predicted, LABELS, keys)
    # P = (1, 1/2, 1/2), R = (2/3, 1/2, 1), F1 = (4/5, 1/2, 2/3)
    assert got["Acc"] == pytest.approx(4 / 6)
    assert got["P[positive]"] == 1.0
    assert got["R[positive]"] == pytest.approx(2 / 3)
    assert got["F1[negative]"] == pytest.approx(0.5)
    assert got["macro-R"] == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    assert got["macro-F1[positive,negative]"] == pytest.approx((0.8 + 0.5) / 2)
    assert got["weighted-F1"] == pytest.approx((3 * 0.8 + 2 * 0.5 + 1 * 2 / 3) / 6)
    assert got["micro-F1"] == pytest.approx(4 / 6)
    # po = 4/6; pe = (3*2 + 2*2 + 1*2) / 36 = 12/36
    assert got["kappa"] == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))
    assert list(got) == keys


def test_kappa_is_none_when_gold_and_prediction_are_one_same_label() -> None:
    got = classification_measures(np.array([2, 2]), np.array([2, 2]), LABELS, ["kappa", "MCC"])
    assert got == {"kappa": None, "MCC": 0.0}


def test_labels_never_seen_count_as_zero_in_macro_averages() -> None:
    got = classification_measures(np.array([0, 0]), np.array([0, 0]), LABELS, ["macro-F1", "Acc"])
    assert got == {"macro-F1": pytest.approx(1 / 3), "Acc": 1.0}


def test_default_keys_are_the_fixed_ones() -> None:
    got = classification_measures(np.array([0, 1]), np.array([0, 1]), LABELS)
    assert list(got) == list(CLASSIFICATION_REGISTRY.keys)


def test_per_item_values_are_one_when_correct() -> None:
    assert per_item_correct(np.array([0, 1, 2]), np.array([0, 2, 2])).tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(
        ValueError, match="gold and predicted must be 1-D arrays of the same length"
    ):
        per_item_correct(np.array([0]), np.array([0, 1]))


@pytest.mark.parametrize(
    ("gold", "predicted", "message"),
    [
        ([], [], "no items"),
        ([0, 1], [0], "same length"),
        ([0, 3], [0, 1], r"indices in 0\.\.2"),
        ([0, -1], [0, 1], r"indices in 0\.\.2"),
        ([0.0, 1.0], [0, 1], "integer indices"),
    ],
)
def test_bad_inputs_are_refused(gold, predicted, message) -> None:
    with pytest.raises(ValueError, match=message):
        classification_measures(np.array(gold), np.array(predicted), LABELS)


def test_registry_entries() -> None:
    for key in (
        "Acc",
        "macro-F1",
        "MCC",
        "kappa",
        "macro-F1[a,b]",
        "P[x-1]",
        "F1[a]",
        "weighted-F1[a]",
    ):
        entry = CLASSIFICATION_REGISTRY.get(key)
        assert entry.key == key and entry.scale == "fraction" and entry.decimals == 4
        assert not entry.lower_is_better
    for key in (
        "macro-F1[]",
        "F1[a,b]",
        "macro-F1[a, b]",
        "P[a]x",
        "f1",
        "macro-F1[a,,b]",
        "kappa[a]",
        "P[[a]]",
    ):
        assert key not in CLASSIFICATION_REGISTRY
    with pytest.raises(UnknownMeasure, match=r"macro-F1\[a,b,\.\.\.\], .*P\[a\]"):
        CLASSIFICATION_REGISTRY.get("F2")


def test_check_measure_validates_label_names() -> None:
    parsed = check_measure("macro-F1[negative,positive]", LABELS)
    assert (parsed.kind, parsed.labels) == ("macro-F1", (1, 0))
    assert check_measure("R[neutral]", LABELS).labels == (2,)
    assert check_measure("kappa", LABELS).labels == ()
    with pytest.raises(ValueError, match=r"not declared: 'Positive'; declared: 'positive', "):
        check_measure("P[Positive]", LABELS)
    with pytest.raises(ValueError, match="lists a label twice"):
        check_measure("macro-P[positive,positive]", LABELS)
    with pytest.raises(
        UnknownMeasure,
        match=r"unknown measure 'macro-F1\[positive, negative\]' for family classification",
    ):
        check_measure("macro-F1[positive, negative]", LABELS)


def test_check_labels() -> None:
    check_labels(["a", "b-c", "#d"])
    for bad in (["a,b"], ["a[1]"], ["a b"], [""], ["a", "a"], []):
        with pytest.raises(
            ValueError,
            match="must be non-empty, without whitespace|declared more than once|at least one label must be declared",
        ):
            check_labels(bad)
