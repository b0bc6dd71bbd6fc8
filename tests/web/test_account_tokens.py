"""API tokens in the browser: create (shown once, stored hashed), list, last use, revoke."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from leaderboard.clock import FixedClock
from leaderboard.models import ApiToken, AuditEvent, Run, Team
from leaderboard.services.accounts import core as accounts
from leaderboard.unit_of_work import unit_of
from leaderboard.web.api import routes as api_routes
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_organizer, make_participant

ALICE = "alice@example.org"
PASSWORD = "correct horse battery"
NEW_TOKEN = re.compile(r'<code id="new-token">([^<]+)</code>')
T0 = datetime(2016, 1, 15, 12, 0, tzinfo=UTC)


def _create(client: FlaskClient, name: str) -> str:
    page = client.get("/account/tokens")
    assert page.status_code == 200
    resp = client.post(
        "/account/tokens",
        data={"name": name, "csrf_token": csrf_from(page.get_data(as_text=True))},
    )
    assert resp.status_code == 200, resp.get_data(as_text=True)
    found = NEW_TOKEN.search(resp.get_data(as_text=True))
    assert found, "the new token is shown on the answer"
    return found.group(1)


def _alice(app: Flask) -> FlaskClient:
    make_participant(app, "Aurora", ALICE)
    client = app.test_client()
    login(client, ALICE, PASSWORD)
    return client


def _tokens(app: Flask) -> list[ApiToken]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(ApiToken).order_by(ApiToken.id)))


def test_a_created_token_is_shown_once_stored_hashed_and_works(app: Flask) -> None:
    client = _alice(app)
    token = _create(client, "laptop script")
    assert token.startswith("lb_")
    (row,) = _tokens(app)
    assert row.name == "laptop script"
    assert row.token_sha256 == hashlib.sha256(token.encode()).hexdigest()
    assert row.prefix == token[:10]
    again = client.get("/account/tokens").get_data(as_text=True)
    assert token not in again and 'id="new-token"' not in again
    assert "laptop script" in again and "never" in again
    api = app.test_client().get("/api/v1/team/runs", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 200 and api.get_json() == {"runs": []}


def test_last_use_is_written_at_most_once_a_minute(make_app: AppFactory) -> None:
    clock = FixedClock(T0)
    app = make_app(clock=clock)
    client = _alice(app)
    token = _create(client, "ci")
    auth = {"Authorization": f"Bearer {token}"}
    api = app.test_client()
    assert api.get("/api/v1/team/runs", headers=auth).status_code == 200
    assert _tokens(app)[0].last_used_at == T0
    clock.set(T0 + timedelta(seconds=30))
    assert api.get("/api/v1/team/runs", headers=auth).status_code == 200
    assert _tokens(app)[0].last_used_at == T0  # within the minute: not written again
    clock.set(T0 + timedelta(seconds=61))
    assert api.get("/api/v1/team/runs", headers=auth).status_code == 200
    assert _tokens(app)[0].last_used_at == T0 + timedelta(seconds=61)
    page = client.get("/account/tokens").get_data(as_text=True)
    assert "never" not in page and "2016-01-15 12:01" in page


def test_revoking_a_token_refuses_it_and_only_own_tokens_can_be_revoked(app: Flask) -> None:
    client = _alice(app)
    token = _create(client, "old")
    make_participant(app, "Borealis", "bob@example.org")
    bob = app.test_client()
    login(bob, "bob@example.org", PASSWORD)
    (row,) = _tokens(app)
    csrf_bob = csrf_from(bob.get("/account/tokens").get_data(as_text=True))
    stolen = bob.post(f"/account/tokens/{row.id}/revoke", data={"csrf_token": csrf_bob})
    assert stolen.status_code == 404
    assert _tokens(app)[0].revoked_at is None
    csrf = csrf_from(client.get("/account/tokens").get_data(as_text=True))
    assert (
        client.post("/account/tokens/999999/revoke", data={"csrf_token": csrf}).status_code == 404
    )
    resp = client.post(f"/account/tokens/{row.id}/revoke", data={"csrf_token": csrf})
    assert resp.status_code == 302
    assert _tokens(app)[0].revoked_at is not None
    assert "revoked" in client.get("/account/tokens").get_data(as_text=True)
    api = app.test_client().get("/api/v1/team/runs", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 401
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        actions = list(s.scalars(select(AuditEvent.action)))
    assert "revoke-token" in actions and "issue-token" in actions


def test_token_forms_without_csrf_are_refused_and_change_nothing(app: Flask) -> None:
    client = _alice(app)
    assert client.post("/account/tokens", data={"name": "x"}).status_code == 400
    assert _tokens(app) == []
    _create(client, "kept")
    (row,) = _tokens(app)
    assert client.post(f"/account/tokens/{row.id}/revoke").status_code == 400
    assert _tokens(app)[0].revoked_at is None


def test_a_token_needs_a_name_of_sane_length(app: Flask) -> None:
    client = _alice(app)
    csrf = csrf_from(client.get("/account/tokens").get_data(as_text=True))
    for bad in ("", "   ", "x" * 101, "tab\x01name"):
        resp = client.post("/account/tokens", data={"name": bad, "csrf_token": csrf})
        assert resp.status_code == 400, bad
        assert 'id="new-token"' not in resp.get_data(as_text=True)
    assert _tokens(app) == []


def test_token_names_are_escaped(app: Flask) -> None:
    client = _alice(app)
    _create(client, "<script>alert(1)</script>")
    page = client.get("/account/tokens").get_data(as_text=True)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_organizers_have_tokens_too_and_anonymous_visitors_log_in(app: Flask) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    token = _create(org, "org script")
    resp = app.test_client().get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200
    anon = app.test_client().get("/account/tokens")
    assert anon.status_code == 302 and anon.headers["Location"].startswith("/login")


def test_a_disabled_users_tokens_stay_refused(app: Flask, session: Session) -> None:
    client = _alice(app)
    token = _create(client, "before")
    with unit_of(session):
        accounts.disable_user(session, ALICE, actor="test")
    resp = app.test_client().get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 401


def test_the_cli_token_command_takes_a_name(app: Flask) -> None:
    make_participant(app, "Aurora", ALICE)
    result = app.test_cli_runner().invoke(args=["leaderboard", "token", ALICE, "--name", "cron"])
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    (row,) = _tokens(app)
    assert row.name == "cron" and row.token_sha256 == hashlib.sha256(token.encode()).hexdigest()


def _commits(app: Flask) -> tuple[list[str], Callable[[], None]]:
    """Return a list that grows by one at each commit of the app's engine, and its stopper."""
    engine = app.extensions["leaderboard"]["engine"]
    seen: list[str] = []

    def count(_conn: object) -> None:
        seen.append("COMMIT")

    event.listen(engine, "commit", count)
    return seen, lambda: event.remove(engine, "commit", count)


