"""Fuzz the TREC (CAR 2017) strict run validator, lenient importer and qrels parser."""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats import trec
from leaderboard.formats.issues import Issue
from leaderboard.scoring.trec_measures import parse_trec_measure
from leaderboard.tasks.families.trec import TrecFamily, TrecGold
from leaderboard.tasks.families.trec.variants import Variant
from tests.fuzz import FUZZ, check_finite, check_issues, fuzz_input, per_case
from tests.trec_car import CAR_SETTINGS

PRESET = Path(__file__).resolve().parents[2] / "leaderboard/tasks/presets/trec-car-2017"
QRELS = PRESET / "qrels.car17v1.5.benchmarkY1test.txt"
TOPICS = PRESET / "topics.car17v1.5.benchmarkY1test.txt"
FAMILY = TrecFamily()
TAG = "fuzz-run"


@dataclass(frozen=True)
class Case:
    """A few preset topics with their preset qrels, format settings and a valid run."""

    topics: frozenset[str]
    settings: trec.TrecSettings
    qrels_data: bytes
    qrels: trec.Qrels
    run: bytes


def _case(first: int, count: int, settings: trec.TrecSettings) -> Case:
    topics = TOPICS.read_text().split()[first : first + count]
    rows = [line.split() for line in QRELS.read_text().splitlines()]
    kept = [r for r in rows if r[0] in topics]
    qrels_data = "".join(" ".join(r) + "\n" for r in kept).encode()
    qrels, issues = trec.parse_qrels(qrels_data, topics=frozenset(topics), settings=settings)
    assert qrels is not None, issues
    lines = []
    for t, topic in enumerate(topics):
        # The judged paragraphs (interleaved with unjudged ones), with falling scores.
        judged = [r[2] for r in kept if r[0] == topic]
        ids = [d for j, d in enumerate(judged) for d in (d, f"{t:08x}{j:032x}")]
        ids = ids[: settings.max_per_query]
        lines += [f"{topic} Q0 {d} {i + 1} {30 - i * 1.25:.4f} {TAG}" for i, d in enumerate(ids)]
    run = ("\n".join(lines) + "\n").encode()
    return Case(frozenset(topics), settings, qrels_data, qrels, run)


# The first topics of the preset (its CAR settings), three others with a small per-query cap,
# and three more under the generic settings.
CASES = (
    _case(0, 3, CAR_SETTINGS),
    _case(40, 3, replace(CAR_SETTINGS, max_per_query=6)),
    _case(80, 3, trec.TrecSettings(max_per_query=6)),
)


#: One measure of every kind, some with cutoffs beyond any fuzzed run's depth.
FUZZ_MEASURES = tuple(
    parse_trec_measure(m)
    for m in (
        "MAP", "MAP@3", "GMAP", "R-Prec", "MRR", "MRR@2", "P@1", "P@1000", "R@5", "nDCG",
        "nDCG@10", "bpref", "Success@3", "iPrec@0.00", "iPrec@0.50", "iPrec@1.00",
        "num_ret", "num_rel", "num_rel_ret",
    )
)  # fmt: skip


def gold_of(case: Case, qrels: trec.Qrels) -> TrecGold:
    """Return the family's gold with ``qrels`` as two variants (thresholds 1 and 0)."""
    return TrecGold(
        case.topics,
        {"automatic": qrels, "lenient": qrels},
        {
            "automatic": Variant("automatic", "Automatic", 1),
            "lenient": Variant("lenient", "Lenient", 0),
        },
        case.settings,
        measures={"automatic": FUZZ_MEASURES, "lenient": FUZZ_MEASURES},
    )


def check_scored(run: trec.TrecRun, case: Case, qrels: trec.Qrels) -> None:
    """Score a run with the family scorer: every measure finite, means within 0..1."""
    results = FAMILY.score(run, gold_of(case, qrels))
    assert set(results) == {f"{v}/{m.key}" for v in ("automatic", "lenient") for m in FUZZ_MEASURES}
    check_finite({k: r.raw for k, r in results.items()})
    for key, r in results.items():
        assert r.per_query is not None and set(r.per_query) <= set(qrels.queries), key
        if key.rpartition("/")[2].startswith("num_"):
            assert r.raw == sum(r.per_query.values()) and r.raw >= 0, (key, r)
        else:
            assert 0.0 <= r.raw <= 1.0, (key, r)


def messages(issues: list[Issue]) -> list[tuple[int | None, str, str]]:
    return [(i.line, i.message, i.severity) for i in issues]


