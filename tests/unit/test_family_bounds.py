"""Every family's validation reads an upload within bounds derived from the gold, and keeps few errors."""

from __future__ import annotations

import io
from typing import IO, Any

import pytest

from leaderboard.formats.trec import TrecSettings
from leaderboard.tasks.definition import PRESETS_DIR
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Family, Verdict
from leaderboard.tasks.families.trec import TrecGold
from leaderboard.tasks.loading import load_definition_file
from tests.helpers.streams import CountingStream
from tests.runs import gold_lines

CQA_GOLD_C = PRESETS_DIR / (
    "semeval2016-task3/gold/test/SemEval2016-Task3-CQA-QL-test.xml.subtaskC.relevancy"
)


def preset(task: str, subtask: str, set_slug: str = "test") -> tuple[Family, Context, Any]:
    """Return a preset subtask's family, context and gold, read from the package."""
    definition = load_definition_file(PRESETS_DIR / task / "task.toml")
    sub = definition.subtask(subtask)
    assert sub is not None
    family = get_family(definition.family)
    ctx = Context(definition, sub, set_slug)
    setdef = sub.set(set_slug)
    assert setdef is not None
    files = {role: definition.file_path(p).read_bytes() for role, p in setdef.files.items()}
    return family, ctx, family.load_gold(files, ctx)


def validate(family: Family, ctx: Context, gold: Any, inputs: dict[str, IO[bytes]]) -> Verdict:
    return family.validate(inputs, gold, ctx, lenient=False, options={})


@pytest.mark.parametrize("lenient", [False, True])
def test_cqa_run_with_more_lines_than_the_gold_allows_is_refused_while_read(lenient: bool) -> None:
    family, ctx, gold = preset("semeval2016-task3", "C")
    q, c, *_ = gold_lines(CQA_GOLD_C)[0]
    source = CountingStream(f"{q}\t{c}\t0\t0.5\ttrue\n".encode())
    verdict = family.validate({"file": source}, gold, ctx, lenient=lenient, options={})  # type: ignore[dict-item]
    assert [e.message for e in verdict.errors] == [
        "The file has more than 14,100 lines; a run for subtask C (test) has one line per "
        "candidate, 7,000 lines. Nothing was stored."
    ]
    assert source.taken < 2 << 20


def test_cqa_gzip_bomb_is_refused_before_it_is_inflated() -> None:
    family, ctx, gold = preset("semeval2016-task3", "C")
    source = CountingStream(b"x" * 4000 + b"\n", gzipped=True)
    verdict = validate(family, ctx, gold, {"file": source})  # type: ignore[dict-item]
    (error,) = verdict.errors
    assert error.message.startswith("The file is larger than 14,438,400 bytes when decompressed")
    assert source.taken < 1 << 20


def test_cqa_keeps_a_bounded_number_of_errors_and_counts_the_rest() -> None:
    family, ctx, gold = preset("semeval2016-task3", "C")
    data = b"not a run line\n" * 14_000
    verdict = validate(family, ctx, gold, {"file": io.BytesIO(data)})
    assert verdict.parsed is None
    # Two file-level errors (line count, missing candidates) and the first 1,000 line errors.
    assert len(verdict.errors) == 1002
    assert verdict.more_errors == 13_000
    assert verdict.errors[2].message.startswith("Line 1: expected 5 TAB-separated columns")
    assert verdict.errors[-1].line == 1000


def test_sts_part_file_is_bounded_by_its_line_count() -> None:
    family, ctx, gold = preset("semeval2016-task1", "en")
    source = CountingStream(b"2.5\n")
    verdict = validate(family, ctx, gold, {"headlines": source})  # type: ignore[dict-item]
    assert [e.message for e in verdict.errors] == [
        "headlines: the file has more than 3,096 lines; a run file for headlines has one score "
        "per line, 1,498 lines. Nothing was stored."
    ]
    assert source.taken < 2 << 20


def test_sts_archive_is_bounded_by_what_its_parts_need() -> None:
    family, ctx, gold = preset("semeval2016-task1", "en")
    bound = family.input_bounds(gold, ctx)["archive"]
    parts = family.input_bounds(gold, ctx)
    assert bound.max_bytes == sum(b.max_bytes for k, b in parts.items() if k != "archive") + (
        4 << 20
    )
    source = CountingStream(b"\0" * 512, gzipped=True)
    verdict = validate(family, ctx, gold, {"archive": source})  # type: ignore[dict-item]
    (error,) = verdict.errors
    assert error.message.startswith(f"The archive is larger than {bound.max_bytes:,} bytes")
    assert source.taken < 2 << 20


def test_trec_run_is_bounded_by_topics_times_depth() -> None:
    family, ctx, _gold = preset("trec-car-2017", "passage")
    topics = frozenset({"t1", "t2", "t3"})
    gold = TrecGold(topics, {}, {}, TrecSettings(max_per_query=10))
    bound = family.input_bounds(gold, ctx)["file"]
    assert bound.max_lines == 3 * 10 + 1000
    line = b"".join(f"{t} Q0 {'a' * 40} 1 1.5 tag\n".encode() for t in sorted(topics))
    source = CountingStream(line)
    verdict = validate(family, ctx, gold, {"file": source})  # type: ignore[dict-item]
    assert [e.message for e in verdict.errors] == [
        "The file has more than 1,030 lines; a run for subtask passage (test) ranks at most "
        "10 results for each of 3 topics. Nothing was stored."
    ]


def test_trec_stops_at_once_when_one_topic_has_far_too_many_lines() -> None:
    family, ctx, gold = preset("trec-car-2017", "passage")
    topic = sorted(gold.topics)[0]
    source = CountingStream(f"{topic} Q0 {'ab' * 20} 1 1.5 tag\n".encode())
    verdict = validate(family, ctx, gold, {"file": source})  # type: ignore[dict-item]
    (error,) = verdict.errors
    assert error.message.startswith(f"Query '{topic[:60]}")
    assert "has more than 2,000 lines by line" in error.message
    assert error.message.endswith("at most 1,000 are allowed. Checking stopped there.")
    assert source.taken < 8 << 20  # two read blocks, not the whole bound of two million lines
