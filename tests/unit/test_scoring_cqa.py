"""CQA ranking measures on tiny cases computed by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.scoring.cqa import CQA_MEASURES, CqaScores, official, score_cqa


def _score(
    starts: list[int], labels: list[bool], scores: list[float], predicted: list[bool] | None = None
) -> CqaScores:
    if predicted is None:
        predicted = [False] * len(labels)
    return score_cqa(
        np.array(starts, dtype=np.int64),
        np.array(labels, dtype=bool),
        np.array(scores, dtype=np.float64),
        np.array(predicted, dtype=bool),
    )


T, F = True, False


def test_measure_names_and_order() -> None:
    assert CQA_MEASURES == ("MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc")
    result = _score([0], [T, F], [1.0, 0.0])
    assert tuple(result.values) == CQA_MEASURES


def test_one_question_all_measures() -> None:
    # Ranked by score: rows 1 (F), 2 (T), 3 (F), 0 (T) -> rel = F T F T.
    # AP = (1/2 + 2/4) / 2 = 0.5; first relevant at rank 2 -> MRR = 50.
    # R = 2: AC1 = 0, 1/2, 1/2, then 2/2 for k = 4..10 -> AvgRec = 8/10.
    # predicted T T F F vs gold T F T F: TP = FP = FN = TN = 1.
    result = _score([0], [T, F, T, F], [0.1, 0.9, 0.5, 0.3], [T, T, F, F])
    assert result.values == {
        "MAP": 0.5,
        "AvgRec": 0.8,
        "MRR": 50.0,
        "P": 0.5,
        "R": 0.5,
        "F1": 0.5,
        "Acc": 0.5,
    }
    assert result.flags == ()


def test_two_questions_fractions() -> None:
    # q1: rel = F T T -> AP = (1/2 + 2/3) / 2 = 7/12, RR = 1/2; q2: rel = T -> AP = 1, RR = 1.
    # MAP = 19/24, MRR = 75. R = (2, 1): AC1(1) = 1/2, AC1(2) = 2/3, AC1(k>=3) = 1.
    # AvgRec = (1/2 + 2/3 + 8) / 10 = 11/12.
    result = _score([0, 3], [F, T, T, T], [3.0, 2.0, 1.0, 0.0])
    assert result.values["MAP"] == pytest.approx(19 / 24, abs=1e-15)
    assert result.values["MRR"] == pytest.approx(75.0, abs=1e-12)
    assert result.values["AvgRec"] == pytest.approx(11 / 12, abs=1e-15)


def test_ties_keep_gold_order() -> None:
    # All equal: ranking is gold order F F T -> AP = 1/3, MRR = 100/3 (reversed would give 1).
    result = _score([0], [F, F, T], [1.0, 1.0, 1.0])
    assert result.values["MAP"] == pytest.approx(1 / 3, abs=1e-15)
    assert result.values["MRR"] == pytest.approx(100 / 3, abs=1e-12)
    # Partial tie: row 1 first (0.9), then rows 0 and 2 tie at 0.5 in gold order -> F F T.
    result = _score([0], [F, F, T], [0.5, 0.9, 0.5])
    assert result.values["MAP"] == pytest.approx(1 / 3, abs=1e-15)


def test_negative_and_zero_scores_are_always_sorted() -> None:
    # The library entry point of 2016 skipped sorting when max score < 0; we always sort.
    # Scores -3, -1, -2: ranking rows 1 (T), 2 (F), 0 (F) -> AP = 1.
    result = _score([0], [F, T, F], [-3.0, -1.0, -2.0])
    assert result.values["MAP"] == 1.0
    assert result.values["MRR"] == 100.0
    # -0.0 and 0.0 are equal scores: gold order decides (row 0 first, which is false).
    result = _score([0], [F, T], [-0.0, 0.0])
    assert result.values["MAP"] == 0.5


def test_question_without_relevant_candidate_counts_in_q() -> None:
    # q1: rel = T F -> AP 1, RR 1; q2 has no true: AP 0, RR 0 -> MAP 0.5, MRR 50.
    # AvgRec: R = (1, 0) -> every AC1(k) = 1/1 -> 1.
    result = _score([0, 2], [T, F, F, F], [1.0, 0.0, 1.0, 0.0])
    assert result.values["MAP"] == 0.5
    assert result.values["MRR"] == 50.0
    assert result.values["AvgRec"] == 1.0
    assert result.flags == ()


def test_top_ten_cut() -> None:
    # 12 candidates ranked in gold order (descending scores); true at ranks 1, 11 and 12.
    # MAP divides by the relevant found in the top 10 (1), not R (3): AP = 1/1 = 1.
    # AvgRec: R = 3: AC1(1) = 1, AC1(2) = 1/2, AC1(3..10) = 1/3 -> (1 + 1/2 + 8/3) / 10 = 5/12.
    labels = [T] + [F] * 9 + [T, T]
    scores = [float(12 - i) for i in range(12)]
    result = _score([0], labels, scores)
    assert result.values["MAP"] == 1.0
    assert result.values["MRR"] == 100.0
    assert result.values["AvgRec"] == pytest.approx(5 / 12, abs=1e-15)


def test_relevant_only_below_top_ten() -> None:
    # 11 candidates, the only true ranks 11th: AP = RR = 0, AvgRec = 0 (defined, R = 1).
    labels = [F] * 10 + [T]
    scores = [float(11 - i) for i in range(11)]
    result = _score([0], labels, scores, [T] * 11)
    assert result.values["MAP"] == 0.0
    assert result.values["MRR"] == 0.0
    assert result.values["AvgRec"] == 0.0
    assert result.flags == ()
    # Classification ignores the cut: P = 1/11, R = 1, Acc = 1/11.
    assert result.values["P"] == pytest.approx(1 / 11, abs=1e-15)
    assert result.values["R"] == 1.0
    assert result.values["Acc"] == pytest.approx(1 / 11, abs=1e-15)


def test_rank_after_reordering_beyond_ten() -> None:
    # 12 candidates; the true one is last in gold order but has the top score -> rank 1.
    labels = [F] * 11 + [T]
    scores = [0.0] * 11 + [5.0]
    result = _score([0], labels, scores)
    assert result.values["MAP"] == 1.0
    assert result.values["MRR"] == 100.0
    assert result.values["AvgRec"] == 1.0


def test_avgrec_zero_denominator_is_flagged() -> None:
    result = _score([0, 2], [F, F, F], [1.0, 0.0, 3.0])
    assert result.values["AvgRec"] == 0.0
    assert result.values["MAP"] == 0.0
    assert result.values["MRR"] == 0.0
    assert result.flags == ("avgrec-undefined",)


def test_official_rounding() -> None:
    # Correct rounding of the binary double, not of the decimal literal:
    assert official(0.61425) == "0.6142"  # the double is 0.614249999...
    assert official(0.12345) == "0.1235"  # the double is 0.123450000...04
    assert official(70.49515) == "70.4951"  # the double is 70.495149999...
    assert official(0.03125) == "0.0312"  # exactly half: round half to even
    assert official(1 / 3) == "0.3333"
    assert official(1.0) == "1.0000"


@pytest.mark.parametrize(
    ("starts", "labels", "scores", "predicted", "refusal"),
    [
        (
            [1],
            [T, F],
            [1.0, 0.0],
            [F, F],
            "question_starts must be a non-empty 1-D array starting at 0",
        ),
        (
            [0, 2, 1],
            [T, F, F],
            [1.0, 0.0, 0.0],
            [F, F, F],
            "question_starts must be strictly ascending",
        ),
        ([0, 2], [T, F], [1.0, 0.0], [F, F], "strictly ascending and below the row count"),
        ([0], [T, F], [1.0], [F, F], "gold_labels, scores and predicted must have the same length"),
        ([0], [T, F], [1.0, float("nan")], [F, F], "scores must not contain NaN"),
        ([0], [], [], [], "cannot score a run with no rows"),
    ],
)
def test_rejects_malformed_input(
    starts: list[int],
    labels: list[bool],
    scores: list[float],
    predicted: list[bool],
    refusal: str,
) -> None:
    with pytest.raises(ValueError, match=re.escape(refusal)):
        _score(starts, labels, scores, predicted)


def _reference_top_relevance(starts: np.ndarray, labels: np.ndarray, scores: np.ndarray):  # type: ignore[no-untyped-def]
    """The ranking written plainly: per question, a stable sort on score descending."""
    rows = labels.size
    ends = np.append(starts[1:], rows)
    matrix = np.zeros((starts.size, 10), dtype=bool)
    for q, (a, b) in enumerate(zip(starts, ends, strict=True)):
        ranked = sorted(range(a, b), key=lambda i: -scores[i])  # sorted() is stable
        for r, i in enumerate(ranked[:10]):
            matrix[q, r] = labels[i]
    return matrix


@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=25),
    skew=st.booleans(),
    data=st.data(),
)
@settings(max_examples=300, deadline=None)
def test_the_ranking_is_a_stable_sort_on_score_descending(sizes, skew, data) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.scoring.cqa import _top_relevance

    if skew:  # one long question among short ones takes the other sorting path
        sizes = [*sizes, 40 * len(sizes) + 50]
    rows = sum(sizes)
    starts = np.cumsum([0, *sizes[:-1]]).astype(np.int64)
    values = st.sampled_from([0.0, -0.0, 0.5, 1.0, -1.0, float("inf"), float("-inf"), 1e-300])
    scores = np.array(data.draw(st.lists(values, min_size=rows, max_size=rows)), dtype=np.float64)
    labels = np.array(data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
    expected = _reference_top_relevance(starts, labels, scores)
    assert (_top_relevance(starts, labels, scores) == expected).all()
