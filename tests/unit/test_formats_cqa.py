"""CQA gold parser, strict validator, legacy importer and baselines."""

from __future__ import annotations

import re

import numpy as np
import pytest

from leaderboard.formats.cqa import (
    CqaGold,
    CqaRun,
    CqaVerdict,
    GoldFormatError,
    Truncation,
    parse_gold,
    parse_lenient,
    render_run,
    validate_strict,
)
from leaderboard.formats.issues import Issue
from leaderboard.tasks.families.cqa.baselines import baseline_run
from leaderboard.tasks.families.cqa.scoring import score_run

GOLD_TEXT = (
    "Q1\tQ1_C1\t1\t1\ttrue\n"
    "Q1\tQ1_C2\t2\t0.5\tfalse\n"
    "Q1\tQ1_C3\t3\t0.333333333333333\tfalse\n"
    "Q2\tQ2_C1\t1\t1\tfalse\n"
    "Q2\tQ2_C2\t2\t0.5\ttrue\n"
)
GOLD = parse_gold(GOLD_TEXT.encode())
WHERE = "subtask A (test)"

#: A valid run in gold order. Q1 ranks C2 (F), C1 (T), C3 (F): AP 1/2, RR 1/2.
#: Q2 ranks C2 (T), C1 (F): AP 1, RR 1. MAP 0.75, MRR 75.
#: AvgRec: R = (1, 1): AC1(1) = 1/2, AC1(k>=2) = 1 -> 0.95.
#: gold T F F F T vs predicted F T F F T: TP 1, FP 1, FN 1, TN 2 -> P = R = F1 = 0.5, Acc 0.6.
LINES = [
    "Q1\tQ1_C1\t0\t0.2\tfalse",
    "Q1\tQ1_C2\t0\t0.9\ttrue",
    "Q1\tQ1_C3\t0\t0.1\tfalse",
    "Q2\tQ2_C1\t0\t0.3\tfalse",
    "Q2\tQ2_C2\t0\t0.7\ttrue",
]
EXPECTED = {"MAP": 0.75, "AvgRec": 0.95, "MRR": 75.0, "P": 0.5, "R": 0.5, "F1": 0.5, "Acc": 0.6}


def run_bytes(lines: list[str], end: str = "\n") -> bytes:
    return ("".join(line + end for line in lines)).encode()


def replaced(index: int, line: str) -> list[str]:
    return [line if i == index else old for i, old in enumerate(LINES)]


def strict(data: bytes, gold: CqaGold = GOLD) -> CqaVerdict:
    return validate_strict(data, gold, where=WHERE)


def messages(issues: list[Issue]) -> list[str]:
    return [issue.message for issue in issues]


def assert_scores(verdict: CqaVerdict, expected: dict[str, float], gold: CqaGold = GOLD) -> None:
    assert verdict.run is not None
    values = score_run(gold, verdict.run).values
    assert values == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------------------------
# Gold parser


def test_parse_gold_fields() -> None:
    assert len(GOLD) == 5
    assert GOLD.qids == ("Q1", "Q1", "Q1", "Q2", "Q2")
    assert GOLD.cids == ("Q1_C1", "Q1_C2", "Q1_C3", "Q2_C1", "Q2_C2")
    assert GOLD.positions == ("1", "2", "3", "1", "2")
    assert GOLD.ir_scores.tolist() == [1.0, 0.5, 0.333333333333333, 1.0, 0.5]
    assert GOLD.ir_scores.dtype == np.float64
    assert GOLD.labels.tolist() == [True, False, False, False, True]
    assert GOLD.labels.dtype == bool
    assert GOLD.questions == ("Q1", "Q2")
    assert GOLD.question_starts.tolist() == [0, 3]
    assert GOLD.question_starts.dtype == np.int64
    assert GOLD.index[("Q2", "Q2_C1")] == 3
    assert len(GOLD.index) == 5


