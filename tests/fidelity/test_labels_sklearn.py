"""Classification measures against scikit-learn on generated runs, read through the item format."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)

from leaderboard.formats.items import LabelParser, parse_gold, validate_run
from leaderboard.scoring.labels import classification_measures, per_item_correct
from tests.helpers.label_cases import Case, make_case, to_bytes

pytestmark = pytest.mark.fidelity


def reference(case: Case) -> dict[str, float | None]:
    """Return every measure as scikit-learn computes it (nan -> None)."""
    y, p, labels = case.gold, case.predicted, case.labels
    out: dict[str, float | None] = {}
    with warnings.catch_warnings():
        # Undefined values are part of what is compared; the warnings that announce them are not.
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        out["Acc"] = accuracy_score(y, p)
        for average, prefix in (
            ("macro", "macro-"),
            ("micro", "micro-"),
            ("weighted", "weighted-"),
        ):
            prec, rec, f1, _ = precision_recall_fscore_support(
                y, p, labels=labels, average=average, zero_division=0
            )
            if average == "macro":
                out["macro-P"], out["macro-R"] = prec, rec
            out[f"{prefix}F1"] = f1
        prec, rec, f1, _ = precision_recall_fscore_support(
            y, p, labels=labels, average=None, zero_division=0
        )
        for i, label in enumerate(labels):
            out[f"P[{label}]"], out[f"R[{label}]"], out[f"F1[{label}]"] = prec[i], rec[i], f1[i]
        rng = np.random.default_rng(case.seed + 1000)
        for size in range(1, len(labels) + 1):
            subset = [str(s) for s in rng.choice(labels, size=size, replace=False)]
            name = ",".join(subset)
            out[f"macro-F1[{name}]"] = f1_score(
                y, p, labels=subset, average="macro", zero_division=0
            )
            out[f"macro-P[{name}]"] = precision_score(
                y, p, labels=subset, average="macro", zero_division=0
            )
            out[f"macro-R[{name}]"] = recall_score(
                y, p, labels=subset, average="macro", zero_division=0
            )
        out["MCC"] = matthews_corrcoef(y, p)
        out["kappa"] = cohen_kappa_score(y, p, labels=labels)
    return {k: None if v is None or math.isnan(v) else float(v) for k, v in out.items()}


SEEDS = range(42)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_measure_matches_sklearn(seed: int) -> None:
    case = make_case(seed)
    parser = LabelParser(case.labels)
    ids = [f"item{i:04d}" for i in range(len(case.gold))]
    rng = np.random.default_rng(seed)
    gold, errors = parse_gold(to_bytes(ids, case.gold, np.arange(len(ids))), parser)
    assert gold is not None, errors
    run_values, errors, warnings_ = validate_run(
        to_bytes(ids, case.predicted, rng.permutation(len(ids))), gold, parser
    )
    assert run_values is not None and not errors and not warnings_, errors
    expected = reference(case)
    got = classification_measures(gold.values, run_values, case.labels, expected)
    assert set(got) == set(expected)
    for key, value in expected.items():
        if value is None:
            assert got[key] is None, (key, got[key])
        else:
            assert got[key] == pytest.approx(value, abs=1e-12, rel=0), key
    correct = per_item_correct(gold.values, run_values)
    assert correct.mean() == pytest.approx(expected["Acc"], abs=1e-15)


def test_the_cases_cover_every_kind_and_the_undefined_kappa() -> None:
    cases = [make_case(seed) for seed in SEEDS]
    assert {len(c.labels) for c in cases} == set(range(2, 8))
    assert any(len(c.gold) == 1 for c in cases)
    assert any(reference(c)["kappa"] is None for c in cases)
    assert any(len(set(c.predicted)) == 1 and len(set(c.gold)) > 1 for c in cases)
    assert any(set(c.gold) < set(c.labels) for c in cases)
    assert any(set(c.predicted) < set(c.labels) for c in cases)
