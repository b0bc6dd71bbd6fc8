"""Fuzz the CQA (SemEval-2016 Task 3) gold parser, strict validator and legacy importer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats import cqa
from leaderboard.tasks.families.cqa import CqaFamily
from leaderboard.tasks.families.cqa.baselines import baseline_run
from leaderboard.tasks.families.cqa.scoring import score_run
from tests.fuzz import FUZZ, check_finite, check_issues, fuzz_input, per_case
from tests.runs import GOLD_TEST_A, PRESET

GOLD_TEST_D = PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-MD-test.xml.subtaskD.relevancy"
WHERE = "subtask A (test)"


def gold_slice(path: Path, questions: int) -> bytes:
    """Return the lines of the first ``questions`` questions of a preset gold file."""
    kept: list[str] = []
    seen: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        qid = line.split("\t", 1)[0]
        if qid not in seen:
            if len(seen) == questions:
                break
            seen.append(qid)
        kept.append(line)
    return ("\n".join(kept) + "\n").encode()


def valid_run(gold_data: bytes) -> bytes:
    """Return a valid strict run for a gold file: varied scores, ranks 1.., both labels."""
    out = []
    for i, line in enumerate(gold_data.decode().splitlines()):
        qid, cid, _pos, _ir, label = line.split("\t")
        score = (i * 7919 % 97) / 97 + i * 1e-6
        out.append(f"{qid}\t{cid}\t{i + 1}\t{score!r}\t{label if i % 3 else 'true'}")
    return ("\n".join(out) + "\n").encode()


@dataclass(frozen=True)
class Case:
    """A small gold cut from a preset gold file, and a valid run for it."""

    name: str
    gold_data: bytes
    gold: cqa.CqaGold
    run: bytes


def _case(name: str, path: Path, questions: int) -> Case:
    data = gold_slice(path, questions)
    return Case(name, data, cqa.parse_gold(data), valid_run(data))


# Subtask A (10 comments per question) and the Arabic subtask D (about 30 per question).
CASES = (_case("A", GOLD_TEST_A, 3), _case("D", GOLD_TEST_D, 2))
FAMILY = CqaFamily()


def check_verdict(verdict: cqa.CqaVerdict, gold: cqa.CqaGold, *, strict: bool) -> None:
    """Assert a verdict is well formed; score an accepted run to finite values."""
    event(f"{'strict' if strict else 'lenient'}: {'accepted' if verdict.ok else 'refused'}")
    check_issues(verdict.errors)
    check_issues(verdict.warnings)
    assert all(i.severity == "error" for i in verdict.errors)
    assert all(i.severity == "warning" for i in verdict.warnings)
    assert all(isinstance(t, str) and t for t in verdict.tolerances)
    if not verdict.ok:
        assert verdict.run is None
        return
    run = verdict.run
    assert run is not None
    assert 0 < run.rows <= len(gold)
    if strict:
        assert run.rows == len(gold)
        assert np.all(np.isfinite(run.scores))
    assert run.scores.shape == run.predicted.shape == (run.rows,)
    results = FAMILY.score(run, gold)
    assert set(results) == {"MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc"}
    check_finite({k: r.raw for k, r in results.items()})
    for r in results.values():
        assert float(r.official) == pytest.approx(r.raw, abs=1e-4)


def test_unmutated_runs_are_accepted() -> None:
    for case in CASES:
        for verdict in (
            cqa.validate_strict(case.run, case.gold, where=WHERE),
            cqa.parse_lenient(case.run, case.gold),
            cqa.parse_lenient(case.run, case.gold, resort=True),
        ):
            assert verdict.ok and verdict.errors == [], (case.name, verdict.errors)


_runs = per_case(CASES, lambda c: fuzz_input(c.run))


@FUZZ
@given(_runs)
@example((CASES[0], CASES[0].run.replace(b"\t0.", b"\t1e999", 1)))
@example((CASES[0], CASES[0].run.replace(b"\ttrue\n", b"\tnan\n", 1)))
@example((CASES[0], b"\xef\xbb\xbf" + CASES[0].run.replace(b"\n", b"\r")))
def test_run_parsers_give_a_verdict_or_a_finite_score(drawn: tuple[Case, bytes]) -> None:
    case, data = drawn
    check_verdict(cqa.validate_strict(data, case.gold, where=WHERE), case.gold, strict=True)
    check_verdict(cqa.parse_lenient(data, case.gold), case.gold, strict=False)
    check_verdict(cqa.parse_lenient(data, case.gold, resort=True), case.gold, strict=False)


_golds = st.one_of(*(fuzz_input(c.gold_data) for c in CASES))


@FUZZ
@given(_golds)
@example(CASES[0].gold_data.replace(b"\tfalse\n", b"\tFalse\n", 1))
@example(b"q1\tc1\t1\t1e999\ttrue\n")
def test_gold_parser_gives_a_gold_or_a_located_error(data: bytes) -> None:
    try:
        gold = cqa.parse_gold(data)
    except cqa.GoldFormatError as exc:
        assert isinstance(exc.message, str) and exc.message
        assert exc.line is None or (type(exc.line) is int and exc.line >= 1)
        return
    assert len(gold) >= 1 and gold.question_starts[0] == 0
    assert np.all(np.isfinite(gold.ir_scores))
    # Any gold the parser accepts can score its own baselines.
    for kind in ("ir", "true", "false"):
        check_finite(score_run(gold, baseline_run(gold, kind)).values)
