"""CQA parts from the whole run's per-question values: equal to scoring the run cut to each part."""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leaderboard.cli.references import read_definition
from leaderboard.scoring.classification import binary_from_counts
from leaderboard.scoring.cqa import CqaScores
from leaderboard.scoring.cqa_measures import AVGREC_UNDEFINED, CQA_MEASURES
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Family, MeasureResult, PartGold
from leaderboard.tasks.families.cqa import parts as cqa_parts
from leaderboard.tasks.families.cqa.family import CqaFamily

PRESET = Path(__file__).resolve().parents[2] / "leaderboard/tasks/presets/semeval2016-task3"
LIMIT = 10 << 20
Parts = dict[str, PartGold]


def context(subtask: str) -> tuple[Context, bytes]:
    """Return the test set of a subtask of the CQA preset and its gold file."""
    definition = read_definition(PRESET / "task.toml")
    sd = definition.subtask(subtask)
    assert sd is not None
    setdef = sd.set("test")
    assert setdef is not None
    return Context(definition, sd, "test", LIMIT), definition.file_path(
        setdef.files["gold"]
    ).read_bytes()


def gold_rows(gold_file: bytes) -> list[list[str]]:
    """Return the gold file's rows as fields."""
    return [line.split("\t") for line in gold_file.decode().splitlines() if line.strip()]


def oracle(rows: list[list[str]], rng: random.Random) -> str:
    """Return a run scoring and labelling every candidate as the gold does."""
    return "".join(
        f"{q}\t{c}\t0\t{int(label.strip() == 'true')}\t{label.strip()}\n"
        for q, c, _p, _i, label in rows
    )


def constant(rows: list[list[str]], rng: random.Random) -> str:
    """Return a run giving every candidate the same score and label (ties keep gold order)."""
    return "".join(f"{q}\t{c}\t0\t0.5\ttrue\n" for q, c, *_ in rows)


def seeded(rows: list[list[str]], rng: random.Random) -> str:
    """Return a run with random scores (some tied) and labels."""
    lines = []
    for q, c, *_ in rows:
        score = round(rng.random(), 2)
        lines.append(f"{q}\t{c}\t0\t{score}\t{'true' if score > 0.6 else 'false'}\n")
    return "".join(lines)


RUNS: dict[str, Callable[[list[list[str]], random.Random], str]] = {
    "oracle": oracle,
    "constant": constant,
    "random": seeded,
}


def parsed_run(family: Family[Any, Any], ctx: Context, gold: Any, text: str, lenient: bool) -> Any:
    """Return the run validated against the gold; it must be accepted."""
    inputs = {"file": io.BytesIO(text.encode())}
    verdict = family.validate(inputs, gold, ctx, lenient=lenient, options={})
    assert verdict.ok, verdict.errors
    return verdict.parsed


def splits(family: Family[Any, Any], gold: Any, seed: int) -> list[Parts]:
    """Return public/private splits of the questions: seeded fractions and a one-question part."""
    questions = list(gold.questions)
    rng = random.Random(seed)
    chosen = [
        frozenset(rng.sample(questions, max(1, round(f * len(questions))))) for f in (0.3, 0.5)
    ]
    chosen.append(frozenset(questions[-1:]))
    out = []
    for public in chosen:
        private = frozenset(questions) - public
        out.append(
            {
                name: PartGold(units, family.restrict_gold(gold, units))
                for name, units in (("public", public), ("private", private))
            }
        )
    return out


def cut_and_scored(family: Family[Any, Any], parsed: Any, gold: Any, parts: Parts) -> Any:
    """Return the default path: the run cut to each part's questions, scored on the part's gold."""
    return {
        name: family.score_part(parsed, gold, part.gold, part.units) for name, part in parts.items()
    }


def assert_equal(got: dict[str, dict[str, MeasureResult]], want: Any) -> None:
    """Assert every field of every measure of every part is the same."""
    assert list(got) == list(want)
    for name, expected in want.items():
        assert list(got[name]) == list(expected) == list(CQA_MEASURES)
        for key, result in expected.items():
            assert got[name][key] == result, (name, key)


