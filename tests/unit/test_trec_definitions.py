"""TREC definitions: one qrels file or variants, measures by key or trec_eval name, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, ReferenceFileError
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
    with pytest.raises(DefinitionError) as info:
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
        (["MAP", "iPrec@0.15"], SINGLE, "subtasks[0].measures", "iPrec@0.15"),
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
    with pytest.raises(ReferenceFileError) as info:
        family.load_gold({"qrels": b"q1 0 d1 1\nq1 0 d2 high\n"}, ctx)
    assert info.value.role == "qrels"
    assert "Line 2" in info.value.message and "high" in info.value.message
