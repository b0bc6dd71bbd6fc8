"""AP, R-Prec and RR with trec_eval 9.0.8 semantics: hand-computed examples and tie rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from leaderboard.scoring import ranking
from leaderboard.scoring.ranking import float32_order_key, match_index, rank_order
from leaderboard.scoring.trec_measures import evaluate_trec, parse_trec_measure

MEASURES = [parse_trec_measure(m) for m in ("MAP", "R-Prec", "MRR", "num_rel", "num_ret")]

A, B, C, D, E = (ch * 40 for ch in "abcde")
X, Y, Z = (ch * 40 for ch in "xyz")


def score(
    run: list[tuple[int, str, float]],
    qrels: list[tuple[int, str, int]],
    n_queries: int,
    threshold: int = 1,
) -> dict[str, Any]:
    """Evaluate lists of (query, id, score) and (query, id, grade): means with and without -c."""
    arrays = (
        np.array([q for q, _, _ in run], dtype=np.int32),
        np.array([d.encode() for _, d, _ in run], dtype="S40"),
        np.array([s for _, _, s in run], dtype=np.float64),
        np.array([q for q, _, _ in qrels], dtype=np.int32),
        np.array([d.encode() for _, d, _ in qrels], dtype="S40"),
        np.array([g for _, _, g in qrels], dtype=np.int32),
    )
    zero = evaluate_trec(*arrays, n_queries, threshold, MEASURES, missing="zero")
    skip = evaluate_trec(*arrays, n_queries, threshold, MEASURES, missing="skip")
    per = zero.per_query
    means = ("MAP", "R-Prec", "MRR")
    return {
        **{m: zero.means[m] for m in means},
        "per_query": {
            "AP": per["MAP"],
            "R-Prec": per["R-Prec"],
            "RR": per["MRR"],
            "relevant": per["num_rel"].astype(int),
            "retrieved": per["num_ret"].astype(int),
        },
        "n_queries": n_queries,
        "n_present": int(skip.evaluated.sum()),
        "present_means": {m: skip.means[m] for m in means},
    }


# Query 0: relevant a, b, c; ranked a x b y z (c not retrieved).
# Query 1: relevant a, b; ranked x y a.   Query 2: relevant a; absent from the run.
HAND_RUN = [
    (0, A, 5.0), (0, X, 4.0), (0, B, 3.0), (0, Y, 2.0), (0, Z, 1.0),
    (1, X, 9.0), (1, Y, 8.0), (1, A, 7.0),
]  # fmt: skip
HAND_QRELS = [(0, A, 1), (0, B, 1), (0, C, 1), (1, A, 1), (1, B, 1), (2, A, 1)]


def test_hand_example_per_query() -> None:
    result = score(HAND_RUN, HAND_QRELS, 3)
    per = result["per_query"]
    # AP_0 = (1/1 + 2/3) / 3; AP_1 = (1/3) / 2.
    assert per["AP"].tolist() == pytest.approx([5 / 9, 1 / 6, 0.0])
    # R-Prec_0: 2 relevant in the top 3; R-Prec_1: none in the top 2.
    assert per["R-Prec"].tolist() == pytest.approx([2 / 3, 0.0, 0.0])
    assert per["RR"].tolist() == pytest.approx([1.0, 1 / 3, 0.0])
    assert per["relevant"].tolist() == [3, 2, 1]
    assert per["retrieved"].tolist() == [5, 3, 0]


def test_hand_example_means_count_missing_queries() -> None:
    result = score(HAND_RUN, HAND_QRELS, 3)
    assert result["MAP"] == pytest.approx(13 / 54)
    assert result["R-Prec"] == pytest.approx(2 / 9)
    assert result["MRR"] == pytest.approx(4 / 9)
    assert result["n_queries"] == 3
    # trec_eval's default (no -c) averages over the two queries present in the run.
    assert result["n_present"] == 2
    assert result["present_means"]["MAP"] == pytest.approx(13 / 36)
    assert result["present_means"]["MRR"] == pytest.approx(2 / 3)


def test_rprec_with_fewer_lines_than_relevant() -> None:
    # R = 3 but only 2 lines: h(min(R, n)) = h(2) = 1 -> 1/3.
    result = score([(0, X, 2.0), (0, A, 1.0)], [(0, A, 1), (0, B, 1), (0, C, 1)], 1)
    assert result["per_query"]["R-Prec"].tolist() == pytest.approx([1 / 3])
    assert result["per_query"]["AP"].tolist() == pytest.approx([(1 / 2) / 3])


def test_three_equal_scores_ranked_by_descending_id() -> None:
    run = [(0, A, 1.0), (0, B, 1.0), (0, C, 1.0)]
    order = rank_order(np.zeros(3, dtype=np.int32), np.array([A, B, C], dtype="S40"), np.ones(3))
    assert order.tolist() == [2, 1, 0]  # C, B, A
    assert score(run, [(0, A, 1)], 1)["MRR"] == pytest.approx(1 / 3)
    assert score(run, [(0, C, 1)], 1)["MRR"] == 1.0
    assert score(run, [(0, B, 1)], 1)["MRR"] == 0.5


def test_scores_equal_in_single_precision_tie() -> None:
    # Spec 9.2: 0.5000000002 (a..., not relevant) and 0.5000000001 (b..., relevant) are equal
    # as float32, so b ranks first by descending id: RR = 1 (doubles would give 0.5).
    run = [(0, A, 0.5000000002), (0, B, 0.5000000001)]
    result = score(run, [(0, B, 1)], 1)
    assert result["MRR"] == 1.0
    assert result["MAP"] == 1.0


def test_line_order_and_score_order_independent_of_input_order() -> None:
    shuffled = [HAND_RUN[i] for i in (7, 2, 0, 5, 4, 1, 6, 3)]
    assert score(shuffled, HAND_QRELS, 3)["MAP"] == pytest.approx(13 / 54)


def test_negative_zero_ties_with_zero() -> None:
    # C compares -0.0 == 0.0, so the id decides: B before A.
    run = [(0, A, 0.0), (0, B, -0.0)]
    assert score(run, [(0, B, 1)], 1)["MRR"] == 1.0
    keys = float32_order_key(np.array([-0.0, 0.0, -1.0, 1.0, -np.inf, np.inf]))
    assert keys[0] == keys[1]
    assert keys[4] < keys[2] < keys[0] < keys[3] < keys[5]


def test_infinite_scores_order() -> None:
    run = [(0, A, -np.inf), (0, B, np.inf), (0, C, 3.0e38)]
    assert score(run, [(0, A, 1)], 1)["MRR"] == pytest.approx(1 / 3)
    assert score(run, [(0, B, 1)], 1)["MRR"] == 1.0


GRADED = [(0, A, 3), (0, B, 2), (0, C, 1), (0, D, 0), (0, E, -1)]
GRADED_RUN = [(0, E, 5.0), (0, D, 4.0), (0, C, 3.0), (0, B, 2.0), (0, A, 1.0)]


@pytest.mark.parametrize(
    ("threshold", "ap", "rprec", "rr"),
    [
        # relevant: a, b (ranks 5, 4) -> AP = (1/4 + 2/5)/2, R-Prec top 2 = 0, RR = 1/4
        (2, (1 / 4 + 2 / 5) / 2, 0.0, 1 / 4),
        # relevant: a, b, c (ranks 5, 4, 3) -> AP = (1/3 + 2/4 + 3/5)/3, top 3 holds c
        (1, (1 / 3 + 2 / 4 + 3 / 5) / 3, 1 / 3, 1 / 3),
        # lenient: a, b, c, d (ranks 5..2) -> AP = (1/2 + 2/3 + 3/4 + 4/5)/4, top 4 holds 3
        (0, (1 / 2 + 2 / 3 + 3 / 4 + 4 / 5) / 4, 3 / 4, 1 / 2),
    ],
)
def test_graded_thresholds(threshold: int, ap: float, rprec: float, rr: float) -> None:
    result = score(GRADED_RUN, GRADED, 1, threshold)
    assert result["MAP"] == pytest.approx(ap)
    assert result["R-Prec"] == pytest.approx(rprec)
    assert result["MRR"] == pytest.approx(rr)


def test_queries_without_relevant_score_zero_and_count() -> None:
    # Query 1 has only grades 0 and -1 (nothing >= 1); query 2 only negative grades.
    qrels = [(0, A, 1), (1, A, 0), (1, B, -1), (2, A, -1), (2, B, -2)]
    run = [(0, A, 1.0), (1, A, 2.0), (1, B, 1.0), (2, A, 2.0), (2, B, 1.0)]
    result = score(run, qrels, 3)
    assert result["per_query"]["AP"].tolist() == [1.0, 0.0, 0.0]
    assert result["per_query"]["RR"].tolist() == [1.0, 0.0, 0.0]
    assert result["per_query"]["relevant"].tolist() == [1, 0, 0]
    assert result["MAP"] == pytest.approx(1 / 3)
    assert result["MRR"] == pytest.approx(1 / 3)
    # At the lenient threshold 0 the grade-0 judgment of query 1 becomes relevant.
    assert score(run, qrels, 3, 0)["per_query"]["AP"].tolist() == [1.0, 1.0, 0.0]


def test_run_only_queries_and_unjudged_lines_ignored() -> None:
    run = [(0, X, 3.0), (0, A, 2.0), (-1, A, 9.0), (-1, B, 8.0)]
    result = score(run, [(0, A, 1)], 1)
    assert result["MAP"] == 0.5
    assert result["per_query"]["retrieved"].tolist() == [2]


def test_relevant_count_is_taken_from_qrels_not_run() -> None:
    # Ten relevant paragraphs, one retrieved at rank 1: AP = 1/10, R-Prec = 1/10, RR = 1.
    qrels = [(0, f"{i:040x}", 1) for i in range(10)]
    result = score([(0, f"{0:040x}", 1.0)], qrels, 1)
    assert (result["MAP"], result["R-Prec"], result["MRR"]) == pytest.approx((0.1, 0.1, 1.0))


def test_empty_inputs() -> None:
    result = score([], [(0, A, 1)], 1)
    assert (result["MAP"], result["R-Prec"], result["MRR"]) == (0.0, 0.0, 0.0)
    assert result["n_present"] == 0
    assert score([], [], 0)["MAP"] == 0.0


def test_match_index_across_id_widths() -> None:
    found = match_index(
        np.array([0, 0, 1], dtype=np.int32),
        np.array([b"abc", b"ab", b"abc"], dtype="S3"),
        np.array([0, 1], dtype=np.int32),
        np.array([b"abc", b"xyzxyzxyz"], dtype="S9"),
    )
    assert found.tolist() == [0, -1, -1]


def test_ids_compared_bytewise_like_strcmp() -> None:
    # strcmp: "ab" < "abc" < "b"; descending gives b, abc, ab.
    order = rank_order(
        np.zeros(3, dtype=np.int32), np.array([b"ab", b"b", b"abc"], dtype="S3"), np.ones(3)
    )
    assert order.tolist() == [1, 2, 0]


def test_hash_collisions_do_not_change_relevance(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every pair hashes alike: matching must fall back to comparing the pairs themselves.
    def constant_hash(query: Any, docids: Any, width: int | None = None) -> Any:
        return np.zeros(len(query), dtype=np.uint64)

    monkeypatch.setattr(ranking, "pair_hash", constant_hash)
    result = score(HAND_RUN, HAND_QRELS, 3)
    assert result["MAP"] == pytest.approx(13 / 54)
    assert result["MRR"] == pytest.approx(4 / 9)
