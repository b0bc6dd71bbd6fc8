"""trec_measures agrees with pytrec_eval (trec_eval 9.0.8's own code) per query and in the means.

The collections are generated from seeds: graded and negative judgments, unjudged documents,
tied and float32-equal scores (docid tie-breaks), qrels topics missing from the run, run topics
missing from the qrels, topics with nothing relevant and topics judged only negatively.

pytrec_eval has no ``-c``: it returns the topics that have run lines. The expected means over all
qrels topics are built here from its per-query values plus what trec_eval ``-c`` gives a topic
without lines (0, num_rel = R, gm_map's floor log(0.00001)). Topics judged only negatively are
left out of pytrec_eval's qrels: trec_eval's nDCG then reads gain levels left over from an
earlier topic or evaluator (it hangs or returns garbage); their values are checked by hand (nothing
is judged: 0 but num_ret). pytrec_eval reports gm_map per query
as log(max(AP, 0.00001)); our per-query GMAP is the AP itself. MRR@k has no trec_eval name: it
equals recip_rank when the first relevant document is within k, else 0.

The further measures (infAP, the set measures, utility, G, binG, ndcg_rel, Rndcg...) are checked the same
way through trec_eval's own parameter syntax; Hits@k against trec_eval's P_k, DCG@k by hand,
and Judged@k (which trec_eval lacks) against ir_measures.
"""

from __future__ import annotations

import math
import random
from typing import Literal

import numpy as np
import pytest
import pytrec_eval

# pytrec_eval's Python wrapper rewrites measure parameters (it drops negative coefficients and
# gain maps); its C class takes trec_eval's own `-m measure.params` syntax unchanged.
from pytrec_eval_ext import RelevanceEvaluator as TrecEvalMeasures

from leaderboard.scoring.trec_measures import (
    TrecMeasureKey,
    evaluate_trec,
    parse_trec_measure,
)
from tests.helpers.trec_collections import Collection, as_arrays

CUTOFFS = (1, 3, 5, 7, 10, 20, 100, 1000)
LEVELS = tuple(f"{i / 10:.2f}" for i in range(11))
CUT_KINDS = ("map_cut", "P", "recall", "ndcg_cut", "success")
NAMES = (
    ["map", "gm_map", "Rprec", "recip_rank", "ndcg", "bpref", "num_ret", "num_rel", "num_rel_ret"]
    + [f"{kind}_{k}" for kind in CUT_KINDS for k in CUTOFFS]
    + [f"iprec_at_recall_{r}" for r in LEVELS]
)
PYTREC_MEASURES = {
    "map",
    "gm_map",
    "Rprec",
    "recip_rank",
    "ndcg",
    "bpref",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    *(f"{kind}.{','.join(map(str, CUTOFFS))}" for kind in CUT_KINDS),
}
MEASURES = [parse_trec_measure(n) for n in NAMES]
MRR_CUTS = [parse_trec_measure(f"MRR@{k}") for k in CUTOFFS]
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
FLOOR_LOG = math.log(0.00001)
# Scores that tie, tie only as float32 (0.5000000001 ~ 0.5000000002, 3.0 ~ 3.0000001), or
# differ from a near value (3.00000012), plus -0.0 == 0.0.
TIE_SCORES = (0.0, -0.0, 1.0, 2.5, 0.5000000001, 0.5000000002, 3.0, 3.0000001, 3.00000012)
SEEDS = range(36)
TOLERANCE = 1e-9


def docid(rng: random.Random) -> str:
    """Return a short id; prefixes of each other and mixed case make bytewise order matter."""
    return rng.choice(["d", "D", "doc", "d1", "x"]) + str(rng.randrange(400))


