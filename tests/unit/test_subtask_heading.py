"""A subtask is headed "Subtask A: title" once, whatever its title already says."""

from __future__ import annotations

import pytest

from leaderboard.tasks.definition import subtask_heading


@pytest.mark.parametrize(
    ("slug", "title", "heading"),
    [
        ("A", "Question–Comment Similarity", "Subtask A: Question–Comment Similarity"),
        ("A", "Subtask A: message polarity", "Subtask A: message polarity"),
        ("A", "subtask a — polarity", "subtask a — polarity"),
        ("A", "A: polarity", "Subtask A: polarity"),
        ("A", "A simple task", "Subtask A: A simple task"),
        ("A", "Subtask AB: other", "Subtask A: Subtask AB: other"),
        ("en-de", "Subtask en-de: news", "Subtask en-de: news"),
        ("en", "English STS", "Subtask en: English STS"),
        ("A", "A", "Subtask A"),
        ("A", "", "Subtask A"),
    ],
)
def test_heading(slug: str, title: str, heading: str) -> None:
    assert subtask_heading(slug, title) == heading
