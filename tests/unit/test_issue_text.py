"""Issues name their line once, whether or not the validator's message names it too."""

from __future__ import annotations

import pytest

from leaderboard.formats.issues import Issue, located

ROWS = [
    # CQA, TREC, items, generation: "Line N: ..." is the validators' habit.
    (3, "Line 3: score 'x' is bad.", "line 3: score 'x' is bad.", "score 'x' is bad."),
    (12, "line 12: bad", "line 12: bad", "bad"),
    # A message naming its line in a sentence stays whole, with no second label.
    (5, "Line 5 is empty.", "Line 5 is empty.", "Line 5 is empty."),
    (3, "headlines line 3 is empty.", "headlines line 3 is empty.", "headlines line 3 is empty."),
    # A message that does not name its line gets the label once.
    (7, "ID mismatch: gold (q, a)", "line 7: ID mismatch: gold (q, a)", "ID mismatch: gold (q, a)"),
    # Another line's number is not this line's prefix.
    (4, "Line 40: x", "line 4: Line 40: x", "Line 40: x"),
    (4, "Line 4,5: x", "line 4: Line 4,5: x", "Line 4,5: x"),
    # Validators may print large numbers with separators.
    (1234, "Line 1,234: bad", "line 1234: bad", "bad"),
    (1234, "source, line 1,234: bad", "source, line 1,234: bad", "source, line 1,234: bad"),
    (5, "Line 5, column 3 is bad", "Line 5, column 3 is bad", "Line 5, column 3 is bad"),
    (
        None,
        "Expected 3 lines, found 2.",
        "Expected 3 lines, found 2.",
        "Expected 3 lines, found 2.",
    ),
]


@pytest.mark.parametrize(("line", "message", "text", "detail"), ROWS)
def test_text_names_the_line_once(line: int | None, message: str, text: str, detail: str) -> None:
    issue = Issue(line, message)
    assert issue.text == text
    assert issue.detail == detail
    assert issue.as_dict() == {"line": line, "message": detail}


def test_located_splits_label_and_message() -> None:
    assert located(3, "Line 3: bad") == ("line 3", "bad")
    assert located(3, "bad") == ("line 3", "bad")
    assert located(3, "Line 3 is empty.") == ("", "Line 3 is empty.")
    assert located(None, "bad") == ("", "bad")
