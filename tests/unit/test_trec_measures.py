"""trec_measures on tiny cases whose expected values are worked out by hand from the formulas."""

from __future__ import annotations

import math
import re
from typing import Literal

import numpy as np
import pytest

from leaderboard.scoring.ranking import match_index
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.scoring.trec_measures import (
    TREC_REGISTRY,
    TrecEvaluation,
    TrecMeasureKey,
    evaluate_trec,
    parse_trec_measure,
)

Run = dict[int, list[tuple[str, float]]]
Qrels = dict[int, dict[str, int]]

ALL = [
    "MAP",
    "MAP@2",
    "GMAP",
    "R-Prec",
    "MRR",
    "MRR@1",
    "MRR@3",
    "MRR@4",
    "P@1",
    "P@3",
    "P@5",
    "P@10",
    "R@1",
    "R@5",
    "nDCG",
    "nDCG@3",
    "bpref",
    "Success@1",
    "Success@3",
    "Success@4",
    *(f"iPrec@{i / 10:.2f}" for i in range(11)),
    "num_ret",
    "num_rel",
    "num_rel_ret",
]


def score(
    run: Run,
    qrels: Qrels,
    n_queries: int,
    threshold: int = 1,
    names: list[str] = ALL,
    missing: Literal["zero", "skip"] = "zero",
) -> TrecEvaluation:
    """Score a run given as {query: [(id, score), ...]} against {query: {id: grade}}."""
    lines = [(q, d, s) for q, docs in run.items() for d, s in docs]
    judged = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    return evaluate_trec(
        np.array([q for q, _, _ in lines], dtype=np.int32),
        np.array([d.encode() for _, d, _ in lines], dtype="S8"),
        np.array([s for _, _, s in lines], dtype=np.float64),
        np.array([q for q, _, _ in judged], dtype=np.int32),
        np.array([d.encode() for _, d, _ in judged], dtype="S8"),
        np.array([g for _, _, g in judged], dtype=np.int32),
        n_queries,
        threshold,
        [parse_trec_measure(n) for n in names],
        missing=missing,
    )


def values(result: TrecEvaluation, query: int) -> dict[str, float]:
    """Return one query's values by key."""
    return {key: float(v[query]) for key, v in result.per_query.items()}


# Query 0, by rank: a (grade 1), x (unjudged), b (grade 0), c (grade 1), y (unjudged); d (grade 1)
# is not retrieved. R = 3, N = 1, relevant at ranks 1 and 4.
RUN_0 = [("a", 5.0), ("x", 4.0), ("b", 3.0), ("c", 2.0), ("y", 1.0)]
QRELS_0 = {"a": 1, "b": 0, "c": 1, "d": 1}


def test_binary_query_every_measure() -> None:
    got = values(score({0: RUN_0}, {0: QRELS_0}, 1), 0)
    expected = {
        "MAP": (1 / 1 + 2 / 4) / 3,
        "MAP@2": (1 / 1) / 3,
        "GMAP": 0.5,  # per query: the average precision
        "R-Prec": 1 / 3,  # a, x, b in the top R = 3
        "MRR": 1.0,
        "MRR@1": 1.0,
        "MRR@3": 1.0,
        "MRR@4": 1.0,
        "P@1": 1.0,
        "P@3": 1 / 3,
        "P@5": 2 / 5,
        "P@10": 2 / 10,  # divided by k even beyond the 5 lines
        "R@1": 1 / 3,
        "R@5": 2 / 3,
        # Gains 1 at ranks 1 and 4; the ideal ranking has three gains of 1.
        "nDCG": (1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4)),
        "nDCG@3": 1 / (1 + 1 / math.log2(3) + 1 / math.log2(4)),
        # a: no judged non-relevant above -> 1; c: b above -> 1 - min(1, 3) / min(1, 3) = 0.
        "bpref": (1 + 0) / 3,
        "Success@1": 1.0,
        "Success@3": 1.0,
        "Success@4": 1.0,
        # Precision 1 at h = 1, 1/2 at h = 2; level r needs floor(3r + 0.9) relevant lines:
        # 1 for r <= 0.3, 2 for 0.4 <= r <= 0.7 (2.1 + 0.9 falls just short of 3), 3 above.
        "iPrec@0.00": 1.0,
        "iPrec@0.10": 1.0,
        "iPrec@0.20": 1.0,
        "iPrec@0.30": 1.0,
        "iPrec@0.40": 0.5,
        "iPrec@0.50": 0.5,
        "iPrec@0.60": 0.5,
        "iPrec@0.70": 0.5,
        "iPrec@0.80": 0.0,
        "iPrec@0.90": 0.0,
        "iPrec@1.00": 0.0,
        "num_ret": 5.0,
        "num_rel": 3.0,
        "num_rel_ret": 2.0,
    }
    assert got == pytest.approx(expected, abs=1e-12)


