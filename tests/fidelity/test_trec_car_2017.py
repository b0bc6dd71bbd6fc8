"""TREC CAR 2017: the shipped v1.5 qrels, oracle runs, and agreement with pytrec_eval .

pytrec_eval wraps trec_eval 9.0.8's code (float32 scores, reverse-strcmp tie breaks), so it is
the reference for per-query map, Rprec and recip_rank.
"""

from __future__ import annotations

import hashlib
import io
import random
from collections import defaultdict
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from leaderboard.formats.trec import (
    Qrels,
    TrecRun,
    parse_lenient,
    parse_qrels,
    qrels_report,
    validate_run,
)
from leaderboard.tasks.families.trec.scoring import score_run, score_variant
from tests.shared_data import preset_path, shared_path
from tests.trec_car import CAR_SETTINGS
from tests.trec_synthetic import hex_id

CAR = CAR_SETTINGS
TASK = "trec-car-2017"
QRELS_V15 = "qrels.car17v1.5.benchmarkY1test.txt"
TOPICS_V15 = "topics.car17v1.5.benchmarkY1test.txt"
QRELS_V15_SHA256 = "2c406b53ec764a4145d05ae439834ff4dbf798b58d706c741576deada2dd67ad"
MEASURES = {"MAP": "map", "R-Prec": "Rprec", "MRR": "recip_rank"}
PER_QUERY = MEASURES
# Scores with many ties, -0.0 == 0.0, a float32 underflow to 0, values equal only as float32
# (0.5000000001 ~ 0.5000000002; 3.0 ~ 3.0000001) and a near value that stays distinct.
TIE_SCORES = (0.0, -0.0, 1e-46, 1.0, 2.5, 0.5000000001, 0.5000000002, 3.0, 3.0000001, 3.00000012)

QrelsRows = list[tuple[str, str, int]]
RunRows = list[tuple[str, str, float]]


# -- shipped data -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def topics() -> frozenset[str]:
    return frozenset(preset_path(TASK, TOPICS_V15).read_text().split())


@pytest.fixture(scope="module")
def qrels_bytes() -> bytes:
    return preset_path(TASK, QRELS_V15).read_bytes()


@pytest.fixture(scope="module")
def car_qrels(qrels_bytes: bytes, topics: frozenset[str]) -> Qrels:
    qrels, issues = parse_qrels(qrels_bytes, topics=topics, settings=CAR)
    assert issues == []
    assert qrels is not None
    return qrels


@pytest.fixture(scope="module")
def relevant_by_topic(car_qrels: Qrels) -> dict[str, list[str]]:
    relevant: dict[str, list[str]] = defaultdict(list)
    for q, d in zip(car_qrels.query_index.tolist(), car_qrels.docids.tolist(), strict=True):
        relevant[car_qrels.queries[q]].append(d.decode())
    return relevant


@pytest.mark.fidelity
def test_shipped_qrels_facts(qrels_bytes: bytes, car_qrels: Qrels, topics: frozenset[str]) -> None:
    assert hashlib.sha256(qrels_bytes).hexdigest() == QRELS_V15_SHA256
    assert len(car_qrels) == 5820
    assert len(car_qrels.queries) == 2125
    assert set(car_qrels.queries) == topics
    assert car_qrels.grade_histogram() == {1: 5820}
    assert all("/" in q and " " not in q and len(q) <= 195 for q in car_qrels.queries)
    report = qrels_report(car_qrels, 1)
    assert report["lines"] == 5820
    assert report["queries"] == 2125
    assert report["queries_without_relevant"] == []
    assert report["queries_all_negative"] == []


@pytest.mark.fidelity
def test_shipped_qrels_relevant_counts(relevant_by_topic: dict[str, list[str]]) -> None:
    counts = [len(docs) for docs in relevant_by_topic.values()]
    assert min(counts) == 1
    assert max(counts) == 16
    assert counts.count(1) == 797
    assert sum(counts) == 5820


def oracle_lines(
    relevant_by_topic: dict[str, list[str]], skip: frozenset[str], seed: int, filler: int
) -> list[bytes]:
    """Relevant paragraphs above unjudged ones for every topic not in ``skip``, shuffled."""
    rng = random.Random(seed)
    out = []
    for topic, relevant in relevant_by_topic.items():
        if topic in skip:
            continue
        for i, d in enumerate(relevant):
            out.append(f"{topic} Q0 {d} {i + 1} {100 - i} oracle\n".encode())
        for i in range(filler):
            out.append(f"{topic} Q0 {hex_id(rng)} {99 + i} {50 - i * 0.01:.2f} oracle\n".encode())
    rng.shuffle(out)
    return out