@pytest.fixture
def no_cutting(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Return a switch making the cut-and-rescore path refuse, to prove the derived path is used."""

    def refused(*args: object) -> None:
        raise AssertionError("the derived path cuts no run")

    return lambda: monkeypatch.setattr(CqaFamily, "score_part", refused)


@pytest.mark.parametrize("subtask", ["A", "C"])
@pytest.mark.parametrize("run", list(RUNS))
def test_parts_equal_the_cut_run_field_by_field(subtask: str, run: str) -> None:
    ctx, gold_file = context(subtask)
    family = get_family("cqa")
    gold = family.load_gold({"gold": gold_file}, ctx)
    rng = random.Random(11)
    parsed = parsed_run(family, ctx, gold, RUNS[run](gold_rows(gold_file), rng), lenient=False)
    results = family.score(parsed, gold)
    for seed in (1, 2):
        for parts in splits(family, gold, seed):
            want = cut_and_scored(family, parsed, gold, parts)
            got = family.score_parts(parsed, gold, results, parts)
            assert_equal(got, want)
            assert got["public"]["MAP"].per_query is not None
            assert list(got["public"]["MAP"].per_query) == list(parts["public"].gold.questions)


def test_the_derived_path_cuts_no_run(no_cutting: Callable[[], None]) -> None:
    ctx, gold_file = context("C")
    family = get_family("cqa")
    gold = family.load_gold({"gold": gold_file}, ctx)
    parsed = parsed_run(family, ctx, gold, seeded(gold_rows(gold_file), random.Random(4)), False)
    results = family.score(parsed, gold)
    parts = splits(family, gold, 5)[0]
    want = cut_and_scored(family, parsed, gold, parts)
    no_cutting()
    assert_equal(family.score_parts(parsed, gold, results, parts), want)


def test_a_part_without_a_relevant_answer_is_flagged_as_cut_and_rescored(
    no_cutting: Callable[[], None],
) -> None:
    ctx, gold_file = context("A")
    family = get_family("cqa")
    gold = family.load_gold({"gold": gold_file}, ctx)
    starts = np.append(gold.question_starts, len(gold))
    bare = frozenset(
        q for k, q in enumerate(gold.questions) if not gold.labels[starts[k] : starts[k + 1]].any()
    )
    assert bare, "the preset's subtask A has questions without a relevant answer"
    others = frozenset(gold.questions) - bare
    parts = {
        "public": PartGold(bare, family.restrict_gold(gold, bare)),
        "private": PartGold(others, family.restrict_gold(gold, others)),
    }
    parsed = parsed_run(family, ctx, gold, seeded(gold_rows(gold_file), random.Random(8)), False)
    results = family.score(parsed, gold)
    want = cut_and_scored(family, parsed, gold, parts)
    no_cutting()
    got = family.score_parts(parsed, gold, results, parts)
    assert_equal(got, want)
    assert got["public"]["AvgRec"].flags == (AVGREC_UNDEFINED,)
    assert got["public"]["MAP"].raw == 0.0
    assert got["private"]["AvgRec"].flags == ()


def test_a_truncated_legacy_run_is_cut_and_rescored() -> None:
    ctx, gold_file = context("A")
    family = get_family("cqa")
    gold = family.load_gold({"gold": gold_file}, ctx)
    text = seeded(gold_rows(gold_file), random.Random(6))
    # Cut in the middle of a question, read leniently as the 2016 scorer did.
    cut = int(gold.question_starts[len(gold.questions) // 2]) + 2
    parsed = parsed_run(family, ctx, gold, "".join(text.splitlines(True)[:cut]), lenient=True)
    assert parsed.rows == cut
    results = family.score(parsed, gold)
    for parts in splits(family, gold, 3):
        assert_equal(
            family.score_parts(parsed, gold, results, parts),
            cut_and_scored(family, parsed, gold, parts),
        )


def test_a_part_f1_averaged_over_questions_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, gold_file = context("C")
    family = get_family("cqa")
    gold = family.load_gold({"gold": gold_file}, ctx)
    parsed = parsed_run(family, ctx, gold, seeded(gold_rows(gold_file), random.Random(9)), False)
    results = family.score(parsed, gold)
    parts = splits(family, gold, 7)[0]
    want = cut_and_scored(family, parsed, gold, parts)
    real = cqa_parts.scores_from_questions

    def averaged(ap: np.ndarray, recall: np.ndarray, counts: np.ndarray) -> CqaScores:
        # The wrong way: F1 as the mean of the questions' own F1s, not from the summed counts.
        right = real(ap, recall, counts)
        f1 = float(binary_from_counts(counts)["F1"].mean())
        return replace(right, values={**right.values, "F1": f1})

    assert_equal(family.score_parts(parsed, gold, results, parts), want)
    monkeypatch.setattr(cqa_parts, "scores_from_questions", averaged)
    with pytest.raises(AssertionError, match="F1"):
        assert_equal(family.score_parts(parsed, gold, results, parts), want)
