"""CQA per-question values: each question's AP and reciprocal rank, whose means are MAP and MRR.

The rule, as the 2016 scorer averages them: every question of the scored gold rows counts,
also one without any relevant candidate and one whose relevant candidates all rank below the
top 10 (both count 0). MAP = Σ_q AP_q / |Q|; MRR = 100 · Σ_q RR_q / |Q|, so the per-question
value of MRR is 100 · RR_q, on MRR's stored scale. AvgRec (a ratio of sums over questions),
P, R, F1 and Acc are not means over questions and have no per-question values.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from leaderboard.formats.cqa import CqaRun, parse_gold
from leaderboard.tasks.families.cqa import CqaFamily
from leaderboard.tasks.families.cqa.scoring import measure_results
from tests.runs import GOLD_TEST_A

T, F = "true", "false"
#: (question, labels in gold order, run scores); the comment gives the labels in ranked order.
QUESTIONS = [
    ("Q1", [T, F, T], [0.1, 0.9, 0.5]),  # F T T: AP = (1/2 + 2/3) / 2 = 7/12, RR = 1/2
    ("Q2", [F, F], [0.5, 0.6]),  # no relevant candidate: AP = RR = 0
    ("Q3", [F] * 11 + [T], [12.0 - i for i in range(12)]),  # relevant at rank 12: AP = RR = 0
    ("Q4", [F, T, F, T], [0.5, 0.9, 0.3, 0.1]),  # T F F T: AP = (1 + 2/4) / 2 = 3/4, RR = 1
    ("Q5", [T, F, F, F], [0.1, 0.4, 0.3, 0.2]),  # F F F T: AP = 1/4, RR = 1/4
]
AP = {"Q1": 7 / 12, "Q2": 0.0, "Q3": 0.0, "Q4": 0.75, "Q5": 0.25}
RR = {"Q1": 0.5, "Q2": 0.0, "Q3": 0.0, "Q4": 1.0, "Q5": 0.25}


def _gold_and_run() -> tuple[bytes, CqaRun]:
    lines = [
        f"{q}\t{q}_C{i}\t{i}\t0\t{label}\n"
        for q, labels, _ in QUESTIONS
        for i, label in enumerate(labels, 1)
    ]
    scores = [s for _, _, scores in QUESTIONS for s in scores]
    run = CqaRun(len(scores), np.array(scores), np.zeros(len(scores), dtype=bool))
    return "".join(lines).encode(), run


def test_per_question_values_are_the_hand_computed_aps_and_reciprocal_ranks() -> None:
    data, run = _gold_and_run()
    results = CqaFamily().score(run, parse_gold(data))
    assert results["MAP"].per_query == pytest.approx(AP, abs=1e-15)
    assert results["MRR"].per_query == pytest.approx({q: 100 * r for q, r in RR.items()})
    assert list(results["MAP"].per_query or {}) == ["Q1", "Q2", "Q3", "Q4", "Q5"]
    for m in ("AvgRec", "P", "R", "F1", "Acc"):
        assert results[m].per_query is None


def test_the_means_of_the_per_question_values_are_map_and_mrr() -> None:
    data, run = _gold_and_run()
    results = CqaFamily().score(run, parse_gold(data))
    ap = results["MAP"].per_query or {}
    rr = results["MRR"].per_query or {}
    assert math.fsum(ap.values()) / len(ap) == results["MAP"].raw
    assert results["MAP"].raw == pytest.approx((7 / 12 + 0.75 + 0.25) / 5, abs=1e-15)
    assert math.fsum(rr.values()) / len(rr) == results["MRR"].raw == 35.0


def test_a_truncated_run_has_values_for_the_questions_it_is_scored_on() -> None:
    # A legacy run of the first 6 rows covers Q1, Q2 and the first row of Q3.
    data, run = _gold_and_run()
    short = CqaRun(6, run.scores[:6], run.predicted[:6])
    results = CqaFamily().score(short, parse_gold(data))
    assert results["MAP"].per_query == pytest.approx({"Q1": 7 / 12, "Q2": 0.0, "Q3": 0.0})
    assert results["MRR"].per_query == {"Q1": 50.0, "Q2": 0.0, "Q3": 0.0}


def test_the_means_hold_on_the_official_gold() -> None:
    gold = parse_gold(GOLD_TEST_A.read_bytes())
    rng = random.Random(7)
    scores = np.array([rng.random() for _ in range(len(gold))])
    results = measure_results(gold, CqaRun(len(gold), scores, scores > 0.5))
    ap = results["MAP"].per_query or {}
    rr = results["MRR"].per_query or {}
    assert list(ap) == list(rr) == list(gold.questions)
    assert math.fsum(ap.values()) / len(ap) == results["MAP"].raw
    # 100 · mean(RR) and mean(100 · RR) may differ in the last bit.
    assert math.fsum(rr.values()) / len(rr) == pytest.approx(results["MRR"].raw, rel=1e-15)
