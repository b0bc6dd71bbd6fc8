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
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pytest
import pytrec_eval

from leaderboard.scoring.trec_measures import (
    TrecMeasureKey,
    evaluate_trec,
    parse_trec_measure,
)

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


@dataclass
class Collection:
    """A generated qrels and run, as dicts for pytrec_eval."""

    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    threshold: int


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


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def as_arrays(c: Collection) -> tuple[list[str], Arrays, Arrays]:
    """Return the qrels topics and the kernel's run and qrels arrays."""
    topics = sorted(c.qrels)
    index = {t: i for i, t in enumerate(topics)}
    rq = [index.get(t, -1) for t, docs in c.run.items() for _ in docs]
    rd = [d.encode() for docs in c.run.values() for d in docs]
    rs = [s for docs in c.run.values() for s in docs.values()]
    qq = [index[t] for t, docs in c.qrels.items() for _ in docs]
    qd = [d.encode() for docs in c.qrels.values() for d in docs]
    qg = [g for docs in c.qrels.values() for g in docs.values()]
    run = (np.array(rq, dtype=np.int32), np.array(rd, dtype="S"), np.array(rs, dtype=np.float64))
    qrels = (np.array(qq, dtype=np.int32), np.array(qd, dtype="S"), np.array(qg, dtype=np.int32))
    return topics, run, qrels


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
