"""TREC definitions: one qrels file or variants, measures by key or trec_eval name, refusals."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest

from leaderboard.scoring.resampling import SummedRows
from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, ReferenceFileError, StoredScore
from leaderboard.tasks.loading import load_definition_file

QRELS = "# judged\nq1 0 d1 4\nq1 0 d2 0\nq2 0 d3 -1\nq2 0 d4 2\n"

HEADER = """\
slug = "adhoc"
title = "Ad hoc"
family = "trec"
official_measure = "{official}"
measures = [{measures}]

[[subtasks]]
slug = "main"
title = "Main"

[[subtasks.sets]]
slug = "test"
"""
#: A set with one qrels file, and a set with two qrels variants (one of them not loaded yet).
SINGLE = HEADER + 'qrels = "qrels.txt"\n{extra}\n'
VARIANTS = (
    HEADER
    + """variants = [
  {{ slug = "strict", label = "Strict", threshold = 2, qrels = "qrels.txt" }},
  {{ slug = "loose", label = "Loose", threshold = 1 }},
]
{extra}
"""
)


def write(
    tmp_path: Path,
    measures: list[str],
    official: str | None = None,
    extra: str = "",
    template: str = SINGLE,
    qrels: str = QRELS,
) -> Path:
    (tmp_path / "qrels.txt").write_text(qrels)
    listed = ", ".join(f'"{m}"' for m in measures)
    path = tmp_path / "task.toml"
    path.write_text(template.format(measures=listed, official=official or measures[0], extra=extra))
    return path


def refusal(path: Path) -> DefinitionError:
    with pytest.raises(DefinitionError, match=r"^[\w.\[\]]+: ") as info:
        load_definition_file(path)
    return info.value


def columns(path: Path) -> list[tuple[str, str, bool]]:
    definition = load_definition_file(path)
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    return [(s.key, s.label, s.official) for s in family.measure_specs(ctx)]


def test_single_qrels_measures_by_key_and_trec_eval_name(tmp_path: Path) -> None:
    path = write(tmp_path, ["ndcg_cut_10", "P@10", "recall_100", "map"], official="ndcg_cut_10")
    assert columns(path) == [
        ("nDCG@10", "nDCG@10", True),
        ("P@10", "P@10", False),
        ("R@100", "R@100", False),
        ("MAP", "MAP", False),
    ]


def test_variants_prefix_their_measures(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ["strict/nDCG@10", "strict/MAP", "loose/ndcg_cut_10"],
        template=VARIANTS,
    )
    assert columns(path) == [
        ("strict/nDCG@10", "nDCG@10", True),
        ("strict/MAP", "MAP", False),
        ("loose/nDCG@10", "nDCG@10", False),
    ]


@pytest.mark.parametrize(
    ("measures", "template", "key", "words"),
    [
        (["MAP", "nDCG@x"], SINGLE, "subtasks[0].measures", "nDCG@x"),
        (["MAP", "P@0"], SINGLE, "subtasks[0].measures", "P@0"),
        (["MAP", "iPrec@1.5"], SINGLE, "subtasks[0].measures", "iPrec@1.5"),
        (["strict/MAP"], SINGLE, "subtasks[0].measures", "without a variant prefix"),
        (["MAP"], VARIANTS, "subtasks[0].measures", "prefix the measure"),
        (["other/MAP"], VARIANTS, "subtasks[0].measures", "strict"),
        (["MAP", "map"], SINGLE, "subtasks[0].measures", "twice"),
    ],
)
def test_wrong_measures_are_refused_naming_the_key(
    tmp_path: Path, measures: list[str], template: str, key: str, words: str
) -> None:
    error = refusal(write(tmp_path, measures, template=template))
    assert error.key == key
    assert words in error.message


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ('threshold = "one"', "subtasks[0].sets[0].threshold", "integer"),
        ('missing_topics = "drop"', "subtasks[0].sets[0].missing_topics", "zero, skip"),
        ("depth = 10", "subtasks[0].sets[0].depth", "unknown key"),
    ],
)
def test_wrong_set_options_are_refused(tmp_path: Path, extra: str, key: str, words: str) -> None:
    error = refusal(write(tmp_path, ["MAP"], extra=extra))
    assert error.key == key
    assert words in error.message


def test_a_set_without_qrels_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, ["MAP"])
    path.write_text(path.read_text().replace('qrels = "qrels.txt"\n', ""))
    error = refusal(path)
    assert error.key == "subtasks[0].sets[0].qrels"


def test_unknown_format_setting_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, ["MAP"])
    path.write_text(path.read_text().replace("[[subtasks]]", "[format]\ndepth = 5\n\n[[subtasks]]"))
    error = refusal(path)
    assert error.key == "format.depth"


def test_topics_come_from_the_qrels_without_a_topics_file(tmp_path: Path) -> None:
    definition = load_definition_file(write(tmp_path, ["MAP"]))
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    gold = family.load_gold({"qrels": QRELS.encode()}, ctx)
    assert gold.topics == frozenset({"q1", "q2"})


def test_topics_file_takes_first_fields_and_skips_comments(tmp_path: Path) -> None:
    definition = load_definition_file(write(tmp_path, ["MAP"]))
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    topics = b"# id\ttext\nq1\tfirst query text\nq2 second\n\nq3\n"
    gold = family.load_gold({"qrels": QRELS.encode(), "topics": topics}, ctx)
    assert gold.topics == frozenset({"q1", "q2", "q3"})


def test_unreadable_qrels_name_the_role_and_line(tmp_path: Path) -> None:
    definition = load_definition_file(write(tmp_path, ["MAP"]))
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    with pytest.raises(ReferenceFileError, match="Line 2: grade 'high' must be an integer") as info:
        family.load_gold({"qrels": b"q1 0 d1 1\nq1 0 d2 high\n"}, ctx)
    assert info.value.role == "qrels"
    assert "Line 2" in info.value.message and "high" in info.value.message


def test_parameterised_measures_by_key_and_trec_eval_name(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ["infAP", "set_F_0.5", "utility[1,-1,0,0]", "Rprec_mult_0.20", "nDCG@10[dcg=exp-log2]"],
    )
    assert [key for key, _, _ in columns(path)] == [
        "infAP",
        "set_F[0.5]",
        "utility",
        "R-Prec[mult=0.2]",
        "nDCG@10[dcg=exp-log2]",
    ]


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ('gains = { "x" = 1 }', "subtasks[0].sets[0].gains", "not a grade"),
        ('gains = { "-1" = 1 }', "subtasks[0].sets[0].gains", "not a grade"),
        ('gains = { "1" = -2 }', "subtasks[0].sets[0].gains.1", "0 or more"),
        ('gains = { "1" = true }', "subtasks[0].sets[0].gains.1", "0 or more"),
        ("gains = 3", "subtasks[0].sets[0].gains", "table of grades"),
        ('dcg = "exp"', "subtasks[0].sets[0].dcg", "log2, exp-log2"),
        ("judged_only = 1", "subtasks[0].sets[0].judged_only", "true or false"),
    ],
)
def test_wrong_measure_options_are_refused_naming_the_key(
    tmp_path: Path, extra: str, key: str, words: str
) -> None:
    error = refusal(write(tmp_path, ["nDCG"], extra=extra))
    assert error.key == key
    assert words in error.message


def test_options_at_the_top_level_and_per_subtask_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path, ["nDCG"])
    text = path.read_text()
    path.write_text(text.replace('measures = ["nDCG"]', 'measures = ["nDCG"]\ndcg = "exp"'))
    assert refusal(path).key == "dcg"
    path.write_text(text.replace('title = "Main"', 'title = "Main"\njudged_only = "yes"'))
    assert refusal(path).key == "subtasks[0].judged_only"
    path.write_text(text.replace('title = "Main"', 'title = "Main"\ndepth = 3'))
    error = refusal(path)
    assert error.key == "subtasks[0].depth" and "gains" in error.message


def test_an_option_a_measure_does_not_take_is_refused_with_those_it_takes(
    tmp_path: Path,
) -> None:
    error = refusal(write(tmp_path, ["MAP", "MAP[dcg=log2]"], official="MAP"))
    assert error.key == "subtasks[0].measures"
    assert "does not take dcg; it takes: judged_only" in error.message


RUN = b"".join(
    f"{q} Q0 {d} {r} {s} tag\n".encode()
    for q, d, r, s in [
        ("q1", "u1", 1, 9.0),
        ("q1", "d2", 2, 8.0),
        ("q1", "d1", 3, 7.0),
        ("q2", "d4", 1, 5.0),
        ("q2", "d3", 2, 4.0),
    ]
)


def score(path: Path) -> dict[str, float]:
    definition = load_definition_file(path)
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    gold = family.load_gold({"qrels": QRELS.encode()}, ctx)
    verdict = family.validate_file(io.BytesIO(RUN), gold, ctx, lenient=True, options={})
    assert verdict.parsed is not None
    return {k: r.raw for k, r in family.score(verdict.parsed, gold).items()}


def test_set_options_apply_to_the_measures_that_take_them_and_brackets_override(
    tmp_path: Path,
) -> None:
    """q1: unjudged, grade 0, grade 4; q2: grade 2 first (d3's -1 counts as unjudged)."""
    measures = ["nDCG", "nDCG[dcg=log2,judged_only=false]", "MAP", "P@1"]
    scores = score(write(tmp_path, measures, extra='dcg = "exp-log2"\njudged_only = true'))
    # Condensed lists: q1 ranks d2 (0) then d1 (4), q2 ranks d4 (2): gains 2^g - 1.
    q1 = (15 / math.log2(3)) / 15
    assert scores["nDCG"] == pytest.approx((q1 + 1.0) / 2)
    # Brackets: linear gains on the full lists; d1 at rank 3.
    assert scores["nDCG[dcg=log2,judged_only=false]"] == pytest.approx((4 / 2 / 4 + 1.0) / 2)
    assert scores["MAP"] == pytest.approx((1 / 2 + 1) / 2)
    assert scores["P@1"] == pytest.approx((0 + 1) / 2)


def test_a_gain_map_sorts_the_ideal_ranking_by_gain(tmp_path: Path) -> None:
    scores = score(write(tmp_path, ["nDCG", "DCG@2"], extra='gains = { "4" = 1, "2" = 6 }'))
    # q1: d1 (gain 1) at rank 3 of an ideal [1]; q2: d4 (gain 6) at rank 1 of an ideal [6].
    assert scores["nDCG"] == pytest.approx((1 / 2 + 1) / 2)
    assert scores["DCG@2"] == pytest.approx((0 + 6) / 2)


def with_format(path: Path, settings: str) -> Path:
    path.write_text(
        path.read_text().replace("[[subtasks]]", f"[format]\n{settings}\n\n[[subtasks]]")
    )
    return path


def validated(path: Path) -> tuple[Any, Any, Any, Any]:
    definition = load_definition_file(path)
    family = get_family("trec")
    ctx = Context(definition, definition.subtasks[0], "test")
    gold = family.load_gold({"qrels": QRELS.encode()}, ctx)
    verdict = family.validate_file(io.BytesIO(RUN), gold, ctx, lenient=False, options={})
    return family, gold, ctx, verdict


def test_over_limit_truncate_scores_the_first_results_by_score_with_a_warning(
    tmp_path: Path,
) -> None:
    path = with_format(
        write(tmp_path, ["MAP", "num_ret"]), 'max_per_query = 2\nover_limit = "truncate"'
    )
    family, gold, ctx, verdict = validated(path)
    assert not verdict.errors
    assert any("'q1' (3)" in w.message and "trec_eval -M" in w.message for w in verdict.warnings)
    scores = {k: r.raw for k, r in family.score(verdict.parsed, gold).items()}
    # q1 keeps u1 and d2 (d1, its relevant document, was third): MAP (0 + 1) / 2.
    assert scores == {"MAP": pytest.approx(0.5), "num_ret": 4}
    limit, _ = family.run_lines(gold, ctx)
    assert limit == 2 * 2 * 2 + 1000


def test_over_limit_refuse_is_the_default_and_other_values_are_refused(tmp_path: Path) -> None:
    path = with_format(write(tmp_path, ["MAP"]), "max_per_query = 2")
    _, _, _, verdict = validated(path)
    assert any("'q1' has 3 lines" in e.message for e in verdict.errors)
    path = with_format(write(tmp_path, ["MAP"]), 'over_limit = "cut"')
    error = refusal(path)
    assert error.key == "format" and "refuse, truncate" in error.message


def test_gm_bpref_and_counts_resample_as_trec_eval_aggregates_them(tmp_path: Path) -> None:
    family = get_family("trec")
    definition = load_definition_file(write(tmp_path, ["gm_bpref", "num_q", "set_P"]))
    ctx = Context(definition, definition.subtasks[0], "test")
    gold = family.load_gold({"qrels": QRELS.encode()}, ctx)
    stored = {"q1": 0.5, "q2": 0.0}
    _, rows = family.unit_rows("gm_bpref", gold, StoredScore(stored))
    assert isinstance(rows, SummedRows)
    # trec_eval: exp of the mean log, each value floored at 0.00001.
    assert rows.value() == pytest.approx(math.sqrt(0.5 * 0.00001))
    _, counts = family.unit_rows("num_q", gold, StoredScore({"q1": 1.0, "q2": 1.0}))
    assert counts.value() == 2.0
    _, means = family.unit_rows("set_P", gold, StoredScore(stored))
    assert means.value() == pytest.approx(0.25)


def test_a_measure_key_longer_than_the_score_tables_take_is_refused(tmp_path: Path) -> None:
    levels = ",".join(f"0.{i}" for i in range(1, 10)) + ",0.95,0.99,1.0"
    error = refusal(write(tmp_path, ["MAP", f"11pt_avg[{levels}]"], official="MAP"))
    assert error.key == "subtasks[0].measures"
    assert "at most 64" in error.message
