"""The organizer's team list: approve, rename, merge, withdraw and delete teams, add members."""

from __future__ import annotations

from typing import Protocol

from flask import Blueprint, flash, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user
from sqlalchemy.orm import Session

from leaderboard.models import Team
from leaderboard.services.accounts.core import create_team, find_team
from leaderboard.services.common import settings as site_settings
from leaderboard.services.teams import admin as team_admin
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.changes import confirmed_change
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import (
    AddMemberForm,
    ConfirmForm,
    MergeTeamForm,
    NewTeamForm,
    RenameTeamForm,
    filled,
)
from leaderboard.web.common.guards import organizer_post, organizer_required

bp = Blueprint("organizer_teams", __name__, url_prefix="/organizer/teams")


def _actor() -> str:
    return str(current_user.email)


def _back() -> ResponseReturnValue:
    return redirect(url_for("organizer_teams.teams"))


class _TeamChange(Protocol):
    """A ``team_admin`` change of one team: approve or withdraw it."""

    def __call__(self, session: Session, team_id: int, *, actor: str) -> Team: ...


def _change_team(change: _TeamChange, team_id: int, outcome: str) -> ResponseReturnValue:
    """Apply a confirmed change to one team, flash "Team <name> <outcome>." and go back."""
    return confirmed_change(
        lambda session: change(session, team_id, actor=_actor()),
        lambda team: f"Team {team.name} {outcome}.",
        "organizer_teams.teams",
    )


@bp.route("/")
@organizer_required
def teams() -> ResponseReturnValue:
    """List every team with its members, state and number of runs, and the actions on it."""
    session = db()
    rows = team_admin.team_overview(session)
    return render_template(
        "organizer/teams.html",
        rows=rows,
        mode=site_settings.registration(session),
        confirm=ConfirmForm(),
        rename=RenameTeamForm(),
        merge=MergeTeamForm(),
        add_member=AddMemberForm(),
        new_team=NewTeamForm(),
    )


@organizer_post(bp, "/new")
def new_team() -> ResponseReturnValue:
    """Create a team, as ``leaderboard create-team`` does."""
    form = NewTeamForm()
    filled(form, "Give the new team's name (field name).")
    with unit_of(db()):
        team = create_team(db(), form.name.data or "", actor=_actor())
    flash(f"Team {team.name} created; add its members below.", "info")
    return _back()


@organizer_post(bp, "/<int:team_id>/approve")
def approve(team_id: int) -> ResponseReturnValue:
    """Approve a team: its members may upload runs."""
    return _change_team(team_admin.approve_team, team_id, "approved")


@organizer_post(bp, "/<int:team_id>/rename")
def rename(team_id: int) -> ResponseReturnValue:
    """Rename a team."""
    form = RenameTeamForm()
    filled(form, "Give the team's new name.")
    with unit_of(db()):
        team = team_admin.rename_team(db(), team_id, form.name.data or "", actor=_actor())
    flash(f"Team renamed to {team.name}.", "info")
    return _back()


@organizer_post(bp, "/<int:team_id>/merge")
def merge(team_id: int) -> ResponseReturnValue:
    """Merge a team into another: members and runs move, the slots must not collide."""
    session = db()
    form = MergeTeamForm()
    filled(form, "Give the name of the team to merge into.")
    source = team_admin.team_by_id(session, team_id).name
    into = find_team(session, (form.into.data or "").strip()).id
    with unit_of(session):
        target = team_admin.merge_teams(session, team_id, into, actor=_actor())
    flash(f"Team {source} merged into {target.name}.", "info")
    return _back()


@organizer_post(bp, "/<int:team_id>/members")
def add_member(team_id: int) -> ResponseReturnValue:
    """Add an account without a team to a team (its captain if it has none)."""
    form = AddMemberForm()
    filled(form, "Give the e-mail address of the account to add.")
    session = db()
    with unit_of(session):
        member = team_admin.add_member(session, team_id, form.email.data or "", actor=_actor())
    team = team_admin.team_by_id(session, team_id)
    role = " as its captain" if member.is_captain else ""
    # A flash is plain text: U+2068 ... U+2069 isolate the names as <bdi> would.
    flash(f"\u2068{member.email}\u2069 added to team \u2068{team.name}\u2069{role}.", "info")
    return _back()


@organizer_post(bp, "/<int:team_id>/withdraw")
def withdraw(team_id: int) -> ResponseReturnValue:
    """Withdraw a team: its runs leave every live table and export."""
    return _change_team(team_admin.withdraw_team, team_id, "withdrawn")


@organizer_post(bp, "/<int:team_id>/delete")
def delete(team_id: int) -> ResponseReturnValue:
    """Delete a team with no members and no runs."""
    return confirmed_change(
        lambda session: team_admin.delete_team(session, team_id, actor=_actor()),
        lambda name: f"Team {name} deleted.",
        "organizer_teams.teams",
    )
