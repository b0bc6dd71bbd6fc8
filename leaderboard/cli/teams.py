"""Teams for organizers: the participants table, rename, merge, withdraw, approve, add members."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

#: The participants table's formats, spelled out so that option parsing loads no service.
FORMAT_NAMES = ("csv", "json", "latex", "md")


@click.command("teams")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="md", show_default=True)
@with_appcontext
def teams_cmd(fmt: str) -> None:
    """Print the participants table: teams with runs (withdrawn ones left out), affiliation, members, subtasks."""
    from leaderboard.services.results.participants import PARTICIPANT_FORMATS, participants

    with common.session() as session:
        text = PARTICIPANT_FORMATS[fmt](participants(session))
    click.echo(text, nl=not text.endswith("\n"))


def _team_id(session: Session, name: str) -> int:
    from leaderboard.services.accounts.core import find_team

    return find_team(session, name).id


@common.change_command("rename-team", click.argument("old"), click.argument("new"))
def rename_team_cmd(s: Session, old: str, new: str) -> str:
    """Rename a team (frozen tables keep the old name)."""
    from leaderboard.services.teams.admin import rename_team

    team = rename_team(s, _team_id(s, old), new, actor=common.actor())
    return f"Renamed team {old!r} to {team.name!r}."


@common.change_command(
    "merge-teams",
    click.argument("source", metavar="FROM"),
    click.argument("target", metavar="INTO"),
)
def merge_teams_cmd(s: Session, source: str, target: str) -> str:
    """Move every member and run of team FROM into team INTO and delete FROM."""
    from leaderboard.services.teams.admin import merge_teams

    team = merge_teams(s, _team_id(s, source), _team_id(s, target), actor=common.actor())
    return f"Merged team {source!r} into {team.name!r}."


@common.change_command("withdraw-team", click.argument("name"))
def withdraw_team_cmd(s: Session, name: str) -> str:
    """Withdraw a team: its runs leave every live table and export."""
    from leaderboard.services.teams.admin import withdraw_team

    return f"Withdrew team {withdraw_team(s, _team_id(s, name), actor=common.actor()).name!r}."


@common.change_command("approve-team", click.argument("name"))
def approve_team_cmd(s: Session, name: str) -> str:
    """Approve a team created in approval mode."""
    from leaderboard.services.teams.admin import approve_team

    return f"Approved team {approve_team(s, _team_id(s, name), actor=common.actor()).name!r}."


@common.change_command("add-member", click.argument("team"), click.argument("email"))
def add_member_cmd(s: Session, team: str, email: str) -> str:
    """Add an account without a team to TEAM (its captain if it has none), in any registration mode."""
    from leaderboard.services.teams.admin import add_member

    member = add_member(s, _team_id(s, team), email, actor=common.actor())
    name = member.team.name if member.team is not None else team
    role = " as its captain" if member.is_captain else ""
    return f"Added {member.email} to team {name!r}{role}."


COMMANDS = [
    teams_cmd,
    rename_team_cmd,
    merge_teams_cmd,
    withdraw_team_cmd,
    approve_team_cmd,
    add_member_cmd,
]
