"""Commands built by change_command: their help and their parameters, in the order given."""

from __future__ import annotations

import click
from click.testing import CliRunner

from leaderboard.cli.common import change_command


@change_command(
    "rename-thing",
    click.argument("old"),
    click.argument("new"),
    click.option("--quiet", is_flag=True, help="Say nothing."),
)
def rename_thing(session: object, old: str, new: str, quiet: bool) -> str:
    """Rename a thing (its history keeps the old name)."""
    return f"{old} -> {new}"


def test_the_command_is_named_and_documented_by_its_change() -> None:
    result = CliRunner().invoke(rename_thing, ["--help"])
    assert result.exit_code == 0
    assert "Usage: rename-thing [OPTIONS] OLD NEW" in result.output
    assert "Rename a thing (its history keeps the old name)." in result.output
    assert "--quiet  Say nothing." in result.output


def test_the_parameters_keep_the_order_they_are_given_in() -> None:
    assert [p.name for p in rename_thing.params] == ["old", "new", "quiet"]
