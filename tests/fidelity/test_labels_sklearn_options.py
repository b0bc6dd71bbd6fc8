"""Every averaging, F-beta, weighted kappa and per-item weights against scikit-learn.

The generated cases of test_labels_sklearn (ties, constant predictions, labels absent from gold
or prediction, one-item sets) are scored with and without item weights (zeros included),
the gold read through the weighted item format, and compared with scikit-learn's functions
given ``labels`` = the declared labels, ``zero_division=0`` and ``sample_weight``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    fbeta_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from leaderboard.formats.items import LabelParser, parse_gold, validate_run
from leaderboard.scoring.labels import classification_measures
from tests.helpers.label_cases import Case, make_case, to_bytes

pytestmark = pytest.mark.fidelity

#: Betas written as a definition writes them (F1 is the existing key, the others F-beta).
BETAS = ("0.5", "1", "2", "0.3", "1.5", "3")
AVERAGES = ("macro", "micro", "weighted")
SEEDS = range(60)


def weights_for(seed: int, n: int) -> list[float] | None:
    """Return no weights, small integers, or quarters with zeros (one weight always positive)."""
    rng = np.random.default_rng(seed + 5000)
    kind = seed % 3
    if kind == 0:
        return None
    if kind == 1:
        weights = [float(w) for w in rng.integers(0, 4, size=n)]
    else:
        # Quarters are exact in binary: every sum is exact, as scikit-learn's is.
        weights = [float(w) / 4 for w in rng.integers(0, 9, size=n)]
    if not any(weights):
        weights[int(rng.integers(n))] = 1.0
    return weights


def keys_for(case: Case) -> dict[str, tuple[str, str, float, list[str]]]:
    """Return each P/R/F key to check: (metric, average, beta, labels) as scikit-learn takes them."""
    rng = np.random.default_rng(case.seed + 2000)
    labels = case.labels
    subsets = [list(labels)]
    for size in (1, max(1, len(labels) - 1)):
        subsets.append([str(s) for s in rng.choice(labels, size=size, replace=False)])
    absent = [label for label in labels if label not in case.gold]
    if absent:
        subsets.append(absent)  # no gold support: the weighted average falls back to the mean
    out: dict[str, tuple[str, str, float, list[str]]] = {}
    for subset in subsets:
        suffix = "" if subset == labels else f"[{','.join(subset)}]"
        for average in AVERAGES:
            for metric in ("P", "R"):
                out[f"{average}-{metric}{suffix}"] = (metric, average, 1.0, subset)
            for beta in BETAS:
                out[f"{average}-F{beta}{suffix}"] = ("F", average, float(beta), subset)
    for label in labels:
        out[f"P[{label}]"] = ("P", "macro", 1.0, [label])
        out[f"R[{label}]"] = ("R", "macro", 1.0, [label])
        for beta in BETAS:
            out[f"F{beta}[{label}]"] = ("F", "macro", float(beta), [label])
    return out


def reference(case: Case, weights: list[float] | None) -> dict[str, float | None]:
    """Return every measure as scikit-learn computes it (nan -> None)."""
    y, p = case.gold, case.predicted
    out: dict[str, float] = {}
    with warnings.catch_warnings():
        # Undefined values are compared; the warnings that announce them are not.
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        for key, (metric, average, beta, subset) in keys_for(case).items():
            common = {
                "labels": subset,
                "average": average,
                "zero_division": 0,
                "sample_weight": weights,
            }
            if metric == "P":
                out[key] = precision_score(y, p, **common)
            elif metric == "R":
                out[key] = recall_score(y, p, **common)
            else:
                out[key] = fbeta_score(y, p, beta=beta, **common)
        out["Acc"] = accuracy_score(y, p, sample_weight=weights)
        out["MCC"] = matthews_corrcoef(y, p, sample_weight=weights)
        out["kappa"] = cohen_kappa_score(y, p, labels=case.labels, sample_weight=weights)
        for how in ("linear", "quadratic"):
            out[f"kappa[{how}]"] = cohen_kappa_score(
                y, p, labels=case.labels, weights=how, sample_weight=weights
            )
    return {k: None if math.isnan(v) else float(v) for k, v in out.items()}


def gold_bytes(ids: list[str], labels: list[str], weights: list[float] | None) -> bytes:
    """Return a gold file, with each item's weight as a third field when weighted."""
    if weights is None:
        return to_bytes(ids, labels, np.arange(len(ids)))
    return "".join(
        f"{i}\t{g}\t{w!r}\n" for i, g, w in zip(ids, labels, weights, strict=True)
    ).encode()