def test_parse_gold_without_final_newline() -> None:
    gold = parse_gold(GOLD_TEXT.rstrip("\n").encode())
    assert len(gold) == 5


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", None, "empty"),
        ("Q1\tQ1_C1\t1\t1\n", 1, "expected 5 TAB-separated columns, found 4"),
        ("Q1\tQ1_C1\t1\t1\tyes\n", 1, "label 'yes'"),
        ("Q1\tQ1_C1\t1\tx\ttrue\n", 1, "IR score 'x' is not a number"),
        ("Q1\tQ1_C1\t1\t1\ttrue\nQ1\tQ1_C1\t1\t1\tfalse\n", 2, "duplicate pair (Q1, Q1_C1)"),
        (
            "Q1\tQ1_C1\t1\t1\ttrue\nQ2\tQ2_C1\t1\t1\ttrue\nQ1\tQ1_C2\t2\t0.5\tfalse\n",
            3,
            "question 'Q1' occurs in more than one block",
        ),
        ("Q1\tQ1_C1\t1\t1\ttrue\n\n", 2, "found 1"),
    ],
)
def test_parse_gold_errors(text: str, line: int | None, fragment: str) -> None:
    with pytest.raises(GoldFormatError, match=re.escape(fragment)) as caught:
        parse_gold(text.encode())
    assert caught.value.line == line
    assert fragment in caught.value.message


# --------------------------------------------------------------------------------------------
# Strict validation: a valid file


def test_valid_run_is_accepted_without_warnings() -> None:
    verdict = strict(run_bytes(LINES))
    assert verdict.ok
    assert verdict.errors == []
    assert verdict.warnings == []
    assert verdict.run is not None
    assert verdict.run.rows == 5
    assert verdict.run.scores.tolist() == [0.2, 0.9, 0.1, 0.3, 0.7]
    assert verdict.run.predicted.tolist() == [False, True, False, False, True]
    assert_scores(verdict, EXPECTED)


def test_missing_final_newline_is_fine() -> None:
    data = run_bytes(LINES).rstrip(b"\n")
    verdict = strict(data)
    assert verdict.ok and verdict.warnings == []


def test_spaces_around_fields_are_removed_silently() -> None:
    lines = replaced(1, "Q1 \t Q1_C2\t0 \t 0.9\ttrue ")
    verdict = strict(run_bytes(lines))
    assert verdict.ok and verdict.warnings == []
    assert_scores(verdict, EXPECTED)


@pytest.mark.parametrize("score", ["0.5", "-3", ".25", "3.77E+00", "1e-05", "+2", "5.", "1E5"])
def test_accepted_score_syntax(score: str) -> None:
    verdict = strict(run_bytes(replaced(1, f"Q1\tQ1_C2\t0\t{score}\ttrue")))
    assert verdict.ok, verdict.errors
    assert verdict.run is not None
    assert verdict.run.scores[1] == float(score)


# --------------------------------------------------------------------------------------------
# Strict validation: errors (rows 1-14)


@pytest.mark.parametrize("data", [b"", b"   ", b"\n\n", b" \t\r\n \n"])
def test_row1_empty_file(data: bytes) -> None:
    verdict = strict(data)
    assert not verdict.ok and verdict.run is None
    assert verdict.errors == [Issue(None, "The file is empty.")]


def test_row1_bom_only_is_empty() -> None:
    verdict = strict(b"\xef\xbb\xbf\n")
    assert messages(verdict.errors) == ["The file is empty."]


def test_row2_invalid_utf8() -> None:
    data = run_bytes(LINES).replace(b"0.9", b"0.\xff9")
    verdict = strict(data)
    # "Q1\tQ1_C2\t0\t0." is 13 bytes, so the bad byte is column 14; the pair is not "missing".
    assert verdict.errors == [Issue(2, "Line 2: not valid UTF-8 (byte 0xFF at column 14).")]


def test_row3_unexpected_characters() -> None:
    lines = replaced(2, "Q1\tQ1_C3\t0\t0.1\u00a0false")
    lines[3] = "Q2\tQ2_C1\t0\t\u0663\tfalse"
    verdict = strict(run_bytes(lines))
    assert messages(verdict.errors) == [
        "Line 3: unexpected character U+00A0 at column 15; separate columns with a TAB.",
        "Line 4: unexpected character U+0663 at column 12; only printable ASCII characters are "
        "allowed.",
    ]


def test_row3_control_character() -> None:
    verdict = strict(run_bytes(replaced(0, "Q1\tQ1_C1\t0\t0.2\x00\tfalse")))
    assert messages(verdict.errors) == [
        "Line 1: unexpected character U+0000 at column 15; only printable ASCII characters are "
        "allowed."
    ]


