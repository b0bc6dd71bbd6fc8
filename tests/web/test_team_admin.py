"""The organizer's teams: list, approve, rename, merge, withdraw, delete; the participants table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, Run, Team, User
from leaderboard.services.accounts import core as accounts
from leaderboard.unit_of_work import opened
from tests.conftest import csrf_from, login
from tests.helpers.teams import loose_participant
from tests.runs import (
    accepted,
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    token_for,
)
from tests.security import compile_latex

T3 = "semeval2016-task3"
TABLE = f"/tasks/{T3}/A/results"


@pytest.fixture
def org(app: Flask) -> FlaskClient:
    make_organizer(app, "org@example.org")
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def post(client: FlaskClient, path: str, **data: str) -> tuple[int, str]:
    token = csrf_from(client.get("/").get_data(as_text=True))
    resp = client.post(path, data={"csrf_token": token, **data}, follow_redirects=True)
    return resp.status_code, resp.get_data(as_text=True)


def team_id(session: Session, name: str) -> int:
    session.expire_all()
    found = session.scalar(select(Team.id).where(Team.name == name))
    assert found is not None, name
    return found


def upload(app: Flask, email: str, run: bytes, slot: str = "primary", **form: str) -> int:
    return int(
        accepted(api_upload(app.test_client(), token_for(app, email), run, slot=slot, **form))["id"]
    )


def labels(app: Flask) -> list[str]:
    table = app.test_client().get(f"{TABLE}.json?view=live").get_json()
    return [r["label"] for r in table["rows"] if r["kind"] == "run"]


def test_the_team_list_shows_teams_members_captains_and_runs(
    app: Flask, org: FlaskClient, session: Session
) -> None:
    make_participant(app, "Aurora <b>", "alice@example.org")
    make_participant(app, "Aurora <b>", "amy@example.org")
    upload(app, "alice@example.org", oracle_run())
    page = org.get("/organizer/teams/").get_data(as_text=True)
    assert "<bdi>Aurora &lt;b&gt;</bdi>" in page and "Aurora <b>" not in page
    assert "alice@example.org</bdi> (captain)" in page
    assert "amy@example.org</bdi></li>" in page
    row = page[page.index("<bdi>Aurora &lt;b&gt;</bdi>") :]
    assert "<td>1</td>" in row  # one run
    assert "organizer_teams" not in page
    assert app.test_client().get("/organizer/teams/").status_code == 302


def test_rename_changes_live_tables_and_is_audited(
    app: Flask, org: FlaskClient, session: Session
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    upload(app, "alice@example.org", oracle_run())
    assert labels(app) == ["Aurora-primary"]
    aurora = team_id(session, "Aurora")
    status, page = post(org, f"/organizer/teams/{aurora}/rename", name="Aurora Two")
    assert status == 200 and "Team renamed to Aurora Two." in page
    assert labels(app) == ["Aurora Two-primary"]
    assert post(org, f"/organizer/teams/{aurora}/rename", name="Borealis")[0] == 409
    assert post(org, f"/organizer/teams/{aurora}/rename", name="  ")[0] == 400
    assert post(org, "/organizer/teams/999999/rename", name="Nobody")[0] == 404
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "rename-team"))
    assert event is not None and event.details == {"team": "Aurora Two", "old": "Aurora"}
    assert event.actor == "org@example.org"


def test_merge_moves_members_and_runs(app: Flask, org: FlaskClient, session: Session) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    a = upload(app, "alice@example.org", oracle_run(), slot="contrastive1")
    b = upload(app, "bob@example.org", constant_run())
    aurora, borealis = team_id(session, "Aurora"), team_id(session, "Borealis")
    status, page = post(org, f"/organizer/teams/{aurora}/merge", into="Borealis")
    assert status == 200 and "Team Aurora merged into Borealis." in page
    session.expire_all()
    assert session.get(Team, aurora) is None
    alice = session.scalar(select(User).where(User.email == "alice@example.org"))
    assert alice is not None and alice.team_id == borealis and not alice.is_captain
    runs = {r.id: r for r in session.scalars(select(Run).where(Run.kind == "run"))}
    assert runs[a].team_id == runs[b].team_id == borealis
    assert runs[a].active_key == f"{runs[a].eval_set_id}:{borealis}:contrastive1"
    assert sorted(labels(app)) == ["Borealis-contrastive1", "Borealis-primary"]
    # alice now uploads for Borealis.
    assert upload(app, "alice@example.org", oracle_run(), slot="contrastive2")
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "merge-teams"))
    assert event is not None and event.details["merged"] == "Aurora"


def test_merge_with_colliding_slots_is_refused_and_changes_nothing(
    app: Flask, org: FlaskClient, session: Session
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    upload(app, "alice@example.org", oracle_run())
    upload(app, "bob@example.org", constant_run())
    aurora, borealis = team_id(session, "Aurora"), team_id(session, "Borealis")
    status, page = post(org, f"/organizer/teams/{aurora}/merge", into="Borealis")
    assert status == 409
    assert "both have an active run in semeval2016-task3/A test primary" in page
    session.expire_all()
    assert session.get(Team, aurora) is not None
    assert {r.team_id for r in session.scalars(select(Run).where(Run.kind == "run"))} == {
        aurora,
        borealis,
    }
    assert sorted(labels(app)) == ["Aurora-primary", "Borealis-primary"]
    assert post(org, f"/organizer/teams/{aurora}/merge", into="Aurora")[0] == 409
    assert post(org, f"/organizer/teams/{aurora}/merge", into="Nobody")[0] == 404


def test_withdrawn_team_leaves_live_tables_but_not_frozen_tables_or_history(
    app: Flask, org: FlaskClient, session: Session, runner: FlaskCliRunner
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    run_a = upload(app, "alice@example.org", oracle_run(), description="Aurora's system")
    upload(app, "bob@example.org", constant_run())
    froze = runner.invoke(args=["leaderboard", "freeze", T3, "A"])
    assert froze.exit_code == 0, froze.output
    aurora = team_id(session, "Aurora")
    status, page = post(org, f"/organizer/teams/{aurora}/withdraw")
    assert status == 200 and "Team Aurora withdrawn." in page
    anon = app.test_client()
    assert labels(app) == ["Borealis-primary"]
    for ext in ("csv", "md", "tex"):
        body = anon.get(f"{TABLE}.{ext}?view=live").get_data(as_text=True)
        assert "Borealis" in body and "Aurora" not in body, ext
    assert "Aurora" not in anon.get(f"/tasks/{T3}/A?view=live").get_data(as_text=True)
    listing = org.get(f"/organizer/tasks/{T3}/A/test/runs.json").get_json()
    assert [r["team"] for r in listing] == ["Borealis"]
    official = runner.invoke(
        args=["leaderboard", "table", T3, "A", "--official", "--format", "json"]
    )
    assert "Aurora-primary" in [r["label"] for r in json.loads(official.output)["rows"]]
    assert "Aurora" in anon.get(f"/tasks/{T3}/A?view=official").get_data(as_text=True)
    # History: the team's own page and the API still show the run.
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    team_page = alice.get("/team").get_data(as_text=True)
    assert f"#{run_a}" in team_page and "withdrawn by the organizers" in team_page
    token = token_for(app, "alice@example.org")
    got = anon.get(f"/api/v1/runs/{run_a}", headers={"Authorization": f"Bearer {token}"})
    assert got.status_code == 200
    refused = api_upload(anon, token, oracle_run(), slot="contrastive1")
    assert refused.status_code == 403
    assert "has been withdrawn; it cannot upload runs" in refused.get_json()["error"]
    assert post(org, f"/organizer/teams/{aurora}/withdraw")[0] == 409
    # A team with runs is never deleted.
    assert post(org, f"/organizer/teams/{aurora}/delete")[0] == 409
    assert session.get(Team, aurora) is not None


def test_approve_and_delete(app: Flask, org: FlaskClient, session: Session) -> None:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        team = accounts.create_team(s, "Waiting", actor="test")
        team.approved = False
        s.commit()
    waiting = team_id(session, "Waiting")
    status, page = post(org, f"/organizer/teams/{waiting}/approve")
    assert status == 200 and "Team Waiting approved." in page
    assert post(org, f"/organizer/teams/{waiting}/approve")[0] == 409
    status, page = post(org, f"/organizer/teams/{waiting}/delete")
    assert status == 200 and "Team Waiting deleted." in page
    session.expire_all()
    assert session.get(Team, waiting) is None
    make_participant(app, "Aurora", "alice@example.org")
    assert post(org, f"/organizer/teams/{team_id(session, 'Aurora')}/delete")[0] == 409
    actions = {e.action for e in session.scalars(select(AuditEvent))}
    assert {"approve-team", "delete-team"} <= actions


def test_organizer_forms_refuse_posts_without_csrf(
    app: Flask, org: FlaskClient, session: Session
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    aurora = team_id(session, "Aurora")
    for action, data in (
        ("approve", {}),
        ("rename", {"name": "Other"}),
        ("merge", {"into": "Borealis"}),
        ("withdraw", {}),
        ("delete", {}),
    ):
        resp = org.post(f"/organizer/teams/{aurora}/{action}", data=data)
        assert resp.status_code == 400, action
    session.expire_all()
    team = session.get(Team, aurora)
    assert team is not None and team.name == "Aurora" and team.withdrawn_at is None


# ---------------------------------------------------------------------------- the CLI


HOSTILE = "R&D_Lab #1 50% {x} ~^ \\ $y$"


@pytest.fixture
def paper(app: Flask, runner: FlaskCliRunner) -> FlaskCliRunner:
    make_participant(app, HOSTILE, "alice@example.org")
    make_participant(app, HOSTILE, "amy@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    make_participant(app, "Withdrawn", "wes@example.org")
    make_participant(app, "No runs", "nora@example.org")
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        accounts.find_team(s, HOSTILE).affiliation = "Uni <&> Ünï"
        s.commit()
    upload(app, "alice@example.org", oracle_run())
    upload(app, "bob@example.org", constant_run())
    upload(app, "wes@example.org", constant_run())
    assert runner.invoke(args=["leaderboard", "withdraw-team", "Withdrawn"]).exit_code == 0
    return runner


def teams_out(runner: FlaskCliRunner, *args: str) -> str:
    result = runner.invoke(args=["leaderboard", "teams", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_teams_json(paper: FlaskCliRunner) -> None:
    assert json.loads(teams_out(paper, "--format", "json")) == [
        {"team": "Borealis", "affiliation": "", "members": 1, "subtasks": [f"{T3}/A"]},
        {"team": HOSTILE, "affiliation": "Uni <&> Ünï", "members": 2, "subtasks": [f"{T3}/A"]},
    ]


def test_teams_markdown_is_the_default(paper: FlaskCliRunner) -> None:
    out = teams_out(paper)
    assert out == teams_out(paper, "--format", "md")
    lines = out.splitlines()
    assert lines[0] == "| Team | Affiliation | Members | Subtasks |"
    assert lines[2] == f"| Borealis |  | 1 | {T3}/A |"
    assert lines[3] == (
        "| R\\&D\\_Lab #1 50% {x} \\~^ \\\\ \\$y\\$ | Uni \\<\\&\\> Ünï | 2 | " + f"{T3}/A |"
    )
    assert "Withdrawn" not in out and "No runs" not in out


def test_teams_csv(paper: FlaskCliRunner) -> None:
    assert teams_out(paper, "--format", "csv").splitlines() == [
        "team,affiliation,members,subtasks",
        f"Borealis,,1,{T3}/A",
        f"{HOSTILE},Uni <&> Ünï,2,{T3}/A",
    ]


def test_teams_latex_escapes_and_compiles(paper: FlaskCliRunner, tmp_path: Path) -> None:
    out = teams_out(paper, "--format", "latex")
    assert (
        r"R\&D\_Lab \#1 50\% \{x\} \textasciitilde{}\textasciicircum{} \textbackslash{} \$y\$"
        in out
    )
    assert "Withdrawn" not in out
    done = compile_latex(out, tmp_path, "teams")
    assert done.returncode == 0, done.stdout[-2000:]


def test_team_commands_rename_merge_approve(app: Flask, runner: FlaskCliRunner) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(args=["leaderboard", *args])
        return result.exit_code, result.output

    assert cli("rename-team", "Aurora", "Aurora 2") == (0, "Renamed team 'Aurora' to 'Aurora 2'.\n")
    assert cli("merge-teams", "Aurora 2", "Borealis") == (
        0,
        "Merged team 'Aurora 2' into 'Borealis'.\n",
    )
    code, out = cli("merge-teams", "Aurora 2", "Borealis")
    assert code == 1 and "No team named" in out
    code, out = cli("approve-team", "Borealis")
    assert code == 1 and "already approved" in out
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        members = accounts.find_team(s, "Borealis").members
        assert sorted(m.email for m in members) == ["alice@example.org", "bob@example.org"]
        assert [m.email for m in members if m.is_captain] == ["bob@example.org"]


# ------------------------------------------------- organizers add members (issue 19)


def _loose(app: Flask, email: str) -> None:
    loose_participant(app, email)


def test_an_organizer_adds_the_first_member_of_an_emptied_team_as_captain(
    app: Flask, org: FlaskClient, session: Session
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    upload(app, "alice@example.org", oracle_run())
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    assert post(alice, "/team/leave")[0] == 200
    aurora = team_id(session, "Aurora")
    assert session.get(Team, aurora).invite_code is None  # type: ignore[union-attr]
    _loose(app, "dan@example.org")
    _loose(app, "eve@example.org")
    page = org.get("/organizer/teams/").get_data(as_text=True)
    assert f'action="/organizer/teams/{aurora}/members"' in page
    status, page = post(org, f"/organizer/teams/{aurora}/members", email="Dan@Example.org ")
    assert status == 200
    assert "\u2068dan@example.org\u2069 added to team \u2068Aurora\u2069 as its captain." in page
    assert post(org, f"/organizer/teams/{aurora}/members", email="eve@example.org")[0] == 200
    session.expire_all()
    dan = session.scalar(select(User).where(User.email == "dan@example.org"))
    eve = session.scalar(select(User).where(User.email == "eve@example.org"))
    assert dan is not None and dan.team_id == aurora and dan.is_captain
    assert eve is not None and eve.team_id == aurora and not eve.is_captain
    # The team has a captain again, and a fresh invite link for them to share.
    team = session.get(Team, aurora)
    assert team is not None and team.invite_code
    events = session.scalars(select(AuditEvent).where(AuditEvent.action == "add-member")).all()
    assert [(e.actor, e.details["email"], e.details["team"]) for e in events] == [
        ("org@example.org", "dan@example.org", "Aurora"),
        ("org@example.org", "eve@example.org", "Aurora"),
    ]


def test_adding_a_member_refusals(app: Flask, org: FlaskClient, session: Session) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    _loose(app, "dan@example.org")
    aurora, borealis = team_id(session, "Aurora"), team_id(session, "Borealis")
    add = f"/organizer/teams/{aurora}/members"
    assert post(org, add, email="nobody@example.org")[0] == 404
    assert post(org, add, email="bob@example.org")[0] == 409  # in another team
    assert post(org, add, email="org@example.org")[0] == 403  # organizers are in no team
    assert post(org, add, email="")[0] == 400
    assert post(org, "/organizer/teams/999999/members", email="dan@example.org")[0] == 404
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        from leaderboard.services.common import settings

        settings.set_value(unit.session, "max_team_size", "1", actor="test")
    status, page = post(org, add, email="dan@example.org")
    assert status == 409 and "is full" in page
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        from leaderboard.services.common import settings

        settings.set_value(unit.session, "max_team_size", "10", actor="test")
    assert post(org, f"/organizer/teams/{borealis}/withdraw")[0] == 200
    status, page = post(org, f"/organizer/teams/{borealis}/members", email="dan@example.org")
    assert status == 409 and "withdrawn" in page
    assert org.post(add, data={"email": "dan@example.org"}).status_code == 400  # no CSRF token
    session.expire_all()
    dan = session.scalar(select(User).where(User.email == "dan@example.org"))
    assert dan is not None and dan.team_id is None


def test_the_add_member_command(app: Flask, runner: FlaskCliRunner, session: Session) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    _loose(app, "dan@example.org")
    done = runner.invoke(args=["leaderboard", "add-member", "aurora", "dan@example.org"])
    assert done.exit_code == 0, done.output
    assert done.output == "Added dan@example.org to team 'Aurora'.\n"
    again = runner.invoke(args=["leaderboard", "add-member", "Aurora", "dan@example.org"])
    assert again.exit_code == 1 and "already in a team" in again.output
    missing = runner.invoke(args=["leaderboard", "add-member", "Nobody", "dan@example.org"])
    assert missing.exit_code == 1 and "No team named" in missing.output
    session.expire_all()
    dan = session.scalar(select(User).where(User.email == "dan@example.org"))
    assert dan is not None and dan.team_id == team_id(session, "Aurora") and not dan.is_captain
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "add-member"))
    assert event is not None and event.details == {"team": "Aurora", "email": "dan@example.org"}
