"""Regression measures against scipy.stats and numpy on generated runs, read through the format."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

from leaderboard.formats.items import DecimalParser, parse_gold, validate_run
from leaderboard.scoring.regression import (
    absolute_errors,
    kendall_tau_b,
    regression_measures,
    squared_errors,
)

pytestmark = pytest.mark.fidelity

KINDS = ("normal", "ties", "constant-prediction", "constant-gold", "one", "two", "large", "tiny")


@dataclass(frozen=True)
class Case:
    """A generated gold and run, written as the decimals that the files carry."""

    seed: int
    gold: list[str]
    predicted: list[str]


def make_case(seed: int) -> Case:
    """Return the case of ``seed``; its kind cycles through KINDS."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    n = {"one": 1, "two": 2}.get(kind, int(rng.choice([3, 10, 57, 400])))
    gold = rng.normal(2.5, 1.2, size=n)
    predicted = gold + rng.normal(0, 0.8, size=n)
    if kind == "ties":
        gold = np.round(gold)
        predicted = np.round(predicted * 2) / 2
    elif kind == "constant-prediction":
        predicted = np.full(n, 3.0)
    elif kind == "constant-gold":
        gold = np.full(n, 1.5)
    elif kind == "large":
        gold, predicted = gold * 1e12, predicted * 1e12
    elif kind == "tiny":
        gold, predicted = gold * 1e-9, predicted * 1e-9
    return Case(seed, [repr(float(v)) for v in gold], [repr(float(v)) for v in predicted])


def reference(case: Case) -> dict[str, float | None]:
    """Return every measure as scipy.stats and numpy compute them (nan or too few -> None)."""
    x = np.array([float(v) for v in case.gold])
    y = np.array([float(v) for v in case.predicted])
    out: dict[str, float | None] = {}
    with warnings.catch_warnings():
        # A constant input is part of what is compared; scipy's warning about it is not.
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        for key, function in (
            ("Pearson", stats.pearsonr),
            ("Spearman", stats.spearmanr),
            ("Kendall", stats.kendalltau),
        ):
            if x.size < 2:
                out[key] = None  # pearsonr refuses one item; none of them defines a value
                continue
            value = float(function(x, y).statistic)
            out[key] = None if math.isnan(value) else value
    out["MSE"] = float(np.mean((y - x) ** 2))
    out["MAE"] = float(np.mean(np.abs(y - x)))
    out["RMSE"] = math.sqrt(out["MSE"])
    return out


def to_bytes(ids: list[str], values: list[str], order: np.ndarray) -> bytes:
    """Return an item file listing ``ids`` in ``order``, space-separated."""
    return "".join(f"{ids[i]} {values[i]}\n" for i in order).encode()


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_measure_matches_scipy(seed: int) -> None:
    case = make_case(seed)
    parser = DecimalParser()
    ids = [f"s{i}" for i in range(len(case.gold))]
    gold, errors = parse_gold(to_bytes(ids, case.gold, np.arange(len(ids))), parser)
    assert gold is not None, errors
    order = np.random.default_rng(seed).permutation(len(ids))
    run, errors, _ = validate_run(to_bytes(ids, case.predicted, order), gold, parser)
    assert run is not None, errors
    expected = reference(case)
    got = regression_measures(gold.values, run)
    assert set(got) == set(expected)
    for key, value in expected.items():
        if value is None:
            assert got[key] is None, (key, got[key])
        else:
            assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-9 * abs(value)), key
    x, y = gold.values, run
    assert np.array_equal(squared_errors(x, y), (y - x) ** 2)
    assert np.array_equal(absolute_errors(x, y), np.abs(y - x))


def test_the_cases_cover_ties_constants_and_small_sets() -> None:
    refs = [reference(make_case(seed)) for seed in SEEDS]
    assert sum(r["Pearson"] is None for r in refs) >= 10
    assert any(r["Kendall"] is not None and abs(r["Kendall"]) < 1 for r in refs)


@pytest.mark.parametrize("seed", range(6))
def test_kendall_on_many_ties_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 5_000
    x = rng.integers(0, 1 + seed * 7, size=n).astype(float)
    y = x * (seed % 2 * 2 - 1) + rng.integers(0, 4, size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        expected = float(stats.kendalltau(x, y).statistic)
    got = kendall_tau_b(x, y)
    if math.isnan(expected):
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)