def test_row4_line_too_long() -> None:
    prefix = "Q1\tQ1_C1\t0\t0."
    suffix = "\tfalse"
    fits = prefix + "1" * (4096 - len(prefix) - len(suffix)) + suffix
    assert len(fits) == 4096
    assert strict(run_bytes(replaced(0, fits))).ok
    too_long = prefix + "1" * (4097 - len(prefix) - len(suffix)) + suffix
    verdict = strict(run_bytes(replaced(0, too_long)))
    assert verdict.errors == [Issue(1, "Line 1 is longer than 4096 bytes.")]


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_row5_empty_line_inside(blank: str) -> None:
    lines = [*LINES[:2], blank, *LINES[2:]]
    verdict = strict(run_bytes(lines))
    assert messages(verdict.errors) == [
        "Expected 5 lines for subtask A (test), found 6.",
        "Line 3 is empty; every line must describe one candidate.",
    ]
    assert verdict.errors[1].line == 3


def test_row6_column_count() -> None:
    lines = replaced(4, "Q2\tQ2_C2\t0\t0.7")
    lines[0] = "Q1\tQ1_C1\t0\t0.2\tfalse\textra"
    verdict = strict(run_bytes(lines))
    assert messages(verdict.errors) == [
        "Line 1: expected 5 TAB-separated columns (question id, candidate id, rank, score, "
        "label), found 6.",
        "Line 5: expected 5 TAB-separated columns (question id, candidate id, rank, score, "
        "label), found 4.",
    ]


@pytest.mark.parametrize("score", ["0,5", "0x1A", "1_000", "abc", "", "1e", "--1", "1.2.3"])
def test_row7_score_not_a_number(score: str) -> None:
    verdict = strict(run_bytes(replaced(1, f"Q1\tQ1_C2\t0\t{score}\ttrue")))
    assert verdict.errors == [Issue(2, f"Line 2: score '{score}' is not a number.")]


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e400", "NaN", "Infinity", "-1e999"])
def test_row8_score_not_finite(score: str) -> None:
    verdict = strict(run_bytes(replaced(1, f"Q1\tQ1_C2\t0\t{score}\ttrue")))
    assert verdict.errors == [Issue(2, f"Line 2: score '{score}' must be a finite number.")]


@pytest.mark.parametrize("label", ["True", "TRUE", "1", "yes", ""])
def test_row9_label(label: str) -> None:
    verdict = strict(run_bytes(replaced(1, f"Q1\tQ1_C2\t0\t0.9\t{label}")))
    assert verdict.errors == [
        Issue(2, f"Line 2: label '{label}' must be 'true' or 'false' (lower case).")
    ]


def test_row10_unknown_question() -> None:
    verdict = strict(run_bytes(replaced(3, "Q9\tQ2_C1\t0\t0.3\tfalse")))
    assert messages(verdict.errors) == [
        "1 of 5 candidates is missing, in 1 question: Q2 (1 of 2 candidates), e.g. (Q2, Q2_C1).",
        "Line 4: unknown question id 'Q9' for subtask A (test).",
    ]


def test_row11_unknown_candidate() -> None:
    verdict = strict(run_bytes(replaced(0, "Q1\tQ1_C22\t0\t0.2\tfalse")))
    assert messages(verdict.errors) == [
        "1 of 5 candidates is missing, in 1 question: Q1 (1 of 3 candidates), e.g. (Q1, Q1_C1).",
        "Line 1: 'Q1_C22' is not a candidate of question 'Q1'.",
    ]


def test_row12_duplicate_pair() -> None:
    verdict = strict(run_bytes(replaced(4, "Q2\tQ2_C1\t0\t0.5\tfalse")))
    assert messages(verdict.errors) == [
        "1 of 5 candidates is missing, in 1 question: Q2 (1 of 2 candidates), e.g. (Q2, Q2_C2).",
        "Line 5: duplicate pair (Q2, Q2_C1); first given on line 4.",
    ]


def test_row12_and_row14_extra_duplicate_line() -> None:
    verdict = strict(run_bytes([*LINES, LINES[0]]))
    assert messages(verdict.errors) == [
        "Expected 5 lines for subtask A (test), found 6.",
        "Line 6: duplicate pair (Q1, Q1_C1); first given on line 1.",
    ]


def _big_gold(questions: int, candidates: int) -> CqaGold:
    text = "".join(
        f"G{q}\tG{q}_C{c}\t{c}\t{1 / c!r}\t{'true' if c == 1 else 'false'}\n"
        for q in range(1, questions + 1)
        for c in range(1, candidates + 1)
    )
    return parse_gold(text.encode())


