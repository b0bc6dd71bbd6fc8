"""Organizer pages offer a button or a link where a web action exists, not a shell command."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, Team
from tests.conftest import csrf_from
from tests.helpers.teams import client_of
from tests.runs import make_organizer, make_participant

TEAMS = "/organizer/teams/"


def organizer(app: Flask) -> FlaskClient:
    make_organizer(app, "org@example.org")
    return client_of(app, "org@example.org", "organizer password")


def test_pages_name_no_command_that_a_button_replaces(app: Flask) -> None:
    org = organizer(app)
    dashboard = org.get("/organizer/").get_data(as_text=True)
    hint = re.search(r'<li id="no-team-yet">(.*?)</li>', dashboard)
    assert hint is not None and f'href="{TEAMS}#new-team"' in hint.group(1)
    teams = org.get(TEAMS).get_data(as_text=True)
    assert 'href="/organizer/settings" id="change-registration"' in teams
    assert 'action="/organizer/teams/new"' in teams
    for page in (dashboard, teams):
        assert "leaderboard create-team" not in page and "leaderboard settings" not in page


def test_an_organizer_creates_a_team_with_the_button(app: Flask, session: Session) -> None:
    org = organizer(app)
    token = csrf_from(org.get(TEAMS).get_data(as_text=True))
    resp = org.post("/organizer/teams/new", data={"csrf_token": token, "name": " Aurora "})
    assert resp.status_code == 302 and resp.headers["Location"] == TEAMS
    page = org.get(TEAMS).get_data(as_text=True)
    assert "Team Aurora created" in page and re.search(r"<td><bdi>Aurora</bdi></td>", page)
    team = session.scalar(select(Team).where(Team.name == "Aurora"))
    assert team is not None and team.invite_code
    assert session.scalar(select(AuditEvent).where(AuditEvent.action == "create-team"))
    # No member yet: the dashboard lists it, with no hint left.
    assert 'id="no-team-yet"' not in org.get("/organizer/").get_data(as_text=True)


def test_a_refused_team_name_changes_nothing(app: Flask, session: Session) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    org = organizer(app)
    token = csrf_from(org.get(TEAMS).get_data(as_text=True))
    for name, status, message in (
        ("BOREALIS", 409, "A team named"),
        ("Bo\u2028real", 400, "The team name must not contain control characters"),
        ("", 400, "Give the new team&#39;s name (field name)."),
    ):
        resp = org.post("/organizer/teams/new", data={"csrf_token": token, "name": name})
        assert resp.status_code == status and message in resp.get_data(as_text=True), name
    assert org.post("/organizer/teams/new", data={"name": "Nova"}).status_code == 400
    session.expire_all()
    assert list(session.scalars(select(Team.name))) == ["Borealis"]


def test_participants_cannot_create_a_team_through_the_organizer_button(app: Flask) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    bob = client_of(app, "bob@example.org")
    token = csrf_from(bob.get("/").get_data(as_text=True))
    assert (
        bob.post("/organizer/teams/new", data={"csrf_token": token, "name": "X"}).status_code == 403
    )
