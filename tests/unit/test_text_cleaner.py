"""One cleaner checks every text a user types: stripped, bounded, no control characters."""

from __future__ import annotations

import pytest

from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.common.text import clean_text


def refusal(value: str, **kw: object) -> str:
    with pytest.raises(InvalidInput, match="^The run name ") as refused:
        clean_text(value, "run name", **kw)  # type: ignore[arg-type]
    return refused.value.message


def test_text_is_stripped_and_may_be_empty_unless_required() -> None:
    assert clean_text("  Ünïcode name \t", "run name") == "Ünïcode name"
    assert clean_text("   ", "run name") == ""
    assert refusal("  ", required=True) == "The run name must not be empty."


def test_text_over_its_limit_is_refused_after_stripping() -> None:
    assert clean_text(" " + "x" * 5 + " ", "run name", limit=5) == "xxxxx"
    assert refusal("x" * 6, limit=5) == "The run name is longer than 5 characters."
    assert refusal("x" * 256) == "The run name is longer than 255 characters."


@pytest.mark.parametrize(
    "bad", ["a\x00b", "a\x1bb", "a\x7fb", "a\nb", "a\tb", "a\rb", "a\x85b", "a\u2028b", "a\u2029b"]
)
def test_control_characters_are_refused_in_a_one_line_field(bad: str) -> None:
    assert refusal(bad) == (
        "The run name must not contain control characters or line separators "
        f"(U+{ord(bad[1]):04X} at character 2)."
    )


def test_a_multiline_field_keeps_line_breaks_and_tabs_but_no_other_control() -> None:
    assert clean_text("one\r\ntwo\tthree", "run name", multiline=True) == "one\r\ntwo\tthree"
    assert refusal("one\x00two", multiline=True) == (
        "The run name must not contain control characters or line separators "
        "(U+0000 at character 4)."
    )
    # A line separator breaks a mail header as a line feed does, even in a multi-line field.
    assert refusal("one\u2028two", multiline=True).endswith("(U+2028 at character 4).")
    # Format characters are not controls: names in any script pass.
    assert clean_text("\u200fעברית\u200dx", "run name") == "\u200fעברית\u200dx"
