"""Team rules in the services: names, affiliations, captains, organizers, sizes, deletion."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import JoinRequest, Team, User
from leaderboard.services.accounts import core as accounts
from leaderboard.services.common import settings
from leaderboard.services.common.errors import Conflict, Forbidden, InvalidInput, NotFound
from leaderboard.services.teams import admin as team_admin
from leaderboard.services.teams import members as teams
from leaderboard.unit_of_work import unit_of
from tests.helpers.teams import loose_participant
from tests.runs import make_organizer, make_participant


def user(session: Session, email: str) -> User:
    session.expire_all()
    found = session.scalar(select(User).where(User.email == email))
    assert found is not None
    return found


def test_the_first_cli_member_is_captain_and_later_ones_are_not(
    app: Flask, session: Session, runner: FlaskCliRunner
) -> None:
    assert runner.invoke(args=["leaderboard", "create-team", "Aurora"]).exit_code == 0
    for email in ("a@example.org", "b@example.org"):
        made = runner.invoke(
            args=["leaderboard", "create-user", email, "--role", "participant", "--team", "Aurora"]
        )
        assert made.exit_code == 0, made.output
    assert user(session, "a@example.org").is_captain
    assert not user(session, "b@example.org").is_captain
    team = session.scalar(select(Team).where(Team.name == "Aurora"))
    assert team is not None and team.invite_code and len(team.invite_code) >= 20


def test_organizers_cannot_be_team_members(app: Flask, session: Session) -> None:
    make_participant(app, "Aurora", "a@example.org")
    with pytest.raises(InvalidInput, match="Organizers cannot be team members"):
        accounts.create_user(session, "o@example.org", role="organizer", team="Aurora")
    make_organizer(app, "org@example.org")
    org = user(session, "org@example.org")
    with pytest.raises(Forbidden, match="Organizers cannot be team members"):
        teams.create_own_team(session, org, "Org team")
    code = session.scalar(select(Team.invite_code).where(Team.name == "Aurora"))
    with pytest.raises(Forbidden, match="Organizers cannot be team members"):
        teams.join_by_code(session, org, str(code))
    assert session.scalar(select(Team).where(Team.name == "Org team")) is None


@pytest.mark.parametrize(
    ("name", "affiliation", "message"),
    [
        ("", "", "must not be empty"),
        ("a\x00b", "", "control characters"),
        ("ok", "x\x1by", "control characters"),
        ("ok", "y" * 256, "longer than 255"),
    ],
)
def test_bad_names_and_affiliations_are_refused(
    app: Flask, session: Session, name: str, affiliation: str, message: str
) -> None:
    loose_participant(app, "c@example.org")
    with pytest.raises(InvalidInput, match=message):
        teams.create_own_team(session, user(session, "c@example.org"), name, affiliation)
    assert session.scalar(select(Team)) is None


def test_a_request_is_closed_when_its_user_joins_elsewhere(app: Flask, session: Session) -> None:
    make_participant(app, "Aurora", "a@example.org")
    make_participant(app, "Borealis", "b@example.org")
    loose_participant(app, "c@example.org")
    codes = dict(session.execute(select(Team.name, Team.invite_code)).tuples().all())
    with unit_of(session):
        settings.set_value(session, "registration", "approval", actor="test")
    with unit_of(session):
        teams.join_by_code(session, user(session, "c@example.org"), str(codes["Aurora"]))
    with unit_of(session):
        teams.join_by_code(session, user(session, "c@example.org"), str(codes["Borealis"]))
    first, second = session.scalars(select(JoinRequest).order_by(JoinRequest.id)).all()
    with unit_of(session):
        teams.decide_request(session, user(session, "b@example.org"), second.id, accept=True)
    session.expire_all()
    assert session.get(JoinRequest, first.id).status == "withdrawn"  # type: ignore[union-attr]
    with pytest.raises(Conflict, match="That join request was already withdrawn"):
        teams.decide_request(session, user(session, "a@example.org"), first.id, accept=True)
    assert user(session, "c@example.org").team.name == "Borealis"  # type: ignore[union-attr]


def test_a_withdrawn_team_has_no_valid_invite_link(app: Flask, session: Session) -> None:
    make_participant(app, "Aurora", "a@example.org")
    team = session.scalar(select(Team).where(Team.name == "Aurora"))
    assert team is not None
    code = str(team.invite_code)
    with unit_of(session):
        team_admin.withdraw_team(session, team.id, actor="org")
    with pytest.raises(
        NotFound, match=r"This invite link is not valid \(any more\); ask the team for a new one\."
    ):
        teams.team_by_code(session, code)


def test_merging_a_team_without_captain_keeps_the_targets_captain(
    app: Flask, session: Session
) -> None:
    make_participant(app, "Aurora", "a@example.org")
    make_participant(app, "Borealis", "b@example.org")
    ids = dict(session.execute(select(Team.name, Team.id)).tuples().all())
    with unit_of(session):
        team_admin.merge_teams(session, ids["Aurora"], ids["Borealis"], actor="org")
    captains = [u.email for u in session.scalars(select(User).where(User.is_captain))]
    assert captains == ["b@example.org"]


def test_create_user_refuses_a_withdrawn_or_full_team(app: Flask, session: Session) -> None:
    make_participant(app, "Aurora", "a@example.org")
    with unit_of(session):
        settings.set_value(session, "max_team_size", "1", actor="test")
    with pytest.raises(Conflict, match="is full"):
        accounts.create_user(session, "b@example.org", role="participant", team="Aurora")
    with unit_of(session):
        settings.set_value(session, "max_team_size", "10", actor="test")
    team = session.scalar(select(Team).where(Team.name == "Aurora"))
    assert team is not None
    with unit_of(session):
        team_admin.withdraw_team(session, team.id, actor="org")
    with pytest.raises(Conflict, match="withdrawn"):
        accounts.create_user(session, "b@example.org", role="participant", team="Aurora")
    assert session.scalar(select(User).where(User.email == "b@example.org")) is None
