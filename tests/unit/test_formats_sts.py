"""STS run format: gold parsing, strict validation (spec 4 rows 1-17), lenient import, scoring."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

from leaderboard.formats.issues import Issue
from leaderboard.formats.sts import (
    StsGold,
    StsSetSpec,
    parse_gold,
    parse_lenient_file,
    validate_file,
    validate_run,
)
from leaderboard.tasks.families.sts import CONSTANT_ON_SCORED_NOTE, measure_results, score_run

# The STS 2016 sets as settings, with the line counts of spec 3.
AA = StsSetSpec("answer-answer", 1572, "STS2016.input.answer-answer.txt", ascii_hint=True)
HL = StsSetSpec("headlines", 1498, "STS2016.input.headlines.txt", ascii_hint=True)
PL = StsSetSpec("plagiarism", 1271, "STS2016.input.plagiarism.txt", ascii_hint=True)
PE = StsSetSpec("postediting", 3287, "STS2016.input.postediting.txt", ascii_hint=True)
QQ = StsSetSpec("question-question", 1555, "STS2016.input.question-question.txt", ascii_hint=True)
NEWS = StsSetSpec("news", 301, "STS.input.news.txt")
MULTI = StsSetSpec("multisource", 2973, "STS.input.multi.txt", filtered_lines=294)
SMALL = StsSetSpec("headlines", 6, "STS2016.input.headlines.txt", ascii_hint=True)


def score_lines(n: int) -> list[str]:
    """Return n valid, non-constant scores inside 0-5: 0, 1, 2, 3, 4, 5, 0, ..."""
    return [str(i % 6) for i in range(n)]


def file_of(lines: list[str], end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


def messages(issues: list[Issue]) -> list[str]:
    return [issue.message for issue in issues]


# --- strict validation: every row of the spec 4 table, with the spec's example message ---------


def test_row1_missing_and_unknown_set() -> None:
    values, errors, _ = validate_run(
        {"news": file_of(score_lines(301)), "foo": b"1\n"}, [NEWS, MULTI]
    )
    assert values is None
    assert messages(errors) == [
        "foo: no such evaluation set in this subtask (expected news, multisource).",
        "multisource: no output file was given.",
    ]


def test_row1_spec_example_headlines() -> None:
    _, errors, _ = validate_run({}, [HL])
    assert messages(errors) == ["headlines: no output file was given."]


def test_row2_empty_file() -> None:
    verdict = validate_file(b"", PL)
    assert verdict.values is None
    assert messages(verdict.errors) == ["plagiarism: the file is empty."]


def test_row2_only_blank_lines_counts_as_empty() -> None:
    verdict = validate_file(b"\n \n\t\n", PL)
    assert messages(verdict.errors) == ["plagiarism: the file is empty."]


def test_row3_invalid_utf8() -> None:
    lines = [s.encode() for s in score_lines(3287)]
    lines[39] = b"3.5\xe9"
    verdict = validate_file(b"\n".join(lines) + b"\n", PE)
    assert verdict.errors == [
        Issue(40, "postediting line 40: not valid UTF-8 (byte 0xE9 at column 4).")
    ]


def test_row4_unexpected_character() -> None:
    lines = score_lines(301)
    lines[6] = "3\u00a0"
    verdict = validate_file(file_of(lines), NEWS)
    assert verdict.errors == [Issue(7, "news line 7: unexpected character U+00A0 at column 2.")]


@pytest.mark.parametrize("char", ["\x00", "\x0b", "\x0c", "\x7f", "\u00e9"])
def test_row4_control_and_non_ascii_characters(char: str) -> None:
    lines = score_lines(6)
    lines[1] = "1" + char
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.errors) == [
        f"headlines line 2: unexpected character U+{ord(char):04X} at column 2."
    ]


def test_row5_line_too_long() -> None:
    lines = score_lines(1572)
    lines[2] = "1" + " " * 4096
    verdict = validate_file(file_of(lines), AA)
    assert verdict.errors == [Issue(3, "answer-answer line 3 is longer than 4096 bytes.")]


def test_row5_exactly_4096_bytes_is_accepted() -> None:
    lines = score_lines(6)
    lines[2] = "2" + " " * 4095
    verdict = validate_file(file_of(lines), SMALL)
    assert verdict.errors == []


def test_row6_one_line_too_many_gets_ascii_hint() -> None:
    verdict = validate_file(file_of(score_lines(1499)), HL)
    assert messages(verdict.errors) == [
        "headlines: expected 1,498 lines (one per pair of STS2016.input.headlines.txt), found "
        "1,499. If you scored every line of the .ascii input, remove the last line: it belongs "
        "to the extra empty line at the end of the .ascii file."
    ]


def test_row6_other_counts_get_no_hint() -> None:
    verdict = validate_file(file_of(score_lines(1497)), HL)
    assert messages(verdict.errors) == [
        "headlines: expected 1,498 lines (one per pair of STS2016.input.headlines.txt), found "
        "1,497."
    ]
    no_hint = validate_file(file_of(score_lines(302)), NEWS)
    assert messages(no_hint.errors) == [
        "news: expected 301 lines (one per pair of STS.input.news.txt), found 302."
    ]


def test_row7_filtered_multisource() -> None:
    verdict = validate_file(file_of(score_lines(294)), MULTI)
    assert messages(verdict.errors) == [
        "multisource: expected 2,973 lines (one per line of STS.input.multi.txt), found 294. "
        "Submit the unfiltered output; the server selects the evaluated pairs."
    ]


def test_row8_empty_line_inside() -> None:
    lines = score_lines(1555)
    lines[51] = ""
    verdict = validate_file(file_of(lines), QQ)
    assert verdict.errors == [
        Issue(52, "question-question line 52 is empty; every pair needs a score.")
    ]


def test_row8_whitespace_only_line_inside_is_empty() -> None:
    lines = score_lines(6)
    lines[0] = " \t "
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.errors) == ["headlines line 1 is empty; every pair needs a score."]


def test_row9_second_column() -> None:
    lines = score_lines(1572)
    lines[0] = "3.2\t80"
    verdict = validate_file(file_of(lines), AA)
    assert verdict.errors == [
        Issue(1, "answer-answer line 1: expected one number, found 2 fields ('3.2', '80').")
    ]


def test_row9_many_fields_are_listed_up_to_five() -> None:
    lines = score_lines(6)
    lines[3] = "1 2 3 4 5 6 7"
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.errors) == [
        "headlines line 4: expected one number, found 7 fields ('1', '2', '3', '4', '5', …)."
    ]


def test_row10_not_a_number() -> None:
    lines = score_lines(1271)
    lines[16] = "abc"
    verdict = validate_file(file_of(lines), PL)
    assert verdict.errors == [Issue(17, "plagiarism line 17: 'abc' is not a number.")]


@pytest.mark.parametrize(
    "token", ["#", "#3", "# a comment", "2,5", "0x1A", "1_000", "--1", "1e", "e5", ".", "1.2.3"]
)
def test_row10_not_a_number_forms(token: str) -> None:
    lines = score_lines(6)
    lines[1] = token
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.errors) == [f"headlines line 2: '{token}' is not a number."]


@pytest.mark.parametrize("token", ["nan", "NaN", "-nan", "inf", "-inf", "+Infinity", "1e400"])
def test_row11_non_finite(token: str) -> None:
    lines = score_lines(6)
    lines[2] = token
    verdict = validate_file(file_of(lines), SMALL)
    assert verdict.errors == [
        Issue(3, f"headlines line 3: score '{token}' must be a finite number.")
    ]


def test_row11_spec_example() -> None:
    lines = score_lines(1498)
    lines[2] = "nan"
    verdict = validate_file(file_of(lines), HL)
    assert messages(verdict.errors) == ["headlines line 3: score 'nan' must be a finite number."]


def test_row12_constant_file() -> None:
    verdict = validate_file(file_of(["2.5"] * 3287), PE)
    assert verdict.values is None
    assert messages(verdict.errors) == [
        "postediting: all 3,287 scores are 2.5; a correlation cannot be computed for constant "
        "output."
    ]


def test_row12_equal_values_written_differently_are_constant() -> None:
    verdict = validate_file(file_of(["3", "3.0", "3e0", "+3", "3.", "30e-1"]), SMALL)
    assert messages(verdict.errors) == [
        "headlines: all 6 scores are 3; a correlation cannot be computed for constant output."
    ]


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("3", 3.0),
        ("3.75", 3.75),
        ("-0.2", -0.2),
        (".5", 0.5),
        ("1e-3", 0.001),
        ("3.", 3.0),
        ("+2", 2.0),
        ("1E+2", 100.0),
    ],
)
def test_row4_step_number_forms_accepted(token: str, value: float) -> None:
    lines = ["1", "2", token, "4", "5", "0"]
    verdict = validate_file(file_of(lines), SMALL)
    assert verdict.errors == []
    assert verdict.values is not None
    assert verdict.values.tolist() == [1.0, 2.0, value, 4.0, 5.0, 0.0]


def test_row13_bom_removed_with_warning() -> None:
    verdict = validate_file(b"\xef\xbb\xbf" + file_of(score_lines(301)), NEWS)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "news: the file started with a byte-order mark; it was removed."
    ]
    assert verdict.values is not None and verdict.values[0] == 0.0


def test_row14_crlf_normalised() -> None:
    verdict = validate_file(file_of(score_lines(2973), end="\r\n"), MULTI)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "multisource: Windows (CRLF) line endings were normalised."
    ]
    assert verdict.values is not None and len(verdict.values) == 2973


def test_row14_bare_cr_normalised() -> None:
    verdict = validate_file(file_of(score_lines(6), end="\r"), SMALL)
    assert verdict.errors == []
    assert messages(verdict.warnings) == ["headlines: old Mac (CR) line endings were normalised."]


def test_row15_one_trailing_empty_line() -> None:
    verdict = validate_file(file_of(score_lines(1498)) + b"\n", HL)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "headlines: 1 empty line at the end of the file was ignored."
    ]


def test_row15_several_trailing_blank_lines() -> None:
    verdict = validate_file(file_of(score_lines(6)) + b"\n  \n\t\n", SMALL)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "headlines: 3 empty lines at the end of the file were ignored."
    ]


def test_no_final_newline_is_fine() -> None:
    verdict = validate_file(file_of(score_lines(6)).rstrip(b"\n"), SMALL)
    assert verdict.errors == [] and verdict.warnings == []
    assert verdict.values is not None and verdict.values.tolist() == [0, 1, 2, 3, 4, 5]


def test_row16_leading_spaces() -> None:
    lines = score_lines(1572)
    for i in range(4, 16):  # lines 5..16
        lines[i] = " " + lines[i]
    verdict = validate_file(file_of(lines), AA)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "answer-answer: 12 lines (first: line 5) have leading spaces; they were trimmed. Note: "
        "the 2016 scorer read such lines as 0."
    ]
    assert verdict.values is not None and verdict.values[4] == 4.0


def test_row16_trailing_tabs_and_single_line() -> None:
    lines = score_lines(6)
    lines[1] = "1\t"
    lines[2] = "\t 2"
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.warnings) == [
        "headlines: 1 line (line 3) has leading spaces or TABs; it was trimmed. Note: the 2016 "
        "scorer read such a line as 0.",
        "headlines: 1 line (line 2) has trailing TABs; it was trimmed.",
    ]


def test_row17_values_outside_range() -> None:
    lines = score_lines(1271)
    for i, token in [(87, "5.3"), (90, "-1"), (100, "7"), (200, "5.0001")]:
        lines[i] = token
    verdict = validate_file(file_of(lines), PL)
    assert verdict.errors == []
    assert messages(verdict.warnings) == [
        "plagiarism: 4 scores (first: line 88, '5.3') are outside 0–5; they are accepted "
        "(Pearson correlation ignores scale)."
    ]


def test_row17_single_value_outside_range() -> None:
    lines = score_lines(6)
    lines[5] = "5.1"
    verdict = validate_file(file_of(lines), SMALL)
    assert messages(verdict.warnings) == [
        "headlines: 1 score (line 6, '5.1') is outside 0–5; it is accepted (Pearson correlation "
        "ignores scale)."
    ]


def test_all_errors_reported_at_once_with_warnings() -> None:
    data = b"\xef\xbb\xbfabc\r\n1 2\r\n\r\nnan\r\n4\r\n"
    verdict = validate_file(data, SMALL)
    assert verdict.values is None
    assert verdict.errors == [
        Issue(
            None,
            "headlines: expected 6 lines (one per pair of STS2016.input.headlines.txt), found 5.",
        ),
        Issue(1, "headlines line 1: 'abc' is not a number."),
        Issue(2, "headlines line 2: expected one number, found 2 fields ('1', '2')."),
        Issue(3, "headlines line 3 is empty; every pair needs a score."),
        Issue(4, "headlines line 4: score 'nan' must be a finite number."),
    ]
    assert messages(verdict.warnings) == [
        "headlines: the file started with a byte-order mark; it was removed.",
        "headlines: Windows (CRLF) line endings were normalised.",
    ]


def test_errors_capped_at_25_then_counted_with_slug() -> None:
    lines = ["x"] * 30 + score_lines(1468)
    verdict = validate_file(file_of(lines), HL)
    assert len(verdict.errors) == 26
    assert verdict.errors[0] == Issue(1, "headlines line 1: 'x' is not a number.")
    assert verdict.errors[24].line == 25
    assert verdict.errors[25] == Issue(None, "headlines: … and 5 more errors.")


def test_gzip_file_is_read() -> None:
    verdict = validate_file(gzip.compress(file_of(score_lines(6))), SMALL)
    assert verdict.errors == []
    assert verdict.values is not None and verdict.values.tolist() == [0, 1, 2, 3, 4, 5]


def test_gzip_bomb_is_refused() -> None:
    bomb = gzip.compress(b"1\n" * 10_000_000)  # 20 MB; the 6-line set allows ~1 MB
    verdict = validate_file(bomb, SMALL)
    assert verdict.values is None
    assert len(verdict.errors) == 1
    assert verdict.errors[0].message.startswith("headlines: the file is larger than")


def test_oversized_file_is_refused_before_scanning() -> None:
    # 6 lines * (4096 + 2) + 1 MiB = 1,073,164 bytes at most
    verdict = validate_file(b"1\n" * 600_000, SMALL)
    assert messages(verdict.errors) == [
        "headlines: the file is larger than 1,073,164 bytes; a run file has one short score per "
        "line, 6 lines."
    ]


def test_valid_file_values_are_read_only() -> None:
    verdict = validate_file(file_of(score_lines(6)), SMALL)
    assert verdict.values is not None
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        verdict.values[0] = 9.0


def test_validate_run_accepts_and_collects_warnings() -> None:
    files = {"news": file_of(score_lines(301)) + b"\n", "multisource": file_of(score_lines(2973))}
    values, errors, warnings = validate_run(files, [NEWS, MULTI])
    assert errors == []
    assert values is not None and sorted(values) == ["multisource", "news"]
    assert values["news"][:3].tolist() == [0.0, 1.0, 2.0]
    assert messages(warnings) == ["news: 1 empty line at the end of the file was ignored."]


def test_validate_run_one_bad_file_rejects_all() -> None:
    files = {"news": file_of(score_lines(301)), "multisource": file_of(score_lines(294))}
    values, errors, _ = validate_run(files, [NEWS, MULTI])
    assert values is None
    assert len(errors) == 1 and errors[0].message.startswith("multisource: expected 2,973 lines")


# --- gold ------------------------------------------------------------------------------------


def test_gold_en_style_empty_lines_are_unscored() -> None:
    gold = parse_gold(b"\n4\n\n0\n5\n\n", slug="headlines")
    assert gold.slug == "headlines"
    assert gold.scored_index.tolist() == [1, 3, 4]
    assert gold.values.tolist() == [4.0, 0.0, 5.0]


def test_gold_hash_lines_take_no_position() -> None:
    gold = parse_gold(b"# comment\n\n4\n#x\n2\n", slug="s")
    assert gold.scored_index.tolist() == [1, 2]
    assert gold.values.tolist() == [4.0, 2.0]


def test_gold_crlf_and_bom_and_decimals() -> None:
    gold = parse_gold(b"\xef\xbb\xbf2.2\r\n5\r\n0.417\r\n", slug="news")
    assert gold.scored_index.tolist() == [0, 1, 2]
    assert gold.values.tolist() == [2.2, 5.0, 0.417]


def test_gold_with_mapping_reads_run_line_index_k() -> None:
    gold = parse_gold(b"1\n3\n2\n", slug="multisource", mapping=b"4\n0\n2\n")
    assert gold.scored_index.tolist() == [4, 0, 2]
    assert gold.values.tolist() == [1.0, 3.0, 2.0]


@pytest.mark.parametrize(
    ("gold", "mapping", "message"),
    [
        (
            b"3\n3\n\n3\n",
            None,
            "s: all 3 gold values are 3; a correlation cannot be computed against constant gold.",
        ),
        (b"\n\n", None, "s: the gold has 0 scored pairs; at least 2 are needed."),
        (b"1\nabc\n", None, "s gold line 2: 'abc' is not a finite number."),
        (b"1\nnan\n", None, "s gold line 2: 'nan' is not a finite number."),
        (
            b"1\n2\n",
            b"0\n",
            "s: the mapping file has 1 lines but the gold has 2 values; they "
            "must correspond line by line.",
        ),
        (b"1\n2\n", b"0\n0\n", "s: the mapping file lists a run line more than once."),
        (b"1\n2\n", b"0\n-1\n", "s mapping line 2: '-1' is not a line index (0, 1, ...)."),
        (b"1\n\n2\n", b"0\n1\n2\n", "s gold line 2 is empty; with a mapping every line is scored."),
        (b"1\n\xff\n", None, "s gold: not valid UTF-8"),
    ],
)
def test_gold_refusals(gold: bytes, mapping: bytes | None, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)) as caught:
        parse_gold(gold, slug="s", mapping=mapping)
    assert str(caught.value).startswith(message)


# --- lenient (legacy) import ------------------------------------------------------------------

LENIENT = StsSetSpec("headlines", 5, "STS2016.input.headlines.txt", ascii_hint=True)


def lenient_gold() -> StsGold:
    # positions 1..5; lines 2, 4, 5 are scored with gold 3, 1, 4
    return parse_gold(b"\n3\n\n1\n4\n", slug="headlines")


def test_lenient_unscored_positions_accept_anything() -> None:
    values, refusals, report = parse_lenient_file(b"abc\n2\n\n0.5\n4\n", LENIENT, lenient_gold())
    assert refusals == [] and report == []
    assert values is not None
    assert values[[1, 3, 4]].tolist() == [2.0, 0.5, 4.0]
    assert np.isnan(values[[0, 2]]).all()


def test_lenient_hash_at_unscored_position_is_ignored() -> None:
    values, refusals, _ = parse_lenient_file(b"# note\n2\n#\n0.5\n4\n", LENIENT, lenient_gold())
    assert refusals == []
    assert values is not None and values[[1, 3, 4]].tolist() == [2.0, 0.5, 4.0]


@pytest.mark.parametrize(
    ("line", "value", "note"),
    [
        (b" 3", 0.0, "headlines line 2: ' 3' starts with whitespace; read as 0."),
        (b"\t3", 0.0, "headlines line 2: '\t3' starts with whitespace; read as 0."),
        (b"", 0.0, "headlines line 2: '' is empty; read as 0."),
        (b"2abc", 2.0, "headlines line 2: '2abc': only its numeric prefix was used; read as 2."),
        (b"2,5", 2.0, "headlines line 2: '2,5': only its numeric prefix was used; read as 2."),
        (b"0x1A", 0.0, "headlines line 2: '0x1A': only its numeric prefix was used; read as 0."),
        (b"1_000", 1.0, "headlines line 2: '1_000': only its numeric prefix was used; read as 1."),
        (b"abc", 0.0, "headlines line 2: 'abc' is not a number; read as 0."),
        (b"3.2 80", 3.2, "headlines line 2: '3.2 80': further fields were ignored."),
        (b"3.2\t80", 3.2, "headlines line 2: '3.2\t80': further fields were ignored."),
        (b".5e", 0.5, "headlines line 2: '.5e': only its numeric prefix was used; read as 0.5."),
    ],
)
def test_lenient_coercions_at_scored_positions(line: bytes, value: float, note: str) -> None:
    data = b"x\n" + line + b"\n\n0.5\n4\n"
    values, refusals, report = parse_lenient_file(data, LENIENT, lenient_gold())
    assert refusals == []
    assert values is not None and values[1] == value
    assert report == [note]


def test_lenient_bom_on_scored_first_line_reads_zero() -> None:
    gold = parse_gold(b"3\n1\n", slug="news")
    spec = StsSetSpec("news", 2, "STS.input.news.txt")
    values, refusals, report = parse_lenient_file(b"\xef\xbb\xbf3\n1\n", spec, gold)
    assert refusals == []
    assert values is not None and values.tolist() == [0.0, 1.0]
    assert report == [
        "news line 1: '\ufeff3' is not a number (it starts with a byte-order mark); read as 0."
    ]


def test_lenient_crlf_and_trailing_spaces_need_no_note() -> None:
    values, refusals, report = parse_lenient_file(
        b"x\r\n2 \r\n\r\n1\r\n4\r\n", LENIENT, lenient_gold()
    )
    assert refusals == [] and report == []
    assert values is not None and values[[1, 3, 4]].tolist() == [2.0, 1.0, 4.0]


def test_lenient_lines_after_last_position_are_ignored_and_reported() -> None:
    values, refusals, report = parse_lenient_file(
        b"x\n2\n\n1\n4\nextra\n9\n", LENIENT, lenient_gold()
    )
    assert refusals == []
    assert values is not None and len(values) == 5
    assert report == ["headlines: 2 lines after line 5, the last gold position, were ignored."]


def test_lenient_refuses_fewer_lines_than_gold() -> None:
    values, refusals, _ = parse_lenient_file(b"x\n2\n\n1\n", LENIENT, lenient_gold())
    assert values is None
    assert messages(refusals) == [
        "headlines: the file has 4 lines, fewer than the 5 the gold expects; the 2016 scorer "
        "gave no Pearson correlation for such a file."
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            b"nan",
            "headlines line 2: 'nan' is not finite at a scored position; the 2016 scorer gave NaN.",
        ),
        (
            b"-Inf",
            "headlines line 2: '-Inf' is not finite at a scored position; the 2016 scorer "
            "gave NaN.",
        ),
        (
            b"1e400",
            "headlines line 2: '1e400' overflows to infinity at a scored position; the "
            "2016 scorer gave NaN.",
        ),
        (
            b"#3",
            "headlines line 2: '#3' starts with '#' at a scored position; the 2016 scorer "
            "skipped such a line without consuming the position, which shifts every later pair, "
            "so the file is refused as ambiguous.",
        ),
    ],
)
def test_lenient_refusals_on_scored_lines(line: bytes, message: str) -> None:
    values, refusals, _ = parse_lenient_file(b"x\n" + line + b"\n\n1\n4\n", LENIENT, lenient_gold())
    assert values is None
    assert refusals == [Issue(2, message)]


def test_lenient_refuses_constant_on_scored_positions() -> None:
    values, refusals, _ = parse_lenient_file(b"1\n2\n3\n2\n2\n", LENIENT, lenient_gold())
    assert values is None
    assert messages(refusals) == [
        "headlines: all 3 scored values are 2; the 2016 scorer died on a division by zero."
    ]


def test_lenient_coercions_to_zero_can_make_it_constant() -> None:
    values, refusals, report = parse_lenient_file(b"1\n 2\n3\nabc\n\n", LENIENT, lenient_gold())
    assert values is None
    assert len(report) == 3
    assert messages(refusals) == [
        "headlines: all 3 scored values are 0; the 2016 scorer died on a division by zero."
    ]


LENIENT_MULTI = StsSetSpec("multisource", 6, "STS.input.multi.txt", filtered_lines=3)


def multi_gold() -> StsGold:
    return parse_gold(b"1\n3\n2\n", slug="multisource", mapping=b"4\n0\n2\n")


def test_lenient_multisource_full_file_reads_index_k_lines() -> None:
    data = b"30\nx\n20\nabc\n10\ny\n"
    values, refusals, report = parse_lenient_file(data, LENIENT_MULTI, multi_gold())
    assert refusals == [] and report == []
    assert values is not None
    assert values[[4, 0, 2]].tolist() == [10.0, 30.0, 20.0]


def test_lenient_multisource_filtered_file_is_aligned_with_gold() -> None:
    values, refusals, report = parse_lenient_file(b"10\n30\n20\n\n", LENIENT_MULTI, multi_gold())
    assert refusals == []
    assert values is not None
    assert values[[4, 0, 2]].tolist() == [10.0, 30.0, 20.0]
    assert report == [
        "multisource: read as an already filtered 3-line file aligned with the gold.",
        "multisource: 1 line after line 3, the last gold position, was ignored.",
    ]


def test_lenient_multisource_between_filtered_and_full_is_refused() -> None:
    values, refusals, _ = parse_lenient_file(b"1\n2\n3\n4\n", LENIENT_MULTI, multi_gold())
    assert values is None
    assert messages(refusals) == [
        "multisource: the file has 4 lines, fewer than the 6 the gold expects; the 2016 scorer "
        "gave no Pearson correlation for such a file."
    ]


def test_lenient_and_strict_agree_on_clean_file() -> None:
    data = b"0\n2\n1\n0.5\n4\n"
    strict = validate_file(data, LENIENT)
    lenient, _, _ = parse_lenient_file(data, LENIENT, lenient_gold())
    assert strict.values is not None and lenient is not None
    index = lenient_gold().scored_index
    assert strict.values[index].tolist() == lenient[index].tolist() == [2.0, 0.5, 4.0]


def test_lenient_refuses_gold_of_another_set() -> None:
    with pytest.raises(ValueError, match="gold of set multisource given for set headlines"):
        parse_lenient_file(b"1\n2\n3\n4\n5\n", LENIENT, multi_gold())


# --- scoring ----------------------------------------------------------------------------------


def test_score_run_hand_case() -> None:
    # set a: scored lines 1, 3, 4 (0-based) with gold 0, 1, 1; run there 0, 0, 1 -> r = 0.5
    # set b: all 4 lines scored, gold 1, 2, 3, 4; run 1, 3, 2, 4 -> r = 0.8
    gold_a = parse_gold(b"\n0\n\n1\n1\n", slug="a")
    gold_b = parse_gold(b"1\n2\n3\n4\n", slug="b")
    values = {"a": np.array([9.0, 0, 7, 0, 1]), "b": np.array([1.0, 3, 2, 4])}
    result = score_run(values, {"a": gold_a, "b": gold_b}, {"a": 3, "b": 4})
    assert result["per_set"]["a"] == pytest.approx(0.5, abs=1e-15)
    assert result["per_set"]["b"] == pytest.approx(0.8, abs=1e-15)
    assert result["constant_sets"] == []
    # (3 * 0.5 + 4 * 0.8) / 7 = 4.7 / 7
    assert result["overall"] == pytest.approx(4.7 / 7, abs=1e-15)


def test_score_run_constant_on_scored_pairs_counts_zero() -> None:
    gold_a = parse_gold(b"\n0\n\n1\n1\n", slug="a")
    gold_b = parse_gold(b"1\n2\n3\n4\n", slug="b")
    # a varies on unscored lines only
    values = {"a": np.array([9.0, 2, 7, 2, 2]), "b": np.array([1.0, 3, 2, 4])}
    result = score_run(values, {"a": gold_a, "b": gold_b}, {"a": 3, "b": 4})
    assert result["per_set"]["a"] == 0.0
    assert result["constant_sets"] == ["a"]
    assert result["overall"] == pytest.approx(4 * 0.8 / 7, abs=1e-15)
    assert CONSTANT_ON_SCORED_NOTE == "system output constant on the scored pairs; counted as 0"


def test_measure_results_have_official_strings_flags_and_no_per_query_values() -> None:
    # Pearson is not a mean of per-pair values: no measure carries per-query values.
    gold_a = parse_gold(b"\n0\n\n1\n1\n", slug="a")
    gold_b = parse_gold(b"1\n2\n3\n4\n", slug="b")
    values = {"a": np.array([9.0, 2, 7, 2, 2]), "b": np.array([1.0, 3, 2, 4])}
    results = measure_results(values, {"a": gold_a, "b": gold_b}, {"a": 3, "b": 4}, "ALL")
    assert list(results) == ["ALL", "a", "b"]
    assert [r.official for r in results.values()] == ["0.45714", "0.00000", "0.80000"]
    assert results["a"].flags == ("constant-on-scored",) and results["b"].flags == ()
    assert [r.gold_role for r in results.values()] == ["gold:a", "gold:a", "gold:b"]
    assert all(r.per_query is None for r in results.values())


def test_score_run_multisource_uses_mapping_order() -> None:
    gold = multi_gold()  # run lines 4, 0, 2 carry gold 1, 3, 2
    values = np.array([3.0, 9, 2, 9, 1, 9])
    result = score_run({"multisource": values}, {"multisource": gold}, {"multisource": 3})
    assert result["per_set"]["multisource"] == 1.0


def test_score_run_refuses_short_values_and_missing_sets() -> None:
    gold = parse_gold(b"\n0\n\n1\n1\n", slug="a")
    with pytest.raises(ValueError, match="a: the gold scores run line 5 but the run has 3 lines"):
        score_run({"a": np.array([1.0, 2, 3])}, {"a": gold}, {"a": 3})
    with pytest.raises(ValueError, match="a: the run has no values for this set"):
        score_run({}, {"a": gold}, {"a": 3})
