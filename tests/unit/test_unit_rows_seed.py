"""The seed families' corpus-level measures resample exactly: CQA per question.

CQA (SemEval-2016 Task 3 gold shipped with the package): the rows of every measure give back
the stored value, and on bootstrap samples of questions they give AvgRec computed here from each
question's ranking, and scikit-learn's P, R, F1 and accuracy on the drawn questions' rows.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from sklearn import metrics

from leaderboard.formats.cqa import CqaRun, parse_gold
from leaderboard.scoring.resampling import (
    NotResampled,
    SummedRows,
    UnitRows,
)
from leaderboard.tasks.families.base import MeasureResult, StoredScore
from leaderboard.tasks.families.cqa import CqaFamily
from tests.runs import GOLD_TEST_A, gold_lines

LIMIT = 10 << 20
TOP = 10


def on_sample(rows: UnitRows, index: np.ndarray) -> float:
    """Return the measure on the units ``index`` draws (with repeats)."""
    if isinstance(rows, SummedRows):
        return float(rows.finish(rows.rows[index].sum(axis=0)))
    return float(rows.measure(rows.rows[index]))


# --------------------------------------------------------------------------------------------
# CQA


def cqa_questions(lines: list[list[str]]) -> list[tuple[str, list[bool]]]:
    """Return each question's id and gold labels, in gold order (from the file's columns)."""
    out: list[tuple[str, list[bool]]] = []
    for question, _candidate, _position, _ir, label in lines:
        if not out or out[-1][0] != question:
            out.append((question, []))
        out[-1][1].append(label.strip() == "true")
    return out


def ranked_labels(labels: list[bool], scores: list[float]) -> list[bool]:
    """Return the gold labels in the run's order: score descending, ties in gold order."""
    order = sorted(range(len(labels)), key=lambda i: -scores[i])  # sorted() is stable
    return [labels[i] for i in order]


def avgrec(rankings: list[list[bool]]) -> float:
    """Return (1/10) Σ_k Σ_q hits_q(k) / Σ_q min(k, R_q); 0 when no question has a relevant."""
    if sum(sum(r) for r in rankings) == 0:
        return 0.0
    total = 0.0
    for k in range(1, TOP + 1):
        hits = sum(sum(r[:k]) for r in rankings)
        possible = sum(min(k, sum(r)) for r in rankings)
        total += hits / possible
    return total / TOP


SKLEARN = {
    "P": lambda t, p: metrics.precision_score(t, p, zero_division=0),
    "R": lambda t, p: metrics.recall_score(t, p, zero_division=0),
    "F1": lambda t, p: metrics.f1_score(t, p, zero_division=0),
    "Acc": metrics.accuracy_score,
}


def cqa_runs() -> dict[str, tuple[list[float], list[bool]]]:
    """Return runs over the official test gold: random, all 'true', all 'false', near-oracle."""
    lines = gold_lines(GOLD_TEST_A)
    truth = [line[4].strip() == "true" for line in lines]
    rng = random.Random(11)
    runs: dict[str, tuple[list[float], list[bool]]] = {}
    scores = [rng.random() for _ in truth]
    runs["random"] = (scores, [s > 0.5 for s in scores])
    runs["all-true"] = ([float(line[3]) for line in lines], [True] * len(truth))
    runs["all-false"] = ([float(line[3]) for line in lines], [False] * len(truth))
    noisy = [float(t) + rng.gauss(0, 0.6) for t in truth]
    runs["near-oracle"] = (noisy, [s > 0.5 for s in noisy])
    return runs


def cqa_score(scores: list[float], predicted: list[bool], rows: int | None = None) -> Any:
    gold = parse_gold(GOLD_TEST_A.read_bytes())
    n = len(scores) if rows is None else rows
    run = CqaRun(n, np.array(scores[:n]), np.array(predicted[:n], dtype=bool))
    return gold, CqaFamily().score(run, gold)


def stored(result: MeasureResult, item_values: Any = None) -> StoredScore:
    return StoredScore(result.per_query, result.item_stats, item_values)