def test_row13_and_row14_missing_many_questions() -> None:
    gold = _big_gold(150, 10)
    verdict = strict(b"G1\tG1_C1\t0\t1\ttrue\n", gold)
    assert messages(verdict.errors) == [
        "Expected 1,500 lines for subtask A (test), found 1.",
        "1,499 of 1,500 candidates are missing, in 150 questions: G1 (9 of 10 candidates), "
        "G2 (all 10 candidates), G3 (all 10 candidates), G4 (all 10 candidates), "
        "G5 (all 10 candidates), and 145 more, e.g. (G1, G1_C2).",
    ]
    assert all(issue.line is None for issue in verdict.errors)


def test_row13_whole_question_missing() -> None:
    verdict = strict(run_bytes(LINES[:3]))
    assert messages(verdict.errors) == [
        "Expected 5 lines for subtask A (test), found 3.",
        "2 of 5 candidates are missing, in 1 question: Q2 (all 2 candidates), e.g. (Q2, Q2_C1).",
    ]


def test_row13_question_with_one_candidate() -> None:
    gold = parse_gold(b"Q1\tQ1_C1\t1\t1\ttrue\nQ2\tQ2_C1\t1\t1\tfalse\n")
    verdict = strict(b"Q1\tQ1_C1\t0\t1\ttrue\n", gold)
    assert messages(verdict.errors)[1] == (
        "1 of 2 candidates is missing, in 1 question: Q2 (its only candidate), e.g. (Q2, Q2_C1)."
    )


def test_all_errors_are_reported_and_quoted() -> None:
    long_id = "Q" + "x" * 200
    lines = [
        "Q1\tQ1_C1\t0\tabc\tTrue",
        f"{long_id}\tQ1_C2\t0\t0.9\ttrue",
        *LINES[2:],
    ]
    verdict = strict(run_bytes(lines))
    quoted = "Q" + "x" * 78 + "…"
    assert messages(verdict.errors) == [
        "1 of 5 candidates is missing, in 1 question: Q1 (1 of 3 candidates), e.g. (Q1, Q1_C2).",
        "Line 1: score 'abc' is not a number.",
        "Line 1: label 'True' must be 'true' or 'false' (lower case).",
        f"Line 2: unknown question id '{quoted}' for subtask A (test).",
    ]


def test_errors_never_reveal_gold_labels() -> None:
    # Every line wrong in a way that touches a gold pair: no message may mention a gold label.
    lines = [line.replace("0\t", "x\t", 1) + "\tjunk" for line in LINES]
    verdict = strict(run_bytes([*lines, "Q1\tQ1_C1\t0\t1\tmaybe"]))
    assert verdict.errors
    for message in messages(verdict.errors):
        assert "true" not in message.replace("'true' or 'false'", "")
        assert "false" not in message.replace("'true' or 'false'", "")
        assert "relevant" not in message


# --------------------------------------------------------------------------------------------
# Strict validation: warnings (rows 15-21)


def test_row15_bom() -> None:
    verdict = strict(b"\xef\xbb\xbf" + run_bytes(LINES))
    assert verdict.ok
    assert verdict.warnings == [
        Issue(None, "The file started with a byte-order mark; it was removed.", "warning")
    ]
    assert_scores(verdict, EXPECTED)


def test_row16_crlf() -> None:
    verdict = strict(run_bytes(LINES, end="\r\n"))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "The file uses Windows (CRLF) line endings; they were normalised."
    ]
    assert verdict.warnings[0].severity == "warning"
    assert_scores(verdict, EXPECTED)


def test_row16_lone_cr_is_a_line_break() -> None:
    verdict = strict(run_bytes(LINES, end="\r"))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "The file uses old Mac (CR) line endings; they were normalised."
    ]
    lines = replaced(2, "Q1\tQ1_C3\t0\t0.1\tno")
    bad = strict(run_bytes(lines, end="\r"))
    assert bad.errors == [Issue(3, "Line 3: label 'no' must be 'true' or 'false' (lower case).")]


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("\n", "1 empty line at the end of the file was ignored."),
        ("\n\n", "2 empty lines at the end of the file were ignored."),
        (" \n\t\n\n", "3 empty lines at the end of the file were ignored."),
    ],
)
def test_row17_empty_lines_at_end(tail: str, message: str) -> None:
    verdict = strict(run_bytes(LINES) + tail.encode())
    assert verdict.ok
    assert messages(verdict.warnings) == [message]


def test_row18_spaces_as_separators() -> None:
    spaced = [line.replace("\t", "  ") for line in LINES]
    verdict = strict(run_bytes(spaced))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "5 lines (first: line 1) separate columns with spaces; the format asks for one TAB."
    ]
    assert_scores(verdict, EXPECTED)


