"""Segment files: every message with its line, and lines read exactly as sacrebleu reads files."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.formats.issues import MAX_KEPT_ERRORS, Issue
from leaderboard.formats.segments import check_references, parse_segments, validate_output


def sacrebleu_lines(data: bytes) -> list[str]:
    """Return the lines as sacrebleu's CLI reads a file: utils.smart_open then rstrip()."""
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n")
    return [line.rstrip() for line in stream]


@pytest.mark.parametrize(
    "data",
    [
        b"a\nb\n",
        b"a\nb",
        b"a\n\n",
        b"a \t\nb  \n",
        b"a\r\nb\r\n",
        b"a\r\nb",
        b"\n",
        b"x\n\n\n",
        "caf\u00e9\u3000\nb\u2028c\n".encode(),
        "\u00a0lead\u00a0\nend\u00a0\n".encode(),
    ],
)
def test_accepted_lines_are_what_sacrebleu_reads(data: bytes) -> None:
    expected = sacrebleu_lines(data)
    segments, errors, _ = validate_output(data, len(expected))
    assert errors == []
    assert segments == expected


def test_line_counts_match_the_sacrebleu_command(tmp_path: Path) -> None:
    # The command itself: a hypothesis with a final empty line has one line more than without.
    ref = tmp_path / "ref"
    ref.write_bytes(b"a b c\nd e f\ng\n")
    for data, ok in (
        (b"a b c\nd e f\ng", True),
        (b"a b c\nd e f\ng\n", True),
        (b"a\nb\nc\n\n", False),
    ):
        hyp = tmp_path / "hyp"
        hyp.write_bytes(data)
        argv = [str(Path(sys.executable).parent / "sacrebleu"), str(ref), "-i", str(hyp), "-b"]
        done = subprocess.run(argv, capture_output=True, text=True)
        assert (done.returncode == 0) is ok, done.stderr
        segments, errors, _ = validate_output(data, 3)
        assert (segments is not None) is ok, errors


def test_a_wrong_line_count_names_both_counts() -> None:
    data = b"x\n" * 9_998
    segments, errors, warnings = validate_output(data, 10_000)
    assert segments is None and warnings == []
    assert errors == [
        Issue(
            None,
            "The file has 9,998 lines; the source has 10,000 segments: one output line per "
            "source line.",
        )
    ]
    _, errors, _ = validate_output(b"", 1)
    assert errors[0].message.startswith("The file has 0 lines; the source has 1 segment:")


def test_empty_lines_are_one_warning_naming_them() -> None:
    lines = ["a", "", "b", " ", "", "c", "", "", "", ""]
    segments, errors, warnings = validate_output("\n".join(lines).encode() + b"\n", 10)
    assert errors == [] and segments is not None
    assert segments[1] == "" and segments[3] == ""
    assert warnings == [
        Issue(
            2,
            "7 empty output lines (line 2, 4, 5, 7, 8, …); they are scored as empty text.",
            "warning",
        )
    ]
    _, _, warnings = validate_output(b"a\n\n", 2)
    assert [w.message for w in warnings] == [
        "1 empty output line (line 2); it is scored as empty text."
    ]


def test_bad_utf8_names_every_line_and_its_first_bad_byte() -> None:
    data = b"ok\nab\xffcd\xfe\ncaf\xc3\n\xed\xa0\x80\nfine"
    segments, errors, _ = validate_output(data, 5)
    assert segments is None
    assert errors == [
        Issue(2, "Line 2: byte 3 (0xff) is not valid UTF-8; save the file as UTF-8."),
        Issue(3, "Line 3: byte 4 (0xc3) is not valid UTF-8; save the file as UTF-8."),
        Issue(4, "Line 4: byte 1 (0xed) is not valid UTF-8; save the file as UTF-8."),
    ]


def test_bad_utf8_and_a_wrong_count_are_reported_together() -> None:
    _, errors, _ = validate_output(b"\xff\nb\n", 3)
    assert [e.line for e in errors] == [1, None]
    assert errors[1].message.startswith("The file has 2 lines; the source has 3 segments")