@pytest.mark.parametrize("name", ["random", "all-true", "all-false", "near-oracle"])
def test_cqa_rows_give_back_every_stored_measure(name: str) -> None:
    scores, predicted = cqa_runs()[name]
    gold, results = cqa_score(scores, predicted)
    family = CqaFamily()
    for key, result in results.items():
        units, rows = family.unit_rows(key, gold, stored(result))
        assert units == list(gold.questions), key
        assert isinstance(rows, SummedRows)
        assert rows.value() == pytest.approx(result.raw, rel=0, abs=1e-12), key
        # Only MAP and MRR are means of per-question values (what t-tests may test).
        assert (rows.mean_of is not None) == (key in ("MAP", "MRR")), key


@pytest.mark.parametrize("seed", range(4))
def test_cqa_rows_on_a_sample_of_questions_are_the_measures_of_those_questions(seed: int) -> None:
    questions = cqa_questions(gold_lines(GOLD_TEST_A))
    family = CqaFamily()
    for name, (scores, predicted) in cqa_runs().items():
        gold, results = cqa_score(scores, predicted)
        rankings, truth, labels, start = [], [], [], 0
        for _question, gold_labels in questions:
            end = start + len(gold_labels)
            rankings.append(ranked_labels(gold_labels, scores[start:end])[:TOP])
            truth.append(gold_labels)
            labels.append(predicted[start:end])
            start = end
        index = np.random.default_rng(seed).integers(0, len(questions), len(questions))
        expected = {"AvgRec": avgrec([rankings[i] for i in index])}
        t = [label for i in index for label in truth[i]]
        p = [label for i in index for label in labels[i]]
        expected.update({key: reference(t, p) for key, reference in SKLEARN.items()})
        for key, value in expected.items():
            _units, rows = family.unit_rows(key, gold, stored(results[key]))
            assert on_sample(rows, index) == pytest.approx(value, rel=0, abs=1e-12), (name, key)


def small_gold() -> bytes:
    """Return a gold of three questions; only Q1 has relevant candidates."""
    labels = {"Q1": ["true", "false", "true"], "Q2": ["false", "false"], "Q3": ["false"] * 4}
    return "".join(
        f"{q}\t{q}_C{i}\t{i}\t0\t{label}\n"
        for q, row in labels.items()
        for i, label in enumerate(row, 1)
    ).encode()


def test_cqa_samples_without_relevant_or_predicted_true_follow_the_scorer() -> None:
    gold = parse_gold(small_gold())
    family = CqaFamily()
    # Q1: 'true' predicted on its first candidate only; Q2 and Q3: nothing predicted 'true'.
    predicted = np.array([True, False, False] + [False] * 6)
    scores = np.linspace(1.0, 0.1, 9)
    results = family.score(CqaRun(9, scores, predicted), gold)
    rows = {k: family.unit_rows(k, gold, stored(r))[1] for k, r in results.items()}
    truth = [[True, False, True], [False, False], [False] * 4]
    guess = [[True, False, False], [False, False], [False] * 4]
    for index in ([0, 1, 2], [1, 2, 2], [2, 2, 2], [1, 1, 0]):
        chosen = np.array(index)
        # Without Q1, Σ R_q = 0: AvgRec is 0 (the scorer's flagged case); P, R, F1 are 0.
        expected_avgrec = avgrec([[True, False, True] if i == 0 else [False] for i in index])
        assert on_sample(rows["AvgRec"], chosen) == pytest.approx(expected_avgrec, abs=1e-15)
        t = [x for i in index for x in truth[i]]
        p = [x for i in index for x in guess[i]]
        for key, reference in SKLEARN.items():
            assert on_sample(rows[key], chosen) == pytest.approx(reference(t, p), abs=1e-15)
    assert on_sample(rows["AvgRec"], np.array([1, 2])) == 0.0


def test_cqa_a_truncated_run_has_rows_for_the_questions_it_covers() -> None:
    scores, predicted = cqa_runs()["random"]
    gold, results = cqa_score(scores, predicted, rows=25)
    covered = sorted({line[0] for line in gold_lines(GOLD_TEST_A)[:25]}, key=gold.questions.index)
    for key, result in results.items():
        units, rows = CqaFamily().unit_rows(key, gold, stored(result))
        assert units == covered, key
        assert rows.value() == pytest.approx(result.raw, abs=1e-12), key


def test_cqa_runs_scored_before_the_counts_were_kept_are_not_resampled() -> None:
    gold = parse_gold(GOLD_TEST_A.read_bytes())
    for key in ("AvgRec", "P", "R", "F1", "Acc"):
        with pytest.raises(NotResampled, match="re-score"):
            CqaFamily().unit_rows(key, gold, StoredScore())