def test_row18_single_line_with_double_tab() -> None:
    verdict = strict(run_bytes(replaced(1, "Q1\t\tQ1_C2\t0\t0.9\ttrue")))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "1 line (line 2) separates columns with spaces; the format asks for one TAB."
    ]


def test_row19_non_integer_rank() -> None:
    lines = replaced(1, "Q1\tQ1_C2\t0.00E+00\t0.9\ttrue")
    lines[3] = "Q2\tQ2_C1\tfirst\t0.3\tfalse"
    verdict = strict(run_bytes(lines))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "2 lines (first: line 2) have a non-integer rank such as '0.00E+00'; column 3 is ignored."
    ]
    assert_scores(verdict, EXPECTED)


def test_row19_integer_ranks_are_fine() -> None:
    lines = [
        line.replace("\t0\t", f"\t{rank}\t", 1)
        for line, rank in zip(LINES, ["-1", "+3", "10", "0", "7"], strict=True)
    ]
    verdict = strict(run_bytes(lines))
    assert verdict.ok and verdict.warnings == []


def test_row19_single_line() -> None:
    verdict = strict(run_bytes(replaced(4, "Q2\tQ2_C2\t\t0.7\ttrue")))
    assert messages(verdict.warnings) == [
        "1 line (line 5) has a non-integer rank ''; column 3 is ignored."
    ]


def test_row20_reordered_run_is_resorted() -> None:
    verdict = strict(run_bytes(LINES[::-1]))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "Lines are not in the official order (first difference at line 1). The run was "
        "re-sorted into the official order; equal scores are ranked in official order."
    ]
    assert verdict.run is not None
    assert verdict.run.scores.tolist() == [0.2, 0.9, 0.1, 0.3, 0.7]
    assert_scores(verdict, EXPECTED)


def test_row20_first_difference_line() -> None:
    verdict = strict(run_bytes([*LINES[:3], LINES[4], LINES[3]]))
    assert "(first difference at line 4)" in verdict.warnings[0].message


def test_row20_ties_use_official_order_after_resorting() -> None:
    # Q1 tied at 0.5 and given in reverse: after re-sorting, gold order ranks Q1_C1 (T) first.
    lines = [
        "Q1\tQ1_C3\t0\t0.5\tfalse",
        "Q1\tQ1_C2\t0\t0.5\tfalse",
        "Q1\tQ1_C1\t0\t0.5\tfalse",
        "Q2\tQ2_C1\t0\t0.3\tfalse",
        "Q2\tQ2_C2\t0\t0.7\ttrue",
    ]
    verdict = strict(run_bytes(lines))
    assert verdict.ok
    assert verdict.run is not None
    assert score_run(GOLD, verdict.run).values["MAP"] == 1.0
    assert messages(verdict.warnings)[1] == (
        "In 1 question all candidates have the same score; they are ranked in the official order."
    )


def test_row21_equal_scores() -> None:
    lines = [line.rsplit("\t", 2)[0] + "\t1\t" + line.rsplit("\t", 1)[1] for line in LINES]
    verdict = strict(run_bytes(lines))
    assert verdict.ok
    assert messages(verdict.warnings) == [
        "In 2 questions all candidates have the same score; they are ranked in the official order."
    ]
    # Gold order: Q1 rel T F F (AP 1), Q2 rel F T (AP 1/2) -> MAP 0.75, MRR 75.
    assert verdict.run is not None
    values = score_run(GOLD, verdict.run).values
    assert values["MAP"] == 0.75
    assert values["MRR"] == 75.0


def test_warnings_are_reported_with_errors() -> None:
    lines = [line.replace("\t", " ") for line in replaced(1, "Q1\tQ1_C2\t0\t0.9\tyes")]
    verdict = strict(b"\xef\xbb\xbf" + run_bytes(lines, end="\r\n"))
    assert not verdict.ok and verdict.run is None
    assert messages(verdict.errors) == [
        "Line 2: label 'yes' must be 'true' or 'false' (lower case)."
    ]
    assert messages(verdict.warnings) == [
        "The file started with a byte-order mark; it was removed.",
        "The file uses Windows (CRLF) line endings; they were normalised.",
        "5 lines (first: line 1) separate columns with spaces; the format asks for one TAB.",
    ]


# --------------------------------------------------------------------------------------------
# Lenient (legacy) import


def lenient(data: bytes, *, resort: bool = False) -> CqaVerdict:
    return parse_lenient(data, GOLD, resort=resort)