def generate(seed: int) -> Collection:
    """Generate one collection from ``seed``."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    n_topics = rng.randint(3, 9)
    grade_pool = rng.choice([(0, 1), (0, 1, 2, 3), (-2, -1, 0, 1, 2), (0, 0, 0, 1), (1, 2, 4)])
    for t in range(n_topics):
        # trec_eval caches per-query state by query id across evaluators: ids never repeat.
        topic = f"s{seed}t{t}"
        shape = rng.random()
        judged: dict[str, int] = {}
        for _ in range(rng.randint(1, 30)):
            judged[docid(rng)] = rng.choice(grade_pool)
        if shape < 0.1:
            judged = {d: -1 for d in judged}  # judged only negatively
        elif shape < 0.2:
            judged = {d: 0 for d in judged}  # nothing relevant
        qrels[topic] = judged
        if rng.random() < 0.2:
            continue  # a qrels topic without run lines
        depth = rng.choice([0, 3, 10, 25, 60, 150]) if seed % 9 else 1100
        lines = {d: 0.0 for d in rng.sample(sorted(judged), k=rng.randint(0, len(judged)))}
        while len(lines) < depth:
            lines[docid(rng) + "u"] = 0.0  # unjudged
        tie_mode = rng.random()
        for d in lines:
            if tie_mode < 0.4:
                lines[d] = rng.choice(TIE_SCORES)
            elif tie_mode < 0.7:
                lines[d] = round(rng.uniform(-5, 5), 1)
            else:
                lines[d] = rng.uniform(-100, 100)
        if lines:
            run[topic] = lines
    for t in range(rng.randint(0, 2)):
        run[f"s{seed}extra{t}"] = {docid(rng): rng.random() for _ in range(rng.randint(1, 20))}
    return Collection(qrels, run, rng.choice([1, 2]))


def relevant_count(judged: dict[str, int], threshold: int) -> int:
    """Return R: the judgments at or above the threshold."""
    return sum(g >= threshold for g in judged.values())


def negative_only(judged: dict[str, int]) -> bool:
    """Return whether every judgment of a topic has a negative grade."""
    return all(g < 0 for g in judged.values())


def expected_by_hand(
    m: TrecMeasureKey, judged: dict[str, int], lines: int, threshold: int
) -> float:
    """Return the value, in pytrec_eval's terms, of a topic pytrec_eval does not score.

    That is a qrels topic without run lines (trec_eval -c: 0, num_rel = R, gm_map's floor) or
    one judged only negatively (nothing judged: 0, num_ret = its lines, gm_map's floor).
    """
    if m.kind == "num_rel":
        return float(relevant_count(judged, threshold))
    if m.kind == "num_ret":
        return float(lines)
    if m.kind == "gm_map":
        return FLOOR_LOG
    return 0.0


def ours_as_pytrec(m: TrecMeasureKey, value: float) -> float:
    """Return our per-query value in pytrec_eval's terms (gm_map: the log of the floored AP)."""
    if m.kind == "gm_map":
        return math.log(max(value, 0.00001))
    return value


def mean_of(m: TrecMeasureKey, values: list[float]) -> float:
    """Return trec_eval's summary of per-query values as pytrec_eval reports them."""
    if m.is_count:
        return sum(values)
    if not values:
        return 0.0
    if m.kind == "gm_map":
        return math.exp(sum(values) / len(values))
    return sum(values) / len(values)


@pytest.mark.parametrize("seed", SEEDS)
def test_agrees_with_pytrec_eval(seed: int) -> None:
    c = generate(seed)
    topics, run, qrels = as_arrays(c)
    # trec_eval's nDCG reads stale gain levels for a topic judged only negatively (it loops
    # forever or returns garbage), so such topics are left out of its qrels and checked by hand.
    trusted = {t: judged for t, judged in c.qrels.items() if not negative_only(judged)}
    reference = pytrec_eval.RelevanceEvaluator(
        trusted, PYTREC_MEASURES, relevance_level=c.threshold
    ).evaluate(c.run)
    assert set(reference) == {t for t in trusted if t in c.run}
    modes: tuple[Literal["zero", "skip"], ...] = ("zero", "skip")
    for missing in modes:
        result = evaluate_trec(
            *run, *qrels, len(topics), c.threshold, [*MEASURES, *MRR_CUTS], missing=missing
        )
        assert result.evaluated.tolist() == [missing == "zero" or t in c.run for t in topics]
        for m in MEASURES:
            name = m.trec_eval_name
            assert name is not None
            expected = [
                reference[t][name]
                if t in reference
                else expected_by_hand(m, c.qrels[t], len(c.run.get(t, {})), c.threshold)
                for t in topics
            ]
            got = [ours_as_pytrec(m, v) for v in result.per_query[m.key].tolist()]
            assert got == pytest.approx(expected, abs=TOLERANCE, rel=0), (seed, name)
            counted = [
                v for t, v in zip(topics, expected, strict=True) if missing == "zero" or t in c.run
            ]
            assert result.means[m.key] == pytest.approx(
                mean_of(m, counted), abs=TOLERANCE, rel=0
            ), (seed, name, missing)
        for m in MRR_CUTS:
            assert m.k is not None
            for i, t in enumerate(topics):
                rr = reference[t]["recip_rank"] if t in reference else 0.0
                want = rr if rr > 0 and round(1 / rr) <= m.k else 0.0
                assert result.per_query[m.key][i] == pytest.approx(want, abs=TOLERANCE), (seed, t)


def test_collections_cover_the_hard_cases() -> None:
    """The seeds produce every case the agreement test is meant to cover."""
    seen: set[str] = set()
    for seed in SEEDS:
        c = generate(seed)
        seen.add(f"threshold {c.threshold}")
        if set(c.run) - set(c.qrels):
            seen.add("run topic not in qrels")
        if set(c.qrels) - set(c.run):
            seen.add("qrels topic without lines")
        for t, judged in c.qrels.items():
            if any(g < 0 for g in judged.values()):
                seen.add("negative grade")
            if any(g > 1 for g in judged.values()):
                seen.add("graded")
            if not relevant_count(judged, c.threshold) and t in c.run:
                seen.add("nothing relevant")
            gains = [judged.get(d, 0) for d in c.run.get(t, {})]
            if not relevant_count(judged, c.threshold) and any(g > 0 for g in gains):
                seen.add("nDCG gains but nothing relevant")
            if negative_only(judged) and t in c.run:
                seen.add("judged only negatively")
            lines = c.run.get(t, {})
            if any(d not in judged for d in lines):
                seen.add("unjudged")
            if len(lines) > 1000:
                seen.add("over 1000 lines")
            as_float32 = [float(np.float32(s)) for s in lines.values()]
            if len(set(as_float32)) < len(as_float32):
                seen.add("tied scores")
    assert seen == {
        "threshold 1",
        "threshold 2",
        "run topic not in qrels",
        "qrels topic without lines",
        "negative grade",
        "graded",
        "nothing relevant",
        "nDCG gains but nothing relevant",
        "judged only negatively",
        "unjudged",
        "over 1000 lines",
        "tied scores",
    }


#: Our key -> (trec_eval's -m argument, the name trec_eval prints).
FURTHER = {
    "infAP": ("infAP", "infAP"),
    "gm_bpref": ("gm_bpref", "gm_bpref"),
    "set_P": ("set_P", "set_P"),
    "set_recall": ("set_recall", "set_recall"),
    "set_map": ("set_map", "set_map"),
    "set_relative_P": ("set_relative_P", "set_relative_P"),
    "set_F": ("set_F", "set_F"),
    "set_F[0.5]": ("set_F.0.5", "set_F"),
    "set_F_3": ("set_F.3", "set_F"),
    "relative_P@5": ("relative_P.5", "relative_P_5"),
    "relative_P_20": ("relative_P.20", "relative_P_20"),
    "R-Prec[mult=0.2]": ("Rprec_mult.0.2", "Rprec_mult_0.20"),
    "Rprec_mult_0.50": ("Rprec_mult.0.5", "Rprec_mult_0.50"),
    "R-Prec[mult=1.5]": ("Rprec_mult.1.5", "Rprec_mult_1.50"),
    "R-Prec[mult=2]": ("Rprec_mult.2", "Rprec_mult_2.00"),
    "11pt_avg": ("11pt_avg", "11pt_avg"),
    "11pt_avg[0.25,0.5,0.75]": ("11pt_avg.0.25,0.5,0.75", "11pt_avg"),
    "iPrec@0.15": ("iprec_at_recall.0.15", "iprec_at_recall_0.15"),
    "iPrec@0.333": ("iprec_at_recall.0.333", "iprec_at_recall_0.33"),
    "utility": ("utility", "utility"),
    "utility[2,-1,0.5,0.25]": ("utility.2,-1,0.5,0.25", "utility"),
    "binG": ("binG", "binG"),
    "G": ("G", "G"),
    "Rndcg": ("Rndcg", "Rndcg"),
    "ndcg_rel": ("ndcg_rel", "ndcg_rel"),
    "num_nonrel_judged_ret": ("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    "num_q": ("num_q", "num_q"),
}


def further_by_hand(m: TrecMeasureKey, judged: dict[str, int], lines: int, threshold: int) -> float:
    """Return trec_eval's value of a further measure for a topic pytrec_eval does not score.

    Nothing is judged in its lines (no lines, or only negative judgments): every measure is 0
    but num_q (1), gm_bpref (the floor) and utility, whose missed relevant documents and
    non-relevant lines still count.
    """
    r = relevant_count(judged, threshold)
    if m.kind == "num_q":
        return 1.0
    if m.kind == "gm_bpref":
        return FLOOR_LOG
    if m.kind == "utility":
        a, b, c, d = m.params
        return b * lines + c * r + d * (-lines - r)
    return 0.0


def trec_eval_values(c: Collection, spec: str) -> dict[str, dict[str, float]]:
    """Return trec_eval's per-topic values of one -m argument on the collection."""
    trusted = {t: j for t, j in c.qrels.items() if j and not negative_only(j)}
    evaluator = TrecEvalMeasures(
        query_relevance=trusted,
        measures={spec},
        relevance_level=c.threshold,
        judged_docs_only_flag=False,
    )
    return evaluator.evaluate(c.run)


@pytest.mark.parametrize("seed", SEEDS)
def test_further_measures_agree_with_trec_eval(seed: int) -> None:
    c = generate(seed)
    topics, run, qrels = as_arrays(c)
    measures = [parse_trec_measure(key) for key in FURTHER]
    modes: tuple[Literal["zero", "skip"], ...] = ("zero", "skip")
    references = {key: trec_eval_values(c, spec) for key, (spec, _) in FURTHER.items()}
    for missing in modes:
        result = evaluate_trec(*run, *qrels, len(topics), c.threshold, measures, missing=missing)
        for key, m in zip(FURTHER, measures, strict=True):
            reference, printed = references[key], FURTHER[key][1]
            expected = [
                reference[t][printed]
                if t in reference
                else further_by_hand(m, c.qrels[t], len(c.run.get(t, {})), c.threshold)
                for t in topics
            ]
            got = result.per_query[m.key].tolist()
            if m.is_geometric:
                got = [math.log(max(v, 0.00001)) for v in got]
            assert got == pytest.approx(expected, abs=TOLERANCE, rel=0), (seed, key)
            counted = [
                v for t, v in zip(topics, expected, strict=True) if missing == "zero" or t in c.run
            ]
            if m.is_geometric:
                want = math.exp(sum(counted) / len(counted)) if counted else 0.0
            else:
                want = mean_of(m, counted)
            assert result.means[m.key] == pytest.approx(want, abs=TOLERANCE, rel=0), (
                seed,
                key,
                missing,
            )


def trec_order(lines: dict[str, float]) -> list[str]:
    """Return a topic's docids in trec_eval's order: float32 score descending, docid descending."""
    by_id = sorted(lines, key=lambda d: d.encode(), reverse=True)
    return sorted(by_id, key=lambda d: -float(np.float32(lines[d])))


@pytest.mark.parametrize("seed", SEEDS)
def test_hits_and_dcg_agree_with_trec_eval_and_by_hand(seed: int) -> None:
    """Hits@k is trec_eval's P_k times k; DCG@k is summed here line by line in trec_eval's order."""
    c = generate(seed)
    topics, run, qrels = as_arrays(c)
    cuts = (1, 5, 10, 100)
    keys = [f"Hits@{k}" for k in cuts] + [f"DCG@{k}" for k in cuts] + ["DCG"]
    result = evaluate_trec(
        *run, *qrels, len(topics), c.threshold, [parse_trec_measure(k) for k in keys]
    )
    reference = trec_eval_values(c, f"P.{','.join(map(str, cuts))}")
    for i, t in enumerate(topics):
        ranked = trec_order(c.run.get(t, {}))
        judged = c.qrels[t]
        for k in cuts:
            hits = round(reference[t][f"P_{k}"] * k) if t in reference else 0
            assert result.per_query[f"Hits@{k}"][i] == hits, (seed, t, k)
        for k in (*cuts, None):
            dcg = sum(
                max(judged.get(d, 0), 0) / math.log2(rank + 1)
                for rank, d in enumerate(ranked[:k], start=1)
            )
            key = "DCG" if k is None else f"DCG@{k}"
            assert result.per_query[key][i] == pytest.approx(dcg, abs=TOLERANCE), (seed, t, k)


@pytest.mark.parametrize("seed", SEEDS)
def test_judged_at_k_agrees_with_ir_measures(seed: int) -> None:
    """Judged@k: ir_measures' fraction of the top k (or of all lines, if fewer) that is judged.

    ir_measures breaks ties by docid ascending, trec_eval descending: scores are made distinct.
    """
    ir_measures = pytest.importorskip("ir_measures")
    c = generate(seed)
    rng = random.Random(seed)
    for lines in c.run.values():
        values = rng.sample(range(1, 10**6), len(lines))
        for d, v in zip(list(lines), values, strict=True):
            lines[d] = float(v)
    topics, run, qrels = as_arrays(c)
    cuts = (1, 3, 10, 50, 2000)
    measures = [parse_trec_measure(f"Judged@{k}") for k in cuts]
    result = evaluate_trec(*run, *qrels, len(topics), c.threshold, measures, missing="skip")
    wanted = [ir_measures.Judged @ k for k in cuts]
    reference: dict[tuple[str, int], float] = {}
    for metric in ir_measures.judged.iter_calc(wanted, c.qrels, c.run):
        reference[(metric.query_id, metric.measure["cutoff"])] = metric.value
    for i, t in enumerate(topics):
        if t not in c.run:
            continue
        for m in measures:
            assert m.k is not None
            assert result.per_query[m.key][i] == pytest.approx(
                reference[(t, m.k)], abs=TOLERANCE
            ), (seed, t, m.key)


#: trec_eval names -> our keys, scored on condensed lists (trec_eval -J, our judged_only).
CONDENSED = {
    "map": "MAP",
    "P_5": "P@5",
    "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "infAP": "infAP",
    "recip_rank": "MRR",
    "Rprec": "R-Prec",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "set_P": "set_P",
}
#: A gain map: grades it lists get its gain, others keep their grade (trec_eval's ndcg.g=v,...).
GAIN_MAP = {0: 0.5, 1: 1.0, 2: 5.0, 4: 2.0}


@pytest.mark.parametrize("seed", SEEDS)
def test_judged_only_and_gain_maps_agree_with_trec_eval(seed: int) -> None:
    c = generate(seed)
    topics, run, qrels = as_arrays(c)
    condensed = [parse_trec_measure(f"{key}[judged_only=true]") for key in CONDENSED.values()]
    mapped = parse_trec_measure("nDCG").with_defaults(gains=GAIN_MAP)
    result = evaluate_trec(
        *run, *qrels, len(topics), c.threshold, [*condensed, mapped], missing="skip"
    )
    trusted = {t: j for t, j in c.qrels.items() if j and not negative_only(j)}
    reference = TrecEvalMeasures(
        query_relevance=trusted,
        measures={"map", "P.5", "ndcg", "ndcg_cut.10", "bpref", "num_ret", "infAP"}
        | {"recip_rank", "Rprec", "num_nonrel_judged_ret", "set_P"},
        relevance_level=c.threshold,
        judged_docs_only_flag=True,
    ).evaluate(c.run)
    gains = ",".join(f"{grade}={gain}" for grade, gain in GAIN_MAP.items())
    mapped_reference = trec_eval_values(c, f"ndcg.{gains}")
    assert set(reference) == {t for t in trusted if t in c.run}
    for i, t in enumerate(topics):
        if t not in reference:
            continue
        for name, m in zip(CONDENSED, condensed, strict=True):
            got = result.per_query[m.key][i]
            assert got == pytest.approx(reference[t][name], abs=TOLERANCE), (seed, t, m.key)
        got = result.per_query["nDCG"][i]
        assert got == pytest.approx(mapped_reference[t]["ndcg"], abs=TOLERANCE), (seed, t)


@pytest.mark.parametrize("seed", SEEDS)
def test_exponential_and_mapped_gains_at_a_cutoff_by_hand(seed: int) -> None:
    """nDCG@k and DCG@k with a gain map and 2^g - 1 gains, summed here line by line."""
    c = generate(seed)
    topics, run, qrels = as_arrays(c)
    forms: list[tuple[str, dict[int, float] | None, str]] = [
        ("nDCG@5[dcg=exp-log2]", None, "exp-log2"),
        ("DCG@10[dcg=exp-log2]", None, "exp-log2"),
        ("nDCG@10", GAIN_MAP, "log2"),
        ("DCG", GAIN_MAP, "log2"),
    ]
    measures = [parse_trec_measure(key).with_defaults(gains=g) for key, g, _ in forms]
    result = evaluate_trec(*run, *qrels, len(topics), c.threshold, measures)

    def gain(grade: int, mapping: dict[int, float] | None, form: str) -> float:
        value = 0.0 if grade < 0 else (mapping or {}).get(grade, float(grade))
        return 2**value - 1 if form == "exp-log2" else value

    for (key, mapping, form), m in zip(forms, measures, strict=True):
        for i, t in enumerate(topics):
            judged = c.qrels[t]
            ranked = trec_order(c.run.get(t, {}))[: m.k]
            dcg = sum(
                gain(judged[d], mapping, form) / math.log2(rank + 1)
                for rank, d in enumerate(ranked, start=1)
                if d in judged
            )
            ideal_gains = sorted((gain(g, mapping, form) for g in judged.values()), reverse=True)
            ideal = sum(
                g / math.log2(rank + 1)
                for rank, g in enumerate(ideal_gains[: m.k], start=1)
                if g > 0
            )
            want = dcg if key.startswith("DCG") else (dcg / ideal if ideal > 0 else 0.0)
            assert result.per_query[m.key][i] == pytest.approx(want, abs=TOLERANCE), (seed, t, key)
