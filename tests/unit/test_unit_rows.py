"""Each family's resampling rows reproduce its stored measures, and recompute them on samples.

For every measure of the example tasks (classification, regression, generation, TREC): the rows
built from what a scored run stores give back the measure's value on all units, and on a
bootstrap sample they give what the reference tool computes on that sample of items.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF
from scipy import stats
from sklearn import metrics

from leaderboard.cli.references import load_set_gold, read_definition
from leaderboard.scoring.resampling import (
    NotResampled,
    RecomputedRows,
    SummedRows,
    UnitRows,
    randomization_diffs,
    swap_masks,
)
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Evaluation, StoredScore
from tests.helpers.item_tasks import pairs

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
LIMIT = 10 << 20


def evaluate(folder: str, run: str, examples: Path = EXAMPLES) -> tuple[Any, Any, Evaluation]:
    """Return the family, the gold and the evaluation of an example run."""
    definition = read_definition(examples / folder / "task.toml")
    subtask = definition.subtasks[0]
    setdef = subtask.set(subtask.default_set)
    assert setdef is not None
    gold = load_set_gold(definition, subtask, setdef, LIMIT)
    family = get_family(definition.family)
    ctx = Context(definition, subtask, setdef.slug, LIMIT)
    inputs = family.inputs_from_path(examples / folder / run, ctx)
    try:
        evaluation = family.evaluate(inputs, gold, ctx, lenient=False, options={})
    finally:
        for stream in inputs.values():
            stream.close()
    assert evaluation.results is not None
    return family, gold, evaluation


def rows_of(family: Any, gold: Any, evaluation: Evaluation, key: str) -> tuple[list[str], UnitRows]:
    assert evaluation.results is not None
    result = evaluation.results[key]
    stored = StoredScore(result.per_query, result.item_stats, evaluation.item_values)
    return family.unit_rows(key, gold, stored)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("folder", "run"),
    [
        ("classification", "run-valid.tsv"),
        ("regression", "run-valid.tsv"),
        ("generation", "run-valid.de"),
        ("trec", "run-valid.txt"),
        ("trec-infap", "run-valid.txt"),
    ],
)
def test_rows_give_back_every_stored_measure(folder: str, run: str) -> None:
    family, gold, evaluation = evaluate(folder, run)
    assert evaluation.results is not None
    for key, result in evaluation.results.items():
        if result.raw is None:
            continue
        _units, rows = rows_of(family, gold, evaluation, key)
        assert rows.value() == pytest.approx(result.raw, rel=1e-9, abs=1e-12), key


def sample(units: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, units, units)


def on_sample(rows: UnitRows, index: np.ndarray) -> float:
    if isinstance(rows, SummedRows):
        return float(rows.finish(rows.rows[index].sum(axis=0)))
    return float(rows.measure(rows.rows[index]))


@pytest.mark.parametrize("seed", range(5))
def test_classification_rows_on_a_sample_are_scikit_learns_measures(seed: int) -> None:
    family, gold, evaluation = evaluate("classification", "run-valid.tsv")
    truth = pairs(EXAMPLES / "classification" / "gold.tsv")
    predicted = pairs(EXAMPLES / "classification" / "run-valid.tsv")
    labels = ["positive", "negative", "neutral"]
    references = {
        "macro-F1": lambda t, p: metrics.f1_score(t, p, labels=labels, average="macro"),
        "Acc": metrics.accuracy_score,
        "macro-F1[positive,negative]": lambda t, p: metrics.f1_score(
            t, p, labels=["positive", "negative"], average="macro", zero_division=0
        ),
        "macro-R": lambda t, p: metrics.recall_score(
            t, p, labels=labels, average="macro", zero_division=0
        ),
        "kappa": lambda t, p: metrics.cohen_kappa_score(t, p, labels=labels),
    }
    for key, reference in references.items():
        units, rows = rows_of(family, gold, evaluation, key)
        index = sample(len(units), seed)
        chosen = [units[i] for i in index]
        expected = reference([truth[u] for u in chosen], [predicted[u] for u in chosen])
        assert on_sample(rows, index) == pytest.approx(expected, abs=1e-12), key


@pytest.mark.parametrize("seed", range(5))
def test_regression_rows_on_a_sample_are_scipys_measures(seed: int) -> None:
    family, gold, evaluation = evaluate("regression", "run-valid.tsv")
    truth = pairs(EXAMPLES / "regression" / "gold.tsv")
    predicted = pairs(EXAMPLES / "regression" / "run-valid.tsv")
    for key, reference in {
        "Spearman": lambda x, y: stats.spearmanr(x, y).statistic,
        "Pearson": lambda x, y: stats.pearsonr(x, y).statistic,
        "Kendall": lambda x, y: stats.kendalltau(x, y).statistic,
        "MSE": lambda x, y: float(np.mean((x - y) ** 2)),
    }.items():
        units, rows = rows_of(family, gold, evaluation, key)
        index = sample(len(units), seed)
        x = np.array([float(truth[units[i]]) for i in index])
        y = np.array([float(predicted[units[i]]) for i in index])
        assert on_sample(rows, index) == pytest.approx(reference(x, y), abs=1e-9), key


def test_regression_pearson_is_summed_and_a_run_sums_would_not_reproduce_is_recomputed() -> None:
    family, gold, evaluation = evaluate("regression", "run-valid.tsv")
    units, summed = rows_of(family, gold, evaluation, "Pearson")
    assert isinstance(summed, SummedRows)
    truth = pairs(EXAMPLES / "regression" / "gold.tsv")
    predicted = pairs(EXAMPLES / "regression" / "run-valid.tsv")
    y = np.array([float(truth[u]) for u in units])
    x = np.array([float(predicted[u]) for u in units])
    # Beyond 1e154 the squares overflow: this run is recomputed from its raw values, and a
    # sample mixing its rows with the summed run's is recomputed for both.
    wild = 1e200 * (1.0 + y + np.sin(np.arange(len(units))))
    stored = StoredScore(item_values=dict(zip(units, wild.tolist(), strict=True)))
    wild_units, recomputed = family.unit_rows("Pearson", gold, stored)
    assert wild_units == units and isinstance(recomputed, RecomputedRows)
    assert recomputed.value() == pytest.approx(stats.pearsonr(y, wild).statistic, abs=1e-12)
    diffs = randomization_diffs([summed, recomputed], [(0, 1)], seed=4, samples=300)[:, 0]
    expected = [
        stats.pearsonr(y, np.where(swap, wild, x)).statistic
        - stats.pearsonr(y, np.where(swap, x, wild)).statistic
        for mask in swap_masks(4, 300, len(units))
        for swap in mask
    ]
    assert np.allclose(diffs, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_generation_rows_on_a_sample_are_sacrebleus_corpus_scores(seed: int) -> None:
    family, gold, evaluation = evaluate("generation", "run-valid.de")
    folder = EXAMPLES / "generation"
    hyps = (folder / "run-valid.de").read_text(encoding="utf-8").splitlines()
    refs = [
        (folder / name).read_text(encoding="utf-8").splitlines()
        for name in ("reference-1.de", "reference-2.de")
    ]
    for key, scorer in (("BLEU", BLEU()), ("chrF", CHRF())):
        if key not in evaluation.results:  # type: ignore[operator]
            continue
        units, rows = rows_of(family, gold, evaluation, key)
        index = sample(len(units), seed)
        expected = scorer.corpus_score(
            [hyps[i] for i in index], [[r[i] for i in index] for r in refs]
        )
        assert on_sample(rows, index) == pytest.approx(expected.score, abs=1e-9), key


def test_a_run_without_stored_predictions_is_not_resampled() -> None:
    family, gold, evaluation = evaluate("classification", "run-valid.tsv")
    with pytest.raises(NotResampled, match="keeps no predicted labels"):
        family.unit_rows("macro-F1", gold, StoredScore())
    family, gold, evaluation = evaluate("regression", "run-valid.tsv")
    with pytest.raises(NotResampled, match="keeps no predicted values"):
        family.unit_rows("Pearson", gold, StoredScore())


def test_trec_geometric_mean_and_counts_follow_their_own_aggregation(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "trec", tmp_path / "trec")
    definition = tmp_path / "trec" / "task.toml"
    text = definition.read_text()
    text = text.replace(
        'measures = ["nDCG@10", "P@10", "R@100", "MAP"]',
        'measures = ["nDCG@10", "GMAP", "num_rel_ret"]',
    )
    assert "GMAP" in text
    definition.write_text(text)
    family, gold, evaluation = evaluate("trec", "run-valid.txt", tmp_path)
    assert evaluation.results is not None
    for key in ("GMAP", "num_rel_ret"):
        units, rows = rows_of(family, gold, evaluation, key)
        per_query = evaluation.results[key].per_query
        assert per_query is not None
        values = np.array([per_query[u] for u in units])
        index = sample(len(units), 3)
        expected = (
            float(np.exp(np.log(np.maximum(values[index], 1e-5)).mean()))
            if key == "GMAP"
            else float(values[index].sum())
        )
        assert rows.value() == pytest.approx(evaluation.results[key].raw, rel=1e-12)
        assert on_sample(rows, index) == pytest.approx(expected, rel=1e-12)