def test_lenient_plain_run() -> None:
    verdict = lenient(run_bytes(LINES))
    assert verdict.ok
    assert verdict.tolerances == ()
    assert verdict.truncation is None
    assert verdict.warnings == []
    assert_scores(verdict, EXPECTED)


def test_lenient_last_line_without_newline_counts() -> None:
    verdict = lenient(run_bytes(LINES).rstrip(b"\n"))
    assert verdict.ok and verdict.tolerances == ()
    assert_scores(verdict, EXPECTED)


def test_lenient_truncated_prefix_mid_question() -> None:
    # 4 aligned lines: Q1 complete (AP 1/2, RR 1/2), Q2 only C1 (false): AP 0 -> MAP 0.25.
    # AvgRec: R = (1, 0): AC1(1) = 0/1, AC1(k>=2) = 1/1 -> 0.9.
    # Classification over 4 lines: gold T F F F, predicted F T F F -> TP 0: P 0, R 0, Acc 1/2.
    verdict = lenient(run_bytes(LINES[:4]))
    assert verdict.ok
    assert verdict.truncation == Truncation(4, 5, 2, 2)
    assert verdict.tolerances == ("truncated: scored on the first 4 of 5 lines (2 of 2 questions)",)
    expected = {"MAP": 0.25, "AvgRec": 0.9, "MRR": 25.0, "P": 0.0, "R": 0.0, "F1": 0.0, "Acc": 0.5}
    assert_scores(verdict, expected)


def test_lenient_truncated_whole_question() -> None:
    verdict = lenient(run_bytes(LINES[:3]))
    assert verdict.truncation == Truncation(3, 5, 1, 2)
    assert verdict.truncation.note() == (
        "scored on the first 3 of 5 lines (1 of 2 questions), as in the official 2016 evaluation"
    )
    # Only Q1 counts: MAP = 1/2, MRR = 50.
    assert verdict.run is not None and verdict.run.rows == 3
    values = score_run(GOLD, verdict.run).values
    assert values["MAP"] == 0.5
    assert values["MRR"] == 50.0


def test_truncation_note_uses_thousands_separators() -> None:
    assert Truncation(7339, 7369, 249, 250).note() == (
        "scored on the first 7,339 of 7,369 lines (249 of 250 questions), "
        "as in the official 2016 evaluation"
    )


def test_lenient_extra_lines_are_ignored() -> None:
    verdict = lenient(run_bytes([*LINES, "", "anything at all", "  "]))
    assert verdict.ok
    assert verdict.tolerances == ("3 extra lines after the last gold line ignored",)
    assert verdict.truncation is None
    assert_scores(verdict, EXPECTED)


@pytest.mark.parametrize("separator", [" ", "   ", " \t ", "\x0b", "\x0c", "\t\t"])
def test_lenient_any_ascii_whitespace_separates(separator: str) -> None:
    lines = [line.replace("\t", separator) for line in LINES]
    verdict = lenient(run_bytes(lines))
    assert verdict.ok, verdict.errors
    assert verdict.tolerances == (
        "5 lines (first: line 1) separate columns with spaces or other whitespace instead of "
        "one TAB",
    )
    assert_scores(verdict, EXPECTED)


def test_lenient_leading_and_trailing_whitespace() -> None:
    verdict = lenient(run_bytes(replaced(2, "  Q1\tQ1_C3\t0\t0.1\tfalse  ")))
    assert verdict.ok
    assert verdict.tolerances == (
        "1 line (line 3) separates columns with spaces or other whitespace instead of one TAB",
    )


def test_lenient_crlf() -> None:
    verdict = lenient(run_bytes(LINES, end="\r\n"))
    assert verdict.ok
    assert verdict.tolerances == ("Windows (CRLF) line endings on 5 lines",)
    assert_scores(verdict, EXPECTED)


def test_lenient_extra_columns() -> None:
    verdict = lenient(run_bytes(replaced(1, "Q1\tQ1_C2\t0\t0.9\ttrue\t17\tnote")))
    assert verdict.ok
    assert verdict.tolerances == (
        "1 line (line 2) has more than 5 columns; the extra columns were ignored",
    )
    assert_scores(verdict, EXPECTED)


