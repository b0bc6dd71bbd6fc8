"""Fuzz the segment readers: a verdict every time, and accepted lines are what sacrebleu reads."""

from __future__ import annotations

import io

from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats.segments import BOM, parse_segments, validate_output
from leaderboard.scoring.generation import score_run
from tests.fuzz import FUZZ, check_issues, fuzz_input

VALID = "Der Hund läuft schnell.\n東京は大きい。\nمرحبا بالعالم\ne\u0301 👍🏽 ok\n\nlast line\n".encode()
N_SOURCE = 6
REFERENCES = [["the dog runs", "Tokyo is big", "hello world", "ok", "empty", "last line"]]


def sacrebleu_lines(data: bytes) -> list[str]:
    """Return the lines as sacrebleu's CLI reads a file (without the BOM we remove)."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n")
    return [line.rstrip() for line in stream]


@FUZZ
@given(st.one_of(fuzz_input(VALID), st.just(VALID)))
@example(b"")
@example(b"\xef\xbb\xbf")
@example(b"\r\n" * N_SOURCE)
@example(b"a\rb\n" * N_SOURCE)
@example(b"\n" * N_SOURCE)
@example(b"\xff\n" * 2000)
def test_validate_output_gives_a_verdict(data: bytes) -> None:
    segments, errors, warnings = validate_output(data, N_SOURCE)
    check_issues(errors)
    check_issues(warnings)
    assert all(e.severity == "error" for e in errors)
    assert all(w.severity == "warning" for w in warnings)
    assert len(errors) <= 1_001
    event("accepted" if segments is not None else "refused")
    if segments is None:
        assert errors
        return
    assert errors == []
    assert segments == sacrebleu_lines(data)
    assert len(segments) == N_SOURCE
    if any(not s for s in segments):
        assert sum("empty output line" in w.message for w in warnings) == 1
    scores = score_run(segments, REFERENCES, ["BLEU", "chrF"])
    assert all(0.0 <= s.score <= 100.0 for s in scores.values())


@FUZZ
@given(st.one_of(fuzz_input(VALID), st.just(VALID)))
@example(b"")
@example(b"\xef\xbb\xbf\n")
def test_parse_segments_gives_a_verdict(data: bytes) -> None:
    segments, issues = parse_segments(data, "reference ref.de")
    check_issues(issues)
    errors = [i for i in issues if i.severity == "error"]
    event("accepted" if segments is not None else "refused")
    if segments is None:
        assert errors
        return
    assert errors == []
    assert segments and segments == sacrebleu_lines(data)