def check_outcome(
    run: trec.TrecRun | None, errors: list[Issue], warnings: list[Issue] | list[str]
) -> None:
    """Assert a verdict is well formed: errors only when refused, each issue located or not."""
    check_issues(errors)
    assert all(i.severity == "error" for i in errors)
    assert (run is None) == bool(errors)
    for w in warnings:
        if isinstance(w, Issue):
            check_issues([w])
        else:
            assert isinstance(w, str) and w
    if run is not None:
        assert len(run) == run.query_index.size == run.docids.size == run.scores.size
        assert not np.any(np.isnan(run.scores))


_runs = per_case(CASES, lambda c: fuzz_input(c.run))


@FUZZ
@given(_runs)
@example((CASES[0], CASES[0].run.replace(b" 30.0000 ", b" 1e39 ", 1)))
@example((CASES[0], CASES[0].run.replace(b" 30.0000 ", b" nan ", 1)))
@example((CASES[0], CASES[0].run.replace(b" 30.0000 ", b" 0x1p200 ", 1)))
@example((CASES[1], CASES[1].run.replace(b"\n", b"\r")))
@example((CASES[0], CASES[0].run.replace(b" 28.7500 ", b" 28.75000000001 ", 1)))
def test_run_readers_give_a_verdict_or_a_finite_score(drawn: tuple[Case, bytes]) -> None:
    case, data = drawn
    lines = data.splitlines(keepends=True)
    strict = trec.validate_run(
        io.BytesIO(data), topics=case.topics, settings=case.settings, form_run_name=TAG
    )
    check_outcome(*strict)
    event(f"strict: {'accepted' if strict[0] is not None else 'refused'}")
    # Lines and a stream are two ways in to one validator: same verdict, word for word.
    by_lines = trec.validate_run(
        lines, topics=case.topics, settings=case.settings, form_run_name=TAG
    )
    assert messages(by_lines[1]) == messages(strict[1])
    assert messages(by_lines[2]) == messages(strict[2])
    if strict[0] is not None:
        assert by_lines[0] is not None
        assert np.array_equal(by_lines[0].scores, strict[0].scores)
        assert np.array_equal(by_lines[0].docids, strict[0].docids)
        assert np.all(np.isfinite(strict[0].scores))
        check_scored(strict[0], case, case.qrels)

    lenient = trec.parse_lenient(io.BytesIO(data))
    check_outcome(*lenient)
    event(f"lenient: {'accepted' if lenient[0] is not None else 'refused'}")
    by_lines_lenient = trec.parse_lenient(lines)
    assert messages(by_lines_lenient[1]) == messages(lenient[1])
    assert by_lines_lenient[2] == lenient[2]
    if lenient[0] is not None:
        assert not np.any(np.isnan(lenient[0].scores))
        check_scored(lenient[0], case, case.qrels)


_qrels = per_case(CASES, lambda c: st.tuples(fuzz_input(c.qrels_data), st.booleans()))


@FUZZ
@given(_qrels)
@example((CASES[0], (CASES[0].qrels_data.replace(b" 1\n", b" -3\n", 1), True)))
@example((CASES[0], (CASES[0].qrels_data.replace(b" 1\n", b" 99999999999999999999\n", 1), False)))
@example((CASES[0], (b"\xef\xbb\xbf" + CASES[0].qrels_data.replace(b"\n", b"\r\n"), True)))
@example((CASES[2], (b"# judged\n" + CASES[2].qrels_data.replace(b"\n", b"\n  #\xff\n", 1), True)))
@example((CASES[2], (CASES[2].qrels_data.replace(b" 1\n", b" 99999999999999999999\n", 1), False)))
def test_qrels_parser_gives_qrels_or_located_errors(drawn: tuple[Case, tuple[bytes, bool]]) -> None:
    case, (data, known_topics) = drawn
    topics = case.topics if known_topics else None
    qrels, issues = trec.parse_qrels(data, topics=topics, settings=case.settings)
    check_issues(issues)
    errors = [i for i in issues if i.severity == "error"]
    event(f"qrels: {'accepted' if qrels is not None else 'refused'}")
    if qrels is None:
        assert errors
        return
    assert not errors and len(qrels) > 0
    low, high = case.settings.min_grade, case.settings.max_grade
    assert low is None or np.all(qrels.grades >= low)
    assert high is None or np.all(qrels.grades <= high)
    if topics is not None:
        assert set(qrels.queries) <= topics
    for threshold in (0, 1):
        report = trec.qrels_report(qrels, threshold)
        assert report["lines"] == len(qrels)
    # The valid run scores to finite values against any qrels the parser accepts.
    run, errors, _ = trec.validate_run(
        io.BytesIO(case.run), topics=case.topics, settings=case.settings
    )
    assert run is not None, errors
    check_scored(run, case, qrels)