def test_lenient_rank_is_never_read() -> None:
    lines = replaced(0, "Q1\tQ1_C1\t0.00E+00\t0.2\tfalse")
    lines[1] = "Q1\tQ1_C2\tabc\t0.9\ttrue"
    verdict = lenient(run_bytes(lines))
    assert verdict.ok
    assert verdict.tolerances == (
        "2 lines (first: line 1) have a non-integer rank such as '0.00E+00' "
        "(column 3 is never read)",
    )
    assert_scores(verdict, EXPECTED)


@pytest.mark.parametrize(
    ("score", "value"),
    [("+1e+05", 1e5), ("3.77E+00", 3.77), ("inf", float("inf")), ("Infinity", float("inf"))],
)
def test_lenient_python_float_syntax(score: str, value: float) -> None:
    verdict = lenient(run_bytes(replaced(1, f"Q1\tQ1_C2\t0\t{score}\ttrue")))
    assert verdict.ok
    assert verdict.run is not None
    assert verdict.run.scores[1] == value
    assert_scores(verdict, EXPECTED)  # Q1_C2 still has the top score of Q1


def test_lenient_minus_infinity_ranks_last() -> None:
    verdict = lenient(run_bytes(replaced(1, "Q1\tQ1_C2\t0\t-inf\ttrue")))
    assert verdict.run is not None
    # Q1 now ranks C1 (T), C3 (F), C2 (F): AP 1, RR 1; Q2 AP 1 -> MAP 1, MRR 100.
    values = score_run(GOLD, verdict.run).values
    assert values["MAP"] == 1.0
    assert values["MRR"] == 100.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Q1\tQ1_C2\t0\t1_0\ttrue", "Line 2: score '1_0' is not a number."),
        ("Q1\tQ1_C2\t0\tnan\ttrue", "Line 2: score 'nan' is NaN, which cannot be ranked."),
        ("Q1\tQ1_C2\t0\t0x1A\ttrue", "Line 2: score '0x1A' is not a number."),
        ("Q1\tQ1_C2\t0\t0,5\ttrue", "Line 2: score '0,5' is not a number."),
        ("Q1\tQ1_C2\t0\t0.9\tTrue", "Line 2: label 'True' must be 'true' or 'false'."),
        ("Q1\tQ1_C2\t0\t0.9", "Line 2: expected at least 5 columns, found 4."),
        ("", "Line 2 is empty."),
        ("  \t", "Line 2 is empty."),
        ("Q1\tQ1_C3\t0\t0.9\ttrue", "ID mismatch on line 2: gold (Q1, Q1_C2), run (Q1, Q1_C3)"),
    ],
)
def test_lenient_refusals(line: str, message: str) -> None:
    verdict = lenient(run_bytes(replaced(1, line)))
    assert not verdict.ok and verdict.run is None
    assert messages(verdict.errors) == [message]
    assert verdict.errors[0].line == 2


def test_lenient_non_ascii_score_is_refused() -> None:
    data = run_bytes(replaced(1, "Q1\tQ1_C2\t0\t\u0661\ttrue"))
    verdict = lenient(data)
    assert messages(verdict.errors) == ["Line 2: score '\\xd9\\xa1' is not a number."]


def test_lenient_bom_is_an_id_mismatch() -> None:
    verdict = lenient(b"\xef\xbb\xbf" + run_bytes(LINES))
    assert messages(verdict.errors) == [
        "ID mismatch on line 1: gold (Q1, Q1_C1), run (\\xef\\xbb\\xbfQ1, Q1_C1)"
    ]


def test_lenient_misordered_file_is_refused() -> None:
    verdict = lenient(run_bytes(LINES[::-1]))
    assert not verdict.ok
    assert verdict.errors[0].message == ("ID mismatch on line 1: gold (Q1, Q1_C1), run (Q2, Q2_C2)")


def test_lenient_empty_file() -> None:
    assert messages(lenient(b"").errors) == ["The file is empty."]
    # A lone newline is one empty line, which the 2016 scorer crashed on.
    assert messages(lenient(b"\n").errors) == ["Line 1 is empty."]


def test_lenient_resort() -> None:
    shuffled = [LINES[3], LINES[1], LINES[4], LINES[0], LINES[2]]
    assert not lenient(run_bytes(shuffled)).ok
    verdict = lenient(run_bytes(shuffled), resort=True)
    assert verdict.ok
    assert verdict.tolerances == ("re-sorted into the official order (organizer option 'resort')",)
    assert_scores(verdict, EXPECTED)


def test_lenient_resort_of_ordered_file_reports_nothing() -> None:
    verdict = lenient(run_bytes(LINES), resort=True)
    assert verdict.ok and verdict.tolerances == ()


