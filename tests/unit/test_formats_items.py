"""The item-per-line format: gold parser, strict validator, lenient importer, value parsers."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.formats.issues import MAX_KEPT_ERRORS, Issue
from leaderboard.formats.items import (
    DecimalParser,
    ItemGold,
    LabelParser,
    import_lenient,
    parse_gold,
    validate_run,
)

LABELS = LabelParser(["positive", "negative", "neutral"], {"pos": "positive", "neg": "negative"})
DECIMAL = DecimalParser()


def gold_of(data: bytes, parser=LABELS) -> ItemGold:
    gold, errors = parse_gold(data, parser)
    assert gold is not None, errors
    return gold


GOLD = gold_of(b"a\tpositive\nb\tnegative\nc\tneutral\n")


def messages(issues: list[Issue]) -> list[tuple[int | None, str]]:
    return [(issue.line, issue.message) for issue in issues]


# ------------------------------------------------------------------------------ value parsers


def test_labels_match_exactly_and_aliases_map_to_declared_labels() -> None:
    assert [LABELS(t) for t in ("positive", "negative", "neutral", "pos", "neg")] == [0, 1, 2, 0, 1]
    for wrong in ("Positive", "positive ", "", "POS"):
        with pytest.raises(ValueError, match="is not declared") as info:
            LABELS(wrong)
        assert repr(wrong) in str(info.value)
        assert "'positive', 'negative', 'neutral'; aliases 'pos', 'neg'" in str(info.value)


@pytest.mark.parametrize(
    ("labels", "aliases", "message"),
    [
        ([], {}, "at least one label"),
        (["a", "a"], {}, "more than once: 'a'"),
        (["a b"], {}, "without whitespace"),
        ([""], {}, "without whitespace"),
        (["a"], {"x": "b"}, "'b', which is not a declared label"),
        (["a", "b"], {"a": "b"}, "is a declared label"),
        (["a"], {"x y": "a"}, "without spaces"),
    ],
)
def test_label_declarations_are_checked(labels, aliases, message) -> None:
    with pytest.raises(ValueError, match=message):
        LabelParser(labels, aliases)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1.0),
        ("-2.5", -2.5),
        ("+0.5", 0.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("2.5E-2", 0.025),
        ("-0", 0.0),
        ("1e-400", 0.0),
        ("007", 7.0),
    ],
)
def test_plain_decimals_are_accepted(text: str, value: float) -> None:
    assert DECIMAL(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nan",
        "NaN",
        "inf",
        "-Infinity",
        "0x1p3",
        "1_000",
        "١٢",
        "1e",
        ".",
        "e5",
        "+-1",
        " 1",
        "1,5",
        "1.2.3",
        "½",
    ],
)
def test_other_numbers_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a decimal number"):
        DECIMAL(text)


def test_numbers_beyond_the_float_range_are_refused() -> None:
    with pytest.raises(ValueError, match="'1e999' is beyond the range of a float"):
        DECIMAL("1e999")


# ------------------------------------------------------------------------------------- gold


def test_gold_keeps_file_order_and_ignores_comments_and_blank_lines() -> None:
    gold = gold_of(b"# header\r\n\r\nz 1.5\r\n  \r\na\t-2\r\n#x\r\nm\t1e1", DECIMAL)
    assert gold.ids == ("z", "a", "m") and gold.index == {"z": 0, "a": 1, "m": 2}
    assert gold.values.dtype == np.float64 and gold.values.tolist() == [1.5, -2.0, 10.0]
    assert len(gold) == 3
    labels = gold_of(b"a pos\nb neutral\n").values
    assert labels.dtype == np.int64 and labels.tolist() == [0, 2]


def test_gold_reports_every_problem_at_once() -> None:
    data = b"a\tpositive\nb\nc positive extra\na\tnegative\nd\tbad\ne \xff\n"
    gold, errors = parse_gold(data, LABELS)
    assert gold is None
    assert messages(errors) == [
        (
            2,
            "Line 2: expected 2 fields (id and value, separated by a TAB or spaces), found 1: 'b'.",
        ),
        (
            3,
            "Line 3: expected 2 fields (id and value, separated by a TAB or spaces), found 3: "
            "'c positive extra'.",
        ),
        (4, "Line 4: id 'a' is given twice (first on line 1)."),
        (
            5,
            "Line 5: label 'bad' is not declared (allowed: 'positive', 'negative', 'neutral'; "
            "aliases 'pos', 'neg').",
        ),
        (6, "Line 6: not valid UTF-8 (byte 0xFF at column 3)."),
    ]


@pytest.mark.parametrize("data", [b"", b"\n\n", b"# only a comment\n"])
def test_a_gold_without_items_is_refused(data: bytes) -> None:
    assert parse_gold(data, LABELS) == (None, [Issue(None, "The gold file has no item.")])


# ------------------------------------------------------------------------------ strict runs


def test_a_valid_run_in_any_order_is_aligned_with_the_gold() -> None:
    values, errors, warnings = validate_run(
        b"# run header\nc neutral\na\tpos\nb negative", GOLD, LABELS
    )
    assert errors == [] and warnings == []
    assert values is not None and values.tolist() == [0, 1, 2]


def test_gold_ids_may_be_given_as_a_sequence() -> None:
    values, errors, _ = validate_run(b"y 2\nx 1\n", ["x", "y"], DECIMAL)
    assert errors == [] and values is not None and values.tolist() == [1.0, 2.0]


def test_a_run_reports_every_problem_with_its_line_and_value() -> None:
    data = b"a\tpositive\na\tnegative\nzz\tneutral\nb\tPositive\nb\n\tneutral\n\xc3(\tneutral\n"
    values, errors, warnings = validate_run(data, GOLD, LABELS)
    assert values is None and warnings == []
    assert messages(errors) == [
        (2, "Line 2: id 'a' is given twice (first on line 1)."),
        (3, "Line 3: id 'zz' is not in the gold data."),
        (
            4,
            "Line 4: label 'Positive' is not declared (allowed: 'positive', 'negative', "
            "'neutral'; aliases 'pos', 'neg').",
        ),
        (
            5,
            "Line 5: expected 2 fields (id and value, separated by a TAB or spaces), found 1: 'b'.",
        ),
        (
            6,
            "Line 6: expected 2 fields (id and value, separated by a TAB or spaces), found 1: "
            "'\\tneutral'.",
        ),
        (7, "Line 7: not valid UTF-8 (byte 0xC3 at column 1)."),
        (None, "1 gold id (of 3) is missing from the run: 'c'."),
    ]


def test_an_empty_id_is_an_error() -> None:
    _, errors, _ = validate_run(b"\tpositive\n", ["", "a"], LABELS)
    assert messages(errors)[0] == (
        1,
        "Line 1: expected 2 fields (id and value, separated by a TAB or spaces), found 1: "
        "'\\tpositive'.",
    )


def test_missing_ids_are_one_message_naming_the_first_five() -> None:
    ids = [f"i{k}" for k in range(20)]
    _, errors, _ = validate_run(b"i3 1\n", ids, DECIMAL)
    assert messages(errors) == [
        (
            None,
            "19 gold ids (of 20) are missing from the run: 'i0', 'i1', 'i2', 'i4', 'i5' and "
            "14 more.",
        )
    ]
    _, errors, _ = validate_run(b"i0 1\n", ["i0", "i1"], DECIMAL)
    assert messages(errors) == [(None, "1 gold id (of 2) is missing from the run: 'i1'.")]


@pytest.mark.parametrize("data", [b"", b"# header only\n", b"\n"])
def test_a_run_without_items_is_one_error(data: bytes) -> None:
    values, errors, _ = validate_run(data, GOLD, LABELS)
    assert values is None and messages(errors) == [(None, "The file has no item line.")]


def test_long_values_and_ids_are_cut_in_messages() -> None:
    _, errors, _ = validate_run(b"a " + b"x" * 500 + b"\n" + b"y" * 500 + b" pos\n", GOLD, LABELS)
    assert all(len(issue.message) < 400 for issue in errors)
    assert "'xxxxxxxx" in errors[0].message and "…'" in errors[0].message


def test_warnings_crlf_blank_lines_and_byte_order_mark_are_accepted() -> None:
    data = b"\xef\xbb\xbfa\tpositive\r\n\r\nb\tnegative\r\n\r\nc\tneutral\r\n"
    values, errors, warnings = validate_run(data, GOLD, LABELS)
    assert errors == [] and values is not None and values.tolist() == [0, 1, 2]
    assert [(w.line, w.message, w.severity) for w in warnings] == [
        (None, "The file starts with a byte-order mark; it was ignored.", "warning"),
        (None, "The file has CRLF line endings; they were read as Unix (LF) ones.", "warning"),
        (2, "2 blank lines were ignored (the first is line 2).", "warning"),
    ]
    _, _, warnings = validate_run(b"a pos\rb neg\rc neutral\r", GOLD, LABELS)
    assert "CR line endings" in warnings[0].message


def test_spaces_tabs_and_a_missing_final_newline_are_silently_accepted() -> None:
    values, errors, warnings = validate_run(b"  a   pos \t\nb\t \tneg\nc neutral", GOLD, LABELS)
    assert values is not None and errors == [] and warnings == []


def test_other_whitespace_is_not_a_separator_in_strict_mode() -> None:
    _, errors, _ = validate_run("a\u00a0positive\nb neg\nc neutral\n".encode(), GOLD, LABELS)
    assert errors[0].message.startswith("Line 1: expected 2 fields")


def test_errors_beyond_the_kept_ones_are_counted_but_missing_ids_always_said() -> None:
    data = b"".join(b"x%d positive\n" % k for k in range(MAX_KEPT_ERRORS + 250))
    values, errors, _ = validate_run(data, GOLD, LABELS)
    assert values is None
    assert len(errors) == MAX_KEPT_ERRORS + 2
    assert [e.line for e in errors[:3]] == [1, 2, 3]
    assert errors[-2:] == [
        Issue(None, "3 gold ids (of 3) are missing from the run: 'a', 'b', 'c'."),
        Issue(None, "… and 250 more errors not listed."),
    ]


def test_an_id_with_a_refused_value_is_not_also_missing() -> None:
    _, errors, _ = validate_run(b"a\tpositive\nb\tPOS\n", GOLD, LABELS)
    assert [e.line for e in errors] == [2, None]
    assert errors[-1].message == "1 gold id (of 3) is missing from the run: 'c'."


# ---------------------------------------------------------------------------- lenient import


def test_lenient_import_says_what_it_tolerated() -> None:
    data = "\ufeff# system output\r\n\r\nc\u00a0neutral\r\nb  neg\r\na\tpositive".encode()
    result = import_lenient(data, GOLD, LABELS)
    assert result.ok and result.errors == []
    assert result.values is not None and result.values.tolist() == [0, 1, 2]
    assert result.tolerated == (
        "A byte-order mark at the start of the file was ignored.",
        "CRLF line endings were read as Unix (LF) ones.",
        "The last line had no final newline.",
        "1 header or comment line was ignored (starting with '#').",
        "1 blank line was ignored.",
        "1 line was separated by spaces, or had spaces around the fields.",
        "1 line was separated by whitespace other than spaces and TABs.",
        "The lines were not in gold order; they were matched by id.",
    )


def test_lenient_import_of_a_clean_run_tolerates_nothing() -> None:
    result = import_lenient(b"a\tpositive\nb\tnegative\nc\tneutral\n", GOLD, LABELS)
    assert result.ok and result.tolerated == ()


def test_lenient_import_still_refuses_unscorable_runs() -> None:
    result = import_lenient(b"# h\na pos\na neg\nq pos\nc nope\n", GOLD, LABELS)
    assert not result.ok and result.values is None
    assert [e.line for e in result.errors] == [3, 4, 5, None]
    assert result.tolerated == (
        "1 header or comment line was ignored (starting with '#').",
        "4 lines were separated by spaces, or had spaces around the fields.",
    )


def test_a_clean_run_out_of_order_is_read_in_bulk_and_said_to_be_out_of_order() -> None:
    result = import_lenient(b"#id\tlabel\nb\tnegative\na\tpositive\nc\tneutral\n", GOLD, LABELS)
    assert result.values is not None and result.values.tolist() == [0, 1, 2]
    assert result.tolerated == (
        "1 header or comment line was ignored (starting with '#').",
        "The lines were not in gold order; they were matched by id.",
    )


def test_bulk_reading_falls_back_to_lines_for_every_error() -> None:
    # Clean layout, but a duplicate, an unknown id and a bad value: the line checks name them.
    data = b"a\tpositive\na\tnegative\nq\tneutral\nc\tnope\n"
    _, errors, _ = validate_run(data, GOLD, LABELS)
    assert [e.line for e in errors] == [2, 3, 4, None]
    gold, errors = parse_gold(b"x\t1\nx\t2\n", DECIMAL)
    assert gold is None and [e.message for e in errors] == [
        "Line 2: id 'x' is given twice (first on line 1)."
    ]


def test_a_clean_space_separated_run_is_accepted_and_its_spaces_reported_leniently() -> None:
    data = b"c neutral\nb negative\na positive\n"
    values, errors, warnings = validate_run(data, GOLD, LABELS)
    assert values is not None and values.tolist() == [0, 1, 2] and not errors and not warnings
    assert import_lenient(data, GOLD, LABELS).tolerated == (
        "3 lines were separated by spaces, or had spaces around the fields.",
        "The lines were not in gold order; they were matched by id.",
    )


def test_a_line_with_two_separators_and_one_with_none_are_not_paired_up() -> None:
    # Equal separator totals must not let the bulk reader pair fields across lines.
    values, errors, _ = validate_run(b"a\tpositive\tb\nnegative\nc\tneutral\n", GOLD, LABELS)
    assert values is None
    assert [e.line for e in errors[:2]] == [1, 2]
    assert "found 3" in errors[0].message and "found 1" in errors[1].message
    gold, errors = parse_gold(b"a positive b\nnegative\n", LABELS)
    assert gold is None and [e.line for e in errors] == [1, 2]