def test_errors_are_kept_up_to_the_cap_then_counted() -> None:
    n = MAX_KEPT_ERRORS + 5
    _, errors, _ = validate_output(b"\xff\n" * n, n)
    assert len(errors) == MAX_KEPT_ERRORS + 1
    assert errors[-1] == Issue(None, "… and 5 more errors.")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            b"a\x00b",
            "Line 2: control character U+0000 (NUL) at character 2; a segment is plain text on one line.",
        ),
        (
            b"\x1b[31mred",
            "Line 2: control character U+001B (ESC) at character 1; a segment is plain text on one line.",
        ),
        (
            b"a\rb",
            "Line 2: control character U+000D (CR) at character 2; a segment is plain text on one line.",
        ),
        (
            b"ab\x7f",
            "Line 2: control character U+007F (DEL) at character 3; a segment is plain text on one line.",
        ),
        (
            "x\u0085y".encode(),
            "Line 2: control character U+0085 (control character) at character 2; a segment is plain text on one line.",
        ),
    ],
)
def test_control_characters_are_errors_with_line_and_position(line: bytes, message: str) -> None:
    segments, errors, _ = validate_output(b"ok\n" + line + b"\nok\n", 3)
    assert segments is None
    assert errors == [Issue(2, message)]


def test_tabs_are_text() -> None:
    segments, errors, _ = validate_output(b"a\tb\n", 1)
    assert errors == [] and segments == ["a\tb"]


def test_crlf_is_a_warning_and_the_cr_goes_as_sacrebleu_strips_it() -> None:
    segments, errors, warnings = validate_output(b"a\r\nb\r\nc\n", 3)
    assert errors == [] and segments == ["a", "b", "c"]
    assert warnings == [
        Issue(
            1,
            "2 lines end in CR LF (Windows line endings; line 1, 2); the CR was removed, as "
            "sacrebleu does.",
            "warning",
        )
    ]


def test_a_byte_order_mark_is_removed_with_a_warning() -> None:
    segments, errors, warnings = validate_output(b"\xef\xbb\xbfHallo Welt\n", 1)
    assert errors == [] and segments == ["Hallo Welt"]
    assert warnings == [
        Issue(None, "The file starts with a UTF-8 byte-order mark; it was removed.", "warning")
    ]
    # Only at the start: elsewhere U+FEFF is a character of the text.
    segments, _, warnings = validate_output("a\n\ufeffb\n".encode(), 2)
    assert segments == ["a", "\ufeffb"] and warnings == []


def test_organizer_files_name_the_role_and_line() -> None:
    segments, issues = parse_segments(b"x\n\xff\n", "reference newstest.de")
    assert segments is None
    assert issues == [
        Issue(
            2,
            "reference newstest.de, line 2: byte 1 (0xff) is not valid UTF-8; save the file as "
            "UTF-8.",
        )
    ]
    assert parse_segments(b"", "source") == (
        None,
        [Issue(None, "source: the file is empty; it needs one segment per line.")],
    )
    segments, issues = parse_segments(b"\xef\xbb\xbfx\r\n\ny\r\n", "source")
    assert segments == ["x", "", "y"]
    assert issues == [
        Issue(
            None, "source: the file starts with a UTF-8 byte-order mark; it was removed.", "warning"
        ),
        Issue(
            1,
            "source: 2 lines end in CR LF (Windows line endings; line 1, 3); the CR was removed, as sacrebleu does.",
            "warning",
        ),
        Issue(2, "source: 1 empty segment (line 2); it is scored as empty text.", "warning"),
    ]
    segments, issues = parse_segments(b"a\x00\n", "source")
    assert segments is None
    assert issues == [
        Issue(
            1,
            "source, line 1: control character U+0000 (NUL) at character 2; a segment is plain text on one line.",
        )
    ]


def test_references_of_different_lengths_name_each_count() -> None:
    refs = [["a"] * 3, ["b"] * 2, ["c"] * 3]
    assert check_references(refs, 3, ["r1.de", "r2.de", "r3.de"]) == [
        Issue(
            None,
            "The reference files must have one line per source segment (3 segments): r1.de has "
            "3 lines; r2.de has 2 lines; r3.de has 3 lines.",
        )
    ]
    assert check_references([["a"]], 2)[0].message.endswith("reference 1 has 1 line.")
    assert check_references(refs[:1], 3) == []
    assert check_references([], 3) == [Issue(None, "At least one reference file is needed.")]