@pytest.mark.fidelity
def test_oracle_run_scores_one(
    relevant_by_topic: dict[str, list[str]], car_qrels: Qrels, topics: frozenset[str]
) -> None:
    lines = oracle_lines(relevant_by_topic, frozenset(), seed=1, filler=3)
    run, errors, warnings = validate_run(lines, topics=topics, settings=CAR)
    assert errors == [] and warnings == []
    assert run is not None
    assert score_run(run, car_qrels, 1) == {"MAP": 1.0, "R-Prec": 1.0, "MRR": 1.0}


@pytest.mark.fidelity
@pytest.mark.parametrize("k", [1, 13, 400])
def test_oracle_missing_topics_score_fraction(
    k: int, relevant_by_topic: dict[str, list[str]], car_qrels: Qrels, topics: frozenset[str]
) -> None:
    skip = frozenset(random.Random(k).sample(sorted(topics), k))
    lines = oracle_lines(relevant_by_topic, skip, seed=k, filler=1)
    run, errors, warnings = validate_run(lines, topics=topics, settings=CAR)
    assert errors == [] and run is not None
    first = sorted(skip)[0]
    expected_warning = (
        f"1 of 2,125 topics has no results ('{first}'). It counts as 0 on every measure."
        if k == 1
        else f"{k:,} of 2,125 topics have no results (first: '{first}')."
        " Each counts as 0 on every measure."
    )
    assert [w.message for w in warnings] == [expected_warning]
    expected = (2125 - k) / 2125
    assert score_run(run, car_qrels, 1) == {"MAP": expected, "R-Prec": expected, "MRR": expected}
    # trec_eval 9.0.8's default (no -c) would still report 1.0: the documented difference.
    assert score_variant(run, car_qrels, 1, missing="skip").evaluation.means == {
        "MAP": 1.0,
        "R-Prec": 1.0,
        "MRR": 1.0,
    }


@pytest.mark.fidelity
def test_v2_id_rejected_with_hint(topics: frozenset[str]) -> None:
    v2_first = shared_path(TASK, "qrels.car17v2.0.benchmarkY1test.txt").read_text().split("\n")[0]
    query, _, paragraph, _ = v2_first.split()
    assert query == "enwiki:Aftertaste"
    data = f"{query} Q0 {paragraph} 1 17.25 aurora-rm3\n".encode()
    run, errors, _ = validate_run(io.BytesIO(data), topics=topics, settings=CAR)
    assert run is None
    assert [e.message for e in errors] == [
        "Line 1: unknown query id 'enwiki:Aftertaste' (not a benchmarkY1test topic)."
        " Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids."
    ]


@pytest.mark.fidelity
def test_full_size_run_validates_and_scores(
    tmp_path: Path,
    relevant_by_topic: dict[str, list[str]],
    car_qrels: Qrels,
    topics: frozenset[str],
) -> None:
    # 2,125 topics x 1,000 lines: the relevant paragraphs first, then unjudged ones.
    rng = random.Random(7)
    path = tmp_path / "run.txt"
    with path.open("w") as out:
        for topic, relevant in relevant_by_topic.items():
            rows = [f"{topic} Q0 {d} {i + 1} {2000 - i} big\n" for i, d in enumerate(relevant)]
            rows += [
                f"{topic} Q0 {hex_id(rng)} {i + 1} {1000 - i * 0.5} big\n"
                for i in range(len(relevant), 1000)
            ]
            out.write("".join(rows))
    with path.open("rb") as stream:
        run, errors, warnings = validate_run(stream, topics=topics, settings=CAR)
    assert errors == [] and warnings == []
    assert run is not None and len(run) == 2_125_000
    assert score_run(run, car_qrels, 1) == {"MAP": 1.0, "R-Prec": 1.0, "MRR": 1.0}