def test_first_relevant_below_the_top() -> None:
    # By rank: e (grade 0), z (unjudged), f (grade 2), g (grade 1). R = 2, N = 1.
    run = {0: [("e", 4.0), ("z", 3.0), ("f", 2.0), ("g", 1.0)]}
    got = values(score(run, {0: {"e": 0, "f": 2, "g": 1}}, 1), 0)
    assert got["MAP"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert got["MRR"] == pytest.approx(1 / 3)
    assert (got["MRR@1"], got["MRR@3"], got["MRR@4"]) == (0.0, pytest.approx(1 / 3), 1 / 3)
    assert (got["Success@1"], got["Success@3"]) == (0.0, 1.0)
    assert got["R-Prec"] == 0.0  # nothing relevant in the top 2
    assert got["P@3"] == pytest.approx(1 / 3)
    # f and g each have e above: 1 - min(1, 2) / min(1, 2) = 0.
    assert got["bpref"] == 0.0
    ideal = 2 + 1 / math.log2(3)
    assert got["nDCG"] == pytest.approx((2 / math.log2(4) + 1 / math.log2(5)) / ideal)
    assert got["nDCG@3"] == pytest.approx((2 / math.log2(4)) / ideal)
    # h = 1 at rank 3, h = 2 at rank 4: the maximum over h >= 1 is 1/2 (rank 4).
    assert got["iPrec@0.00"] == pytest.approx(0.5)


def test_threshold_makes_binary_measures_stricter_but_not_ndcg() -> None:
    # By rank: b (grade 1), a (grade 3); c (grade 2) is not retrieved.
    run = {0: [("b", 2.0), ("a", 1.0)]}
    qrels = {0: {"a": 3, "b": 1, "c": 2}}
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    dcg = 1 + 3 / math.log2(3)
    low = values(score(run, qrels, 1, threshold=1), 0)
    high = values(score(run, qrels, 1, threshold=2), 0)
    assert low["MAP"] == pytest.approx((1 / 1 + 2 / 2) / 3)
    assert high["MAP"] == pytest.approx((1 / 2) / 2)  # relevant: a and c
    assert (low["num_rel"], high["num_rel"]) == (3.0, 2.0)
    assert low["bpref"] == pytest.approx(2 / 3)  # no judged non-relevant at threshold 1
    assert high["bpref"] == 0.0  # b is judged non-relevant above a; N = 1
    assert low["nDCG"] == high["nDCG"] == pytest.approx(dcg / ideal)


def test_negative_grades_are_unjudged_and_gain_nothing() -> None:
    # By rank: n (grade -1), r (grade 1), z (grade 0).
    run = {0: [("n", 3.0), ("r", 2.0), ("z", 1.0)]}
    got = values(score(run, {0: {"n": -1, "r": 1, "z": 0}}, 1), 0)
    assert got["bpref"] == 1.0  # n does not count as judged non-relevant
    assert got["nDCG"] == pytest.approx(1 / math.log2(3))  # n's gain is 0, not -1
    assert got["MAP"] == 0.5
    assert got["num_rel"] == 1.0


def test_query_judged_only_negatively_scores_zero() -> None:
    run = {0: [("n", 2.0), ("m", 1.0)]}
    got = values(score(run, {0: {"n": -1, "m": -2}}, 1), 0)
    assert got["num_ret"] == 2.0
    assert all(v == 0.0 for k, v in got.items() if k != "num_ret")


def test_query_with_nothing_relevant_scores_zero() -> None:
    run = {0: [("a", 2.0), ("b", 1.0)]}
    got = values(score(run, {0: {"a": 0, "b": 0}}, 1), 0)
    assert got["num_ret"] == 2.0
    assert all(v == 0.0 for k, v in got.items() if k != "num_ret")


def test_ties_are_broken_by_docid_descending_and_float32() -> None:
    # b > a bytewise, so b ranks first and the relevant a is second.
    assert values(score({0: [("a", 1.0), ("b", 1.0)]}, {0: {"a": 1}}, 1), 0)["MRR"] == 0.5
    # Equal as float32: still a tie, broken by id.
    run = {0: [("a", 0.5000000002), ("b", 0.5000000001)]}
    assert values(score(run, {0: {"a": 1}}, 1), 0)["MRR"] == 0.5
    # "ab" > "a": a prefix sorts below the longer id.
    run = {0: [("a", 1.0), ("ab", 1.0)]}
    assert values(score(run, {0: {"a": 1}}, 1), 0)["MRR"] == 0.5


def test_missing_topics_zero_versus_skip() -> None:
    # Query 0 as above (AP 1/2); query 1: relevant at rank 2 (AP 1/2); query 2 has no lines
    # and two relevant judgments.
    run = {0: RUN_0, 1: [("z", 2.0), ("r", 1.0)], -1: [("a", 9.0)]}
    qrels = {0: QRELS_0, 1: {"r": 1}, 2: {"p": 1, "q": 2}}
    names = ["MAP", "GMAP", "MRR", "num_ret", "num_rel", "num_rel_ret"]
    zero = score(run, qrels, 3, names=names)
    skip = score(run, qrels, 3, names=names, missing="skip")
    assert zero.evaluated.tolist() == [True, True, True]
    assert skip.evaluated.tolist() == [True, True, False]
    assert zero.per_query["num_rel"].tolist() == skip.per_query["num_rel"].tolist() == [3, 1, 2]
    assert zero.per_query["MAP"].tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert zero.means == pytest.approx(
        {
            "MAP": (0.5 + 0.5 + 0) / 3,
            # The query without lines is floored at 0.00001 before the logs are averaged.
            "GMAP": math.exp((math.log(0.5) + math.log(0.5) + math.log(0.00001)) / 3),
            "MRR": (1 + 0.5 + 0) / 3,
            "num_ret": 7,  # the line of a query outside the qrels (-1) is ignored
            "num_rel": 6,
            "num_rel_ret": 3,
        }
    )
    assert skip.means == pytest.approx(
        {
            "MAP": 0.5,
            "GMAP": 0.5,
            "MRR": 0.75,
            "num_ret": 7,
            "num_rel": 4,
            "num_rel_ret": 3,
        }
    )


def test_gmap_floors_a_zero_average_precision() -> None:
    run = {0: [("a", 1.0)], 1: [("x", 1.0)]}
    got = score(run, {0: {"a": 1}, 1: {"b": 1}}, 2, names=["GMAP"])
    assert got.per_query["GMAP"].tolist() == [1.0, 0.0]
    assert got.means["GMAP"] == pytest.approx(math.exp((0 + math.log(0.00001)) / 2))


def test_empty_inputs() -> None:
    got = score({}, {0: {"a": 1}}, 1, names=["MAP", "GMAP", "num_rel"], missing="skip")
    assert got.evaluated.tolist() == [False]
    assert got.means == {"MAP": 0.0, "GMAP": 0.0, "num_rel": 0.0}
    assert score({}, {}, 0, names=["MAP", "nDCG"]).means == {"MAP": 0.0, "nDCG": 0.0}


def test_a_measure_named_twice_is_computed_once() -> None:
    got = score({0: RUN_0}, {0: QRELS_0}, 1, names=["map", "MAP", "ndcg_cut_3", "nDCG@3"])
    assert list(got.per_query) == ["MAP", "nDCG@3"]


def test_match_index_finds_the_judgment_row() -> None:
    table_query = np.array([0, 0, 1, 1, 1], dtype=np.int32)
    table_ids = np.array([b"a", b"b", b"a", b"c", b"c"], dtype="S1")  # (1, c) twice
    line_query = np.array([1, 0, 0, 1, 2, 1], dtype=np.int32)
    line_ids = np.array([b"a", b"b", b"c", b"c", b"a", b"abc"], dtype="S3")
    rows = match_index(line_query, line_ids, table_query, table_ids).tolist()
    assert rows[:3] == [2, 1, -1]
    assert rows[3] in (3, 4)
    assert rows[4:] == [-1, -1]
    assert match_index(line_query, line_ids, table_query[:0], table_ids[:0]).tolist() == [-1] * 6


# -- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("MAP", TrecMeasureKey("MAP", "map")),
        ("map", TrecMeasureKey("MAP", "map")),
        ("GMAP", TrecMeasureKey("GMAP", "gm_map")),
        ("gm_map", TrecMeasureKey("GMAP", "gm_map")),
        ("Rprec", TrecMeasureKey("R-Prec", "Rprec")),
        ("recip_rank", TrecMeasureKey("MRR", "recip_rank")),
        ("ndcg", TrecMeasureKey("nDCG", "ndcg")),
        ("bpref", TrecMeasureKey("bpref", "bpref")),
        ("num_rel_ret", TrecMeasureKey("num_rel_ret", "num_rel_ret")),
        ("MAP@7", TrecMeasureKey("MAP@7", "map_cut", k=7)),
        ("map_cut_7", TrecMeasureKey("MAP@7", "map_cut", k=7)),
        ("MRR@10", TrecMeasureKey("MRR@10", "mrr_cut", k=10)),
        ("P@5", TrecMeasureKey("P@5", "P", k=5)),
        ("P_5", TrecMeasureKey("P@5", "P", k=5)),
        ("R@100", TrecMeasureKey("R@100", "recall", k=100)),
        ("recall_100", TrecMeasureKey("R@100", "recall", k=100)),
        ("nDCG@10", TrecMeasureKey("nDCG@10", "ndcg_cut", k=10)),
        ("ndcg_cut_10", TrecMeasureKey("nDCG@10", "ndcg_cut", k=10)),
        ("Success@1", TrecMeasureKey("Success@1", "success", k=1)),
        ("success_10", TrecMeasureKey("Success@10", "success", k=10)),
        ("iPrec@0.10", TrecMeasureKey("iPrec@0.10", "iprec_at_recall", r=0.1)),
        ("iPrec@0.1", TrecMeasureKey("iPrec@0.10", "iprec_at_recall", r=0.1)),
        ("iprec_at_recall_0.10", TrecMeasureKey("iPrec@0.10", "iprec_at_recall", r=0.1)),
        ("iPrec@0", TrecMeasureKey("iPrec@0.00", "iprec_at_recall", r=0.0)),
        ("iPrec@1", TrecMeasureKey("iPrec@1.00", "iprec_at_recall", r=1.0)),
        ("iPrec@1.0", TrecMeasureKey("iPrec@1.00", "iprec_at_recall", r=1.0)),
    ],
)
def test_keys_and_trec_eval_names(name: str, expected: TrecMeasureKey) -> None:
    assert parse_trec_measure(name) == expected
    assert TREC_REGISTRY.get(name).key == expected.key