def scored(case: Case, weights: list[float] | None, keys: list[str]) -> dict[str, float | None]:
    """Return the measures of the case read through the item format (run lines shuffled)."""
    parser = LabelParser(case.labels)
    ids = [f"item{i:04d}" for i in range(len(case.gold))]
    gold, errors = parse_gold(
        gold_bytes(ids, case.gold, weights), parser, weighted=weights is not None
    )
    assert gold is not None, errors
    if weights is not None:
        assert gold.weights is not None and gold.weights.tolist() == weights
    order = np.random.default_rng(case.seed).permutation(len(ids))
    values, errors, _ = validate_run(to_bytes(ids, case.predicted, order), gold, parser)
    assert values is not None, errors
    return classification_measures(gold.values, values, case.labels, keys, gold.weights)


def assert_agree(got: dict[str, float | None], expected: dict[str, float | None]) -> None:
    assert set(got) == set(expected)
    for key, value in expected.items():
        if value is None:
            assert got[key] is None, (key, got[key])
        else:
            assert got[key] == pytest.approx(value, abs=1e-12, rel=1e-12), key


@pytest.mark.parametrize("seed", SEEDS)
def test_every_option_matches_sklearn(seed: int) -> None:
    case = make_case(seed)
    weights = weights_for(seed, len(case.gold))
    expected = reference(case, weights)
    assert_agree(scored(case, weights, list(expected)), expected)


@pytest.mark.parametrize("seed", range(0, 60, 7))
def test_arbitrary_float_weights_match_sklearn(seed: int) -> None:
    # Weights without an exact binary sum, on cases where no total is 0 or constant.
    rng = np.random.default_rng(seed + 9000)
    labels = ["a", "b", "c", "d"][: 2 + seed % 3]
    n = int(rng.integers(5, 60))
    gold = [str(x) for x in rng.choice(labels, size=n)]
    predicted = [str(x) for x in rng.choice(labels, size=n)]
    gold[:2], predicted[:2] = labels[:2], labels[1::-1]  # both sides vary
    case = Case(seed, labels, gold, predicted)
    weights = [float(w) for w in rng.uniform(0.01, 3.0, size=n)]
    expected = reference(case, weights)
    assert_agree(scored(case, weights, list(expected)), expected)


def test_weights_change_every_measure_as_repeating_items_would() -> None:
    # An item of weight 2 counts as that item twice; weight 0 as its absence.
    rng = np.random.default_rng(7)
    labels = ["a", "b", "c", "d"]
    gold, predicted = ([str(x) for x in rng.choice(labels, size=80)] for _ in range(2))
    case = Case(7, labels, gold, predicted)
    weights = [float(i % 3) for i in range(len(case.gold))]
    weights[0] = 1.0
    repeated = Case(
        case.seed,
        case.labels,
        [g for g, w in zip(case.gold, weights, strict=True) for _ in range(int(w))],
        [p for p, w in zip(case.predicted, weights, strict=True) for _ in range(int(w))],
    )
    expected = reference(repeated, None)
    got = scored(case, weights, list(expected))
    assert_agree(got, expected)
    assert got != scored(case, None, list(expected))


def test_f_beta_one_is_the_existing_f1() -> None:
    for seed in SEEDS:
        case = make_case(seed)
        keys = ["macro-F1", "micro-F1", "weighted-F1", f"F1[{case.labels[0]}]"]
        beta_keys = [k.replace("F1", "F1.0") for k in keys]
        got = scored(case, weights_for(seed, len(case.gold)), keys + beta_keys)
        for key, beta_key in zip(keys, beta_keys, strict=True):
            assert got[key] == got[beta_key], (seed, key)


def test_the_cases_cover_weights_ties_absent_labels_and_one_item() -> None:
    cases = [(make_case(s), weights_for(s, len(make_case(s).gold))) for s in SEEDS]
    assert any(w is not None and 0.0 in w for _, w in cases)
    assert any(w is not None and any(x % 1 for x in w) for _, w in cases)
    assert any(len(c.gold) == 1 and w is not None for c, w in cases)
    assert any(len(c.gold) == 1 and w is None for c, w in cases)
    assert any(c.seed % 7 == 5 and w is not None for c, w in cases)  # ties, weighted
    assert any(set(c.gold) < set(c.labels) and w is not None for c, w in cases)
    assert any(set(c.predicted) < set(c.labels) and w is not None for c, w in cases)
    assert any(reference(c, w)["kappa[linear]"] is None for c, w in cases)
