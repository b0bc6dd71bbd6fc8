"""A definition's lists of subtasks, sets and groups: each member a table with a slug."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.tasks.definition import DefinitionError, parse_definition


def definition(subtasks: Any) -> dict[str, Any]:
    """Return a minimal raw definition with ``subtasks`` as given."""
    return {
        "slug": "t",
        "title": "T",
        "family": "x",
        "measures": ["M"],
        "official_measure": "M",
        "subtasks": subtasks,
    }


def refused(raw: dict[str, Any]) -> DefinitionError:
    """Return the refusal of ``raw`` by a family with one required gold and named parts."""
    with pytest.raises(DefinitionError, match=r"^\S+: ") as caught:
        parse_definition(raw, None, {"gold": False}, group_keys={"parts": ("gold",)})
    return caught.value


def test_a_definition_without_subtasks_is_refused() -> None:
    error = refused(definition([]))
    assert (error.key, error.message) == ("subtasks", "must define at least one subtask")


def test_a_subtask_that_is_not_a_table_is_refused() -> None:
    error = refused(definition(["A"]))
    assert (error.key, error.message) == ("subtasks[0]", "must be a table")


def test_a_subtask_without_a_valid_slug_is_refused() -> None:
    assert refused(definition([{"sets": []}])).key == "subtasks[0].slug"
    error = refused(definition([{"slug": "a b", "sets": []}]))
    assert (error.key, error.message) == (
        "subtasks[0].slug",
        "'a b' is not a valid slug (letters, digits, - _ .)",
    )


def test_a_subtask_without_sets_is_refused() -> None:
    error = refused(definition([{"slug": "A", "sets": []}]))
    assert (error.key, error.message) == (
        "subtasks[0].sets",
        "must define at least one evaluation set",
    )


def test_a_set_that_is_not_a_table_is_refused() -> None:
    error = refused(definition([{"slug": "A", "sets": ["test"]}]))
    assert (error.key, error.message) == ("subtasks[0].sets[0]", "must be a table")


def test_a_set_without_a_slug_is_refused() -> None:
    error = refused(definition([{"slug": "A", "sets": [{"title": "Test"}]}]))
    assert (error.key, error.message) == ("subtasks[0].sets[0].slug", "is required")


def test_a_group_that_is_not_a_table_is_refused() -> None:
    sets = [{"slug": "test", "parts": ["headlines"]}]
    error = refused(definition([{"slug": "A", "sets": sets}]))
    assert (error.key, error.message) == ("subtasks[0].sets[0].parts[0]", "must be a table")


def test_a_group_without_a_valid_slug_is_refused() -> None:
    sets = [{"slug": "test", "parts": [{"slug": "", "gold": "g.txt"}]}]
    error = refused(definition([{"slug": "A", "sets": sets}]))
    assert error.key == "subtasks[0].sets[0].parts[0].slug"