def test_trec_eval_names_of_keys() -> None:
    assert parse_trec_measure("nDCG@10").trec_eval_name == "ndcg_cut_10"
    assert parse_trec_measure("iPrec@0.1").trec_eval_name == "iprec_at_recall_0.10"
    assert parse_trec_measure("R-Prec").trec_eval_name == "Rprec"
    assert parse_trec_measure("MRR@10").trec_eval_name is None


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("P@0", "positive integer"),
        ("P@x", "positive integer"),
        ("P@", "positive integer"),
        ("P@-1", "positive integer"),
        ("P@1.5", "positive integer"),
        ("P@010", "positive integer"),
        ("ndcg_cut_0", "positive integer"),
        ("P@10000000000", "positive integer"),
        ("iPrec@1.1", "in [0, 1]"),
        ("iPrec@x", "in [0, 1]"),
        ("iprec_at_recall_-0.05", "in [0, 1]"),
        ("set_F[-1]", "0 or more"),
        ("set_F[1,2]", "one parameter"),
        ("utility[1,-1,0]", "four coefficients"),
        ("utility_1,x,0,0", "numbers separated by commas"),
        ("R-Prec[mult=0]", "above 0"),
        ("R-Prec[mult=x]", "must be a number"),
        ("11pt_avg[1.5]", "in [0, 1]"),
        ("rndcg", "no such measure"),
        ("foo", "no such measure"),
        ("mrr_cut_10", "no such measure"),
        ("map ", "no such measure"),
        ("P@5\n", "positive integer"),
    ],
)
def test_bad_names_say_what_is_accepted(name: str, hint: str) -> None:
    with pytest.raises(UnknownMeasure, match=re.escape(hint)) as caught:
        parse_trec_measure(name)
    message = str(caught.value)
    assert hint in message
    assert "nDCG@k" in message and "iPrec@r" in message and "ndcg_cut_k" in message
    assert name not in TREC_REGISTRY