@pytest.mark.fidelity
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pytrec_agreement_on_shipped_qrels(
    seed: int, relevant_by_topic: dict[str, list[str]], car_qrels: Qrels, topics: frozenset[str]
) -> None:
    rng = random.Random(seed)
    all_relevant = [d for docs in relevant_by_topic.values() for d in docs]
    qrels_rows = [(q, d, 1) for q, docs in relevant_by_topic.items() for d in docs]
    run_rows: RunRows = []
    for topic in sorted(topics):
        if rng.random() < 0.1:
            continue  # missing from the run
        pool = set(relevant_by_topic[topic][: rng.randint(0, 16)])
        pool |= set(rng.sample(all_relevant, 5))  # judged for other topics: unjudged here
        pool |= {hex_id(rng) for _ in range(rng.randint(0, 20))}
        run_rows += [(topic, d, rng.choice(TIE_SCORES)) for d in sorted(pool)]
    run = strict_run(run_rows, topics)
    compare_with_pytrec(car_qrels, qrels_rows, run, run_rows, 1)


# -- pytrec_eval agreement on generated graded qrels --------------------------------------------


def strict_run(rows: RunRows, topics: frozenset[str]) -> TrecRun:
    data = "".join(f"{q} Q0 {d} 1 {s!r} gen\n" for q, d, s in rows).encode()
    run, errors, _ = validate_run(io.BytesIO(data), topics=topics, settings=CAR)
    assert errors == [] and run is not None
    return run


def graded_qrels(rows: QrelsRows) -> Qrels:
    data = "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()
    qrels, issues = parse_qrels(data, topics=None, settings=CAR)
    assert issues == [] and qrels is not None
    return qrels


def pytrec_per_query(
    qrels_rows: QrelsRows, run_rows: RunRows, threshold: int, leave_out: set[str]
) -> dict[str, dict[str, float]]:
    """Evaluate with pytrec_eval; threshold 0 maps grades g >= 0 to g + 1 at level 1."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for q, d, g in qrels_rows:
        if q not in leave_out:
            qrels[q][d] = g + 1 if threshold == 0 and g >= 0 else g
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for q, d, s in run_rows:
        if q not in leave_out:
            run[q][d] = s
    level = max(threshold, 1)
    evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), set(MEASURES.values()), level)
    result: dict[str, dict[str, float]] = evaluator.evaluate(dict(run))
    return result


def compare_with_pytrec(
    qrels: Qrels, qrels_rows: QrelsRows, run: TrecRun, run_rows: RunRows, threshold: int
) -> None:
    """Per-query values equal pytrec_eval's; means are its per-query sums over |Q_v|."""
    grades: dict[str, list[int]] = defaultdict(list)
    for q, _, g in qrels_rows:
        grades[q].append(g)
    all_negative = {q for q, gs in grades.items() if max(gs) < 0}
    reference = pytrec_per_query(qrels_rows, run_rows, threshold, all_negative)
    scores = score_variant(run, qrels, threshold)
    ours = scores.evaluation.means
    assert len(scores.queries) == len(grades)
    for i, query in enumerate(scores.queries):
        for ours_key, ref_key in PER_QUERY.items():
            value = float(scores.evaluation.per_query[ours_key][i])
            if query in reference:
                assert value == pytest.approx(reference[query][ref_key], abs=1e-9), (
                    query,
                    ours_key,
                )
            else:  # absent from the run, or all grades negative: 0
                assert value == 0.0, (query, ours_key)
    for ours_key, ref_key in MEASURES.items():
        expected = sum(values[ref_key] for values in reference.values()) / len(grades)
        # Far tighter than the 4 displayed decimals, without .4f rounding-boundary flakes.
        assert ours[ours_key] == pytest.approx(expected, abs=1e-9), ours_key


def random_case(rng: random.Random) -> tuple[QrelsRows, RunRows]:
    """Graded qrels (-2..3) over a small id pool, and a run with ties and unjudged ids."""
    pool = [hex_id(rng) for _ in range(8)] + ["f" * 40, "f" * 39 + "e", "0" * 40]
    queries = [f"Q{i}/s" for i in range(rng.randint(1, 8))]
    qrels_rows: QrelsRows = []
    for q in queries:
        for d in rng.sample(pool, rng.randint(1, len(pool))):
            qrels_rows.append((q, d, rng.randint(-2, 3)))
    run_rows: RunRows = []
    for q in [*queries, "Extra/only-in-run"]:
        if rng.random() < 0.2:
            continue
        docs = rng.sample(pool, rng.randint(1, len(pool))) + [hex_id(rng)]
        run_rows += [(q, d, rng.choice(TIE_SCORES)) for d in docs]
    return qrels_rows, run_rows


def run_topics(qrels_rows: QrelsRows, run_rows: RunRows) -> frozenset[str]:
    return frozenset(q for q, _, _ in qrels_rows) | frozenset(q for q, _, _ in run_rows)