def test_lenient_resort_keeps_line_numbers_and_ignores_unknown_lines() -> None:
    lines = [LINES[1], "Q1\tQ1_C1\t0\t0.2\tmaybe", *LINES[2:], "Q7\tQ7_C1\t0\t1\ttrue"]
    verdict = lenient(run_bytes(lines), resort=True)
    assert messages(verdict.errors) == ["Line 2: label 'maybe' must be 'true' or 'false'."]
    verdict = lenient(run_bytes([*LINES[::-1], "Q7\tQ7_C1\t0\t1\ttrue", ""]), resort=True)
    assert verdict.ok
    assert verdict.tolerances == (
        "re-sorted into the official order (organizer option 'resort')",
        "2 extra lines after the last gold line ignored",
    )


def test_lenient_resort_refuses_missing_pairs() -> None:
    verdict = lenient(run_bytes(LINES[:3] + LINES[4:]), resort=True)
    assert messages(verdict.errors) == [
        "Cannot re-sort: 1 of 5 gold pairs is missing, the first is (Q2, Q2_C1)."
    ]
    verdict = lenient(run_bytes(LINES[:2]), resort=True)
    assert messages(verdict.errors) == [
        "Cannot re-sort: 3 of 5 gold pairs are missing, the first is (Q1, Q1_C3)."
    ]


def test_lenient_resort_refuses_duplicates() -> None:
    verdict = lenient(run_bytes([*LINES, LINES[0]]), resort=True)
    assert verdict.errors == [
        Issue(6, "Cannot re-sort: duplicate pair (Q1, Q1_C1) on line 6; first given on line 1.")
    ]


# --------------------------------------------------------------------------------------------
# Baselines and rendering


def test_baseline_runs() -> None:
    ir = baseline_run(GOLD, "ir")
    assert ir.rows == 5
    assert ir.scores.tolist() == [1.0, 0.5, 0.333333333333333, 1.0, 0.5]
    assert ir.predicted.tolist() == [False] * 5
    # IR order: Q1 rel T F F (AP 1), Q2 rel F T (AP 1/2) -> MAP 0.75, MRR 75; all-false labels:
    # TP 0 -> P = R = F1 = 0, Acc = 3/5.
    values = score_run(GOLD, ir).values
    assert values == pytest.approx(
        {"MAP": 0.75, "AvgRec": 0.95, "MRR": 75.0, "P": 0.0, "R": 0.0, "F1": 0.0, "Acc": 0.6}
    )
    true = baseline_run(GOLD, "true")
    assert true.predicted.tolist() == [True] * 5
    assert true.scores.tolist() == ir.scores.tolist()
    # All true: P = 2/5, R = 1, F1 = 2 * 0.4 / 1.4 = 4/7, Acc = 2/5.
    values = score_run(GOLD, true).values
    assert (values["P"], values["R"], values["Acc"]) == (0.4, 1.0, 0.4)
    assert values["F1"] == pytest.approx(4 / 7, abs=1e-15)
    false = baseline_run(GOLD, "false")
    assert false.predicted.tolist() == [False] * 5
    with pytest.raises(
        ValueError, match="unknown CQA baseline kind 'random'; expected 'ir', 'true' or 'false'"
    ):
        baseline_run(GOLD, "random")


def test_baseline_does_not_share_gold_arrays() -> None:
    run = baseline_run(GOLD, "ir")
    run.scores[0] = 99.0
    assert GOLD.ir_scores[0] == 1.0


def test_render_run_round_trip() -> None:
    run = CqaRun(
        rows=5,
        scores=np.array([0.2, 0.9, 1 / 3, 0.3, 1e-300]),
        predicted=np.array([False, True, False, False, True]),
    )
    data = render_run(GOLD, run)
    assert data.decode().splitlines()[2] == "Q1\tQ1_C3\t0\t0.3333333333333333\tfalse"
    assert data.endswith(b"\n") and b"\r" not in data
    verdict = strict(data)
    assert verdict.ok and verdict.warnings == []
    assert verdict.run is not None
    assert verdict.run.scores.tolist() == run.scores.tolist()
    assert verdict.run.predicted.tolist() == run.predicted.tolist()


def test_score_run_rejects_bad_row_counts() -> None:
    run = CqaRun(rows=6, scores=np.zeros(6), predicted=np.zeros(6, dtype=bool))
    with pytest.raises(ValueError, match="run covers 6 rows; the gold file has 5"):
        score_run(GOLD, run)