def test_registry_entries() -> None:
    assert TREC_REGISTRY.family == "trec"
    assert TREC_REGISTRY.keys[:4] == ("MAP", "GMAP", "R-Prec", "MRR")
    ndcg = TREC_REGISTRY.get("ndcg_cut_10")
    assert (ndcg.key, ndcg.label, ndcg.scale, ndcg.decimals, ndcg.official_decimals) == (
        "nDCG@10",
        "nDCG@10",
        "fraction",
        4,
        4,
    )
    assert not ndcg.lower_is_better
    count = TREC_REGISTRY.get("num_rel")
    assert (count.scale, count.decimals, count.official_decimals) == ("count", 0, 0)
    assert parse_trec_measure("num_ret").is_count
    assert not parse_trec_measure("MAP").is_count
    assert TREC_REGISTRY.get("iPrec@0.1").key == "iPrec@0.10"
    with pytest.raises(UnknownMeasure, match="MAP@k"):
        TREC_REGISTRY.get("foo")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("set_F", "set_F"),
        ("set_F[1]", "set_F"),
        ("set_F[0.5]", "set_F[0.5]"),
        ("set_F_0.5", "set_F[0.5]"),
        ("set_F_0.50", "set_F[0.5]"),
        ("R-Prec[mult=2]", "R-Prec[mult=2]"),
        ("Rprec[mult=2.0]", "R-Prec[mult=2]"),
        ("Rprec_mult_0.20", "R-Prec[mult=0.2]"),
        ("Rprec_mult_0.2", "R-Prec[mult=0.2]"),
        ("utility", "utility"),
        ("utility[1,-1,0,0]", "utility"),
        ("utility_1,-1,0,0", "utility"),
        ("utility[2, -1, 0.5, 0]", "utility[2,-1,0.5,0]"),
        ("11pt_avg", "11pt_avg"),
        ("11pt_avg[0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0]", "11pt_avg"),
        ("11pt_avg[0.0,0.5,1]", "11pt_avg[0.00,0.50,1.00]"),
        ("iPrec@0.15", "iPrec@0.15"),
        ("iprec_at_recall_0.333", "iPrec@0.333"),
        ("relative_P_5", "relative_P@5"),
        ("Hits@10", "Hits@10"),
        ("DCG@10", "DCG@10"),
        ("Judged@10", "Judged@10"),
        ("ndcg_rel", "ndcg_rel"),
        ("nDCG@10[]", None),
        ("MAP[judged_only=true]", "MAP[judged_only=true]"),
        ("map[judged_only=false]", "MAP[judged_only=false]"),
        ("nDCG@10[dcg=exp-log2]", "nDCG@10[dcg=exp-log2]"),
        ("ndcg_cut_10[judged_only=true,dcg=exp-log2]", "nDCG@10[dcg=exp-log2,judged_only=true]"),
        ("set_F[0.5,judged_only=true]", "set_F[0.5,judged_only=true]"),
        ("R-Prec[judged_only=true]", "R-Prec[judged_only=true]"),
        ("R-Prec[mult=2,judged_only=true]", "R-Prec[mult=2,judged_only=true]"),
    ],
)
def test_parameterised_keys_and_trec_eval_aliases(name: str, key: str | None) -> None:
    if key is None:
        with pytest.raises(UnknownMeasure, match="parameters inside the brackets"):
            parse_trec_measure(name)
        return
    assert parse_trec_measure(name).key == key
    assert TREC_REGISTRY.get(name).key == key