@pytest.mark.parametrize("threshold", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", range(25))
def test_pytrec_agreement_graded_seeded(seed: int, threshold: int) -> None:
    qrels_rows, run_rows = random_case(random.Random(seed))
    if not run_rows:
        run_rows = [(qrels_rows[0][0], qrels_rows[0][1], 1.0)]
    qrels = graded_qrels(qrels_rows)
    run = strict_run(run_rows, run_topics(qrels_rows, run_rows))
    compare_with_pytrec(qrels, qrels_rows, run, run_rows, threshold)


ID_POOL = ["0" * 40, "0" * 39 + "1", "a" * 40, "a" * 39 + "b", "f" * 40, "9" * 40, "1" * 40]


@st.composite
def graded_cases(draw: st.DrawFn) -> tuple[QrelsRows, RunRows]:
    n_queries = draw(st.integers(1, 4))
    qrels_rows: QrelsRows = []
    run_rows: RunRows = []
    for i in range(n_queries):
        query = f"Q{i}/s"
        judged = draw(st.lists(st.sampled_from(ID_POOL), min_size=1, unique=True))
        qrels_rows += [(query, d, draw(st.integers(-2, 3))) for d in judged]
        retrieved = draw(st.lists(st.sampled_from([*ID_POOL, "e" * 40]), unique=True))
        run_rows += [(query, d, draw(st.sampled_from(TIE_SCORES))) for d in retrieved]
    if not run_rows:
        run_rows = [("Q0/s", ID_POOL[0], 1.0)]
    return qrels_rows, run_rows


@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=graded_cases(), threshold=st.sampled_from([0, 1, 2]))
def test_pytrec_agreement_hypothesis(case: tuple[QrelsRows, RunRows], threshold: int) -> None:
    qrels_rows, run_rows = case
    qrels = graded_qrels(qrels_rows)
    run = strict_run(run_rows, run_topics(qrels_rows, run_rows))
    compare_with_pytrec(qrels, qrels_rows, run, run_rows, threshold)


def test_all_negative_query_scores_zero_and_counts() -> None:
    # pytrec_eval is left out here (spec 9.1): we score the query 0 and it counts in |Q_v|.
    rows = [("A/s", "a" * 40, 1), ("N/s", "b" * 40, -1), ("N/s", "c" * 40, -2)]
    qrels = graded_qrels(rows)
    run = strict_run([("A/s", "a" * 40, 1.0), ("N/s", "b" * 40, 2.0), ("N/s", "c" * 40, 1.0)],
                     frozenset({"A/s", "N/s"}))  # fmt: skip
    for threshold in (0, 1):
        assert score_run(run, qrels, threshold) == {"MAP": 0.5, "R-Prec": 0.5, "MRR": 0.5}
    assert qrels_report(qrels, 0)["queries_all_negative"] == ["N/s"]


def hex_float(value: float) -> str:
    return value.hex() if value == value else "nan"


@pytest.mark.parametrize("seed", range(10))
def test_lenient_import_agrees_with_pytrec(seed: int) -> None:
    rng = random.Random(seed)
    qrels_rows, run_rows = random_case(rng)
    if not run_rows:
        run_rows = [(qrels_rows[0][0], qrels_rows[0][1], 1.0)]
    # Historical-run quirks: hex-float scores, trailing junk read as a prefix, TABs, 7 fields.
    text = []
    for q, d, s in run_rows:
        score = hex_float(s) if rng.random() < 0.5 else f"{s!r}junk"
        text.append(f"{q}\tQ0 {d}  0 {score} tag{rng.randint(0, 2)} extra\n")
    run, errors, report = parse_lenient(io.BytesIO("".join(text).encode()))
    assert errors == [] and run is not None
    assert report  # coercions and tags are reported
    qrels = graded_qrels(qrels_rows)
    for threshold in (0, 1):
        compare_with_pytrec(qrels, qrels_rows, run, run_rows, threshold)


def test_pytrec_reference_float32_tie() -> None:
    # Guards the reference itself: pytrec_eval must show trec_eval's float32 + id tie rule.
    result = pytrec_per_query(
        [("q", "b" * 40, 1), ("q", "a" * 40, 0)],
        [("q", "a" * 40, 0.5000000002), ("q", "b" * 40, 0.5000000001)],
        1,
        set(),
    )
    assert result["q"]["recip_rank"] == 1.0