def test_a_note_of_use_is_one_commit_and_a_request_within_the_minute_commits_nothing(
    make_app: AppFactory,
) -> None:
    clock = FixedClock(T0)
    app = make_app(clock=clock)
    token = _create(_alice(app), "ci")
    auth = {"Authorization": f"Bearer {token}"}
    api = app.test_client()
    seen, stop = _commits(app)
    try:
        assert api.get("/api/v1/team/runs", headers=auth).status_code == 200
        noted = len(seen)
        clock.set(T0 + timedelta(seconds=30))
        assert api.get("/api/v1/team/runs", headers=auth).status_code == 200
    finally:
        stop()
    # The read-only request within the minute neither writes nor waits for the write lock.
    assert (noted, len(seen)) == (1, 1)
    assert _tokens(app)[0].last_used_at == T0


def test_sqlite_commits_the_note_before_the_request_runs_postgresql_at_its_end(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(clock=FixedClock(T0))
    token = _create(_alice(app), "ci")
    seen: list[datetime | None] = []
    listed = api_routes.team_runs

    def peeking(session: Session, team: Team) -> list[Run]:
        seen.append(_tokens(app)[0].last_used_at)  # from another session: committed only
        return listed(session, team)

    monkeypatch.setattr(api_routes, "team_runs", peeking)
    resp = app.test_client().get("/api/v1/team/runs", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200
    sqlite = app.extensions["leaderboard"]["engine"].dialect.name == "sqlite"
    assert seen == [T0 if sqlite else None]
    assert _tokens(app)[0].last_used_at == T0