def test_set_level_options_apply_where_brackets_did_not_set_them() -> None:
    ndcg = parse_trec_measure("nDCG@10").with_defaults({1: 2.0}, "exp-log2", True)
    assert (ndcg.key, ndcg.gains, ndcg.dcg, ndcg.judged_only) == (
        "nDCG@10",
        ((1, 2.0),),
        "exp-log2",
        True,
    )
    own = parse_trec_measure("nDCG[dcg=log2,judged_only=false]").with_defaults(
        None, "exp-log2", True
    )
    assert (own.dcg, own.judged_only) == ("log2", False)
    assert parse_trec_measure("MAP").with_defaults({1: 2.0}, "exp-log2").gains is None
    assert parse_trec_measure("MAP").with_defaults(judged_only=True).judged_only


def test_parameters_reach_the_measure() -> None:
    assert parse_trec_measure("utility_2,-1,0,0").params == (2.0, -1.0, 0.0, 0.0)
    assert parse_trec_measure("Rprec_mult_0.20").params == (0.2,)
    assert parse_trec_measure("11pt_avg[0,1]").params == (0.0, 1.0)
    assert parse_trec_measure("Rprec_mult_0.20").trec_eval_name == "Rprec_mult_0.20"
    assert parse_trec_measure("Hits@10").trec_eval_name is None


@pytest.mark.parametrize(
    ("name", "takes"),
    [
        ("MAP[dcg=log2]", "does not take dcg; it takes: judged_only"),
        ("nDCG@10[depth=2]", "does not take depth; it takes: judged_only, dcg"),
        ("nDCG@10[gains=2]", "set it at the set, subtask or top level"),
        ("set_F[beta=2]", "does not take beta; it takes: x (one number, default 1), judged_only"),
        (
            "set_F[0.5,dcg=log2]",
            "does not take dcg; it takes: x (one number, default 1), judged_only",
        ),
        ("R-Prec[2]", "it takes: mult, judged_only"),
        ("R-Prec[mult=2,depth=3]", "does not take depth; it takes: mult, judged_only"),
        ("utility[1,-1,0,0,x=1]", "does not take x; it takes: a, b, c, d"),
        ("MAP[1]", "takes no parameters"),
        ("nDCG[dcg=exp]", "dcg must be one of log2, exp-log2"),
        ("MAP[judged_only=3]", "judged_only must be true or false"),
    ],
)
def test_options_a_measure_does_not_take_are_refused(name: str, takes: str) -> None:
    with pytest.raises(UnknownMeasure, match=re.escape(takes)) as caught:
        parse_trec_measure(name)
    assert takes in str(caught.value)
    assert name not in TREC_REGISTRY


def test_registry_entries_of_further_measures() -> None:
    for key in ("num_q", "num_nonrel_judged_ret"):
        assert TREC_REGISTRY.get(key).scale == "count", key
        assert TREC_REGISTRY.get(key).decimals == 0, key
    for key in ("infAP", "set_F[0.5]", "R-Prec[mult=2]", "Judged@10", "iPrec@0.15"):
        entry = TREC_REGISTRY.get(key)
        assert (entry.scale, entry.decimals, entry.lower_is_better) == ("fraction", 4, False)
        assert entry.label == key
    for key in ("utility[2,-1,0,0]", "DCG@10", "Hits@10"):
        entry = TREC_REGISTRY.get(key)
        assert (entry.scale, entry.decimals, entry.lower_is_better) == ("score", 4, False)
    assert parse_trec_measure("gm_bpref").is_geometric
    assert parse_trec_measure("num_q").is_count
