"""Log-in sessions end at log-out, on a new password, on disabling, and after their lifetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from flask_login.utils import encode_cookie
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.config import load_settings
from leaderboard.models import AuditEvent
from leaderboard.services.accounts.core import find_user
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_participant, token_for

ALICE = "alice@example.org"
PASSWORD = "correct horse battery"
T0 = datetime(2016, 1, 20, 9, 0, tzinfo=UTC)


def session_cookie(client: FlaskClient) -> str:
    """Return the value of a client's session cookie."""
    cookie = client.get_cookie("session")
    assert cookie is not None, "no session cookie"
    return cookie.value


def replay(app: Flask, cookie: str) -> FlaskClient:
    """Return a fresh browser holding nothing but a copy of a session cookie."""
    other = app.test_client()
    other.set_cookie("session", cookie)
    return other


def team_status(client: FlaskClient) -> int:
    resp = client.get("/team")
    if resp.status_code == 302:
        assert resp.headers["Location"].startswith("/login"), resp.headers["Location"]
    return resp.status_code


def log_out(client: FlaskClient) -> None:
    resp = client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(True))})
    assert resp.status_code == 302


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    result = runner.invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def alice(app: Flask) -> FlaskClient:
    """Return a browser where alice is logged in."""
    make_participant(app, "Aurora", ALICE, PASSWORD)
    client = app.test_client()
    login(client, ALICE, PASSWORD)
    assert team_status(client) == 200
    return client


def test_a_cookie_copied_before_log_out_is_dead_after_it(app: Flask, alice: FlaskClient) -> None:
    copied = session_cookie(alice)
    assert team_status(replay(app, copied)) == 200
    log_out(alice)
    assert team_status(alice) == 302
    assert team_status(replay(app, copied)) == 302


def test_log_out_ends_the_sessions_in_every_browser(app: Flask, alice: FlaskClient) -> None:
    laptop = app.test_client()
    login(laptop, ALICE, PASSWORD)
    log_out(alice)
    assert team_status(laptop) == 302
    login(laptop, ALICE, PASSWORD)
    assert team_status(laptop) == 200


def test_set_password_ends_every_session(
    app: Flask, alice: FlaskClient, runner: FlaskCliRunner
) -> None:
    copied = session_cookie(alice)
    invoke(runner, "set-password", ALICE, "--password", "a new long password")
    assert team_status(alice) == 302
    assert team_status(replay(app, copied)) == 302
    fresh = app.test_client()
    login(fresh, ALICE, "a new long password")
    assert team_status(fresh) == 200


def test_disable_user_ends_sessions_refuses_log_in_and_revokes_tokens(
    app: Flask, alice: FlaskClient, runner: FlaskCliRunner
) -> None:
    token = token_for(app, ALICE)
    api = {"Authorization": f"Bearer {token}"}
    table = "/api/v1/tasks/semeval2016-task3/A/table"
    assert alice.get(table, headers=api).status_code == 200
    copied = session_cookie(alice)
    invoke(runner, "disable-user", ALICE)
    assert team_status(alice) == 302
    assert team_status(replay(app, copied)) == 302
    assert alice.get(table, headers=api).status_code == 401
    page = app.test_client()
    form = {"email": ALICE, "password": PASSWORD}
    form["csrf_token"] = csrf_from(page.get("/login").get_data(as_text=True))
    refused = page.post("/login", data=form)
    assert refused.status_code == 401
    assert "Wrong e-mail address or password." in refused.get_data(as_text=True)

    invoke(runner, "enable-user", ALICE)
    assert team_status(replay(app, copied)) == 302, "enabling must not revive old sessions"
    # Disabling revoked every token: enabling revives none of them.
    assert alice.get(table, headers=api).status_code == 401
    again = app.test_client()
    login(again, ALICE, PASSWORD)
    assert team_status(again) == 200
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        actions = s.scalars(select(AuditEvent.action).order_by(AuditEvent.id)).all()
        assert actions[-2:] == ["disable-user", "enable-user"]
        assert find_user(s, ALICE).is_active


def test_disable_and_enable_an_unknown_user_fail(runner: FlaskCliRunner) -> None:
    for command in ("disable-user", "enable-user"):
        result = runner.invoke(args=["leaderboard", command, "nobody@example.org"])
        assert result.exit_code == 1 and "No user" in result.output


def test_a_remember_cookie_never_logs_anyone_in(app: Flask) -> None:
    make_participant(app, "Aurora", ALICE, PASSWORD)
    with app.app_context(), app.extensions["leaderboard"]["sessionmaker"]() as s:
        remember = encode_cookie(str(find_user(s, ALICE).id))
    client = app.test_client()
    client.set_cookie("remember_token", remember)
    assert team_status(client) == 302


def test_a_session_ends_after_its_lifetime_by_the_server_clock(make_app: AppFactory) -> None:
    clock = FixedClock(T0)
    app = make_app(clock=clock, session_hours=2)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    client = app.test_client()
    login(client, ALICE, PASSWORD)
    copied = session_cookie(client)
    clock.set(T0 + timedelta(hours=1, minutes=59))
    assert team_status(client) == 200
    clock.set(T0 + timedelta(hours=2))
    assert team_status(client) == 302
    assert team_status(replay(app, copied)) == 302


def test_the_session_cookie_expires_with_the_lifetime(make_app: AppFactory) -> None:
    app = make_app()
    assert app.extensions["leaderboard"]["settings"].session_hours == 12
    assert app.permanent_session_lifetime == timedelta(hours=12)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    client = app.test_client()
    login(client, ALICE, PASSWORD)
    cookie = client.get_cookie("session")
    assert cookie is not None and cookie.expires is not None
    left = cookie.expires - datetime.now(UTC)
    assert timedelta(hours=11, minutes=59) < left <= timedelta(hours=12)


def _login_cookies(app: Flask) -> list[str]:
    """Log in and return the session's Set-Cookie headers."""
    make_participant(app, "Aurora", ALICE, PASSWORD)
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    resp = client.post(
        "/login", data={"email": ALICE, "password": PASSWORD, "csrf_token": csrf_from(page)}
    )
    assert resp.status_code == 302
    cookies = [c for c in resp.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert cookies
    return cookies


def _secure(cookies: list[str]) -> bool:
    return all("; Secure" in c for c in cookies)


def test_cookies_are_not_secure_by_default(make_app: AppFactory) -> None:
    cookies = _login_cookies(make_app())
    assert not any("Secure" in c for c in cookies)


def test_secure_cookies_by_setting(make_app: AppFactory) -> None:
    app = make_app(secure_cookies=True)
    assert app.config["REMEMBER_COOKIE_SECURE"] is True
    assert _secure(_login_cookies(app))


def test_an_https_site_url_makes_cookies_secure(make_app: AppFactory) -> None:
    assert _secure(_login_cookies(make_app(site_url="https://leaderboard.example.org")))


def test_secure_cookies_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEADERBOARD_SECRET_KEY", "x")
    monkeypatch.setenv("LEADERBOARD_SITE_URL", "https://leaderboard.example.org")
    assert load_settings().secure_cookies is True
    monkeypatch.setenv("LEADERBOARD_SECURE_COOKIES", "0")
    assert load_settings().secure_cookies is False
    monkeypatch.setenv("LEADERBOARD_SITE_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("LEADERBOARD_SECURE_COOKIES", "1")
    assert load_settings().secure_cookies is True
    monkeypatch.delenv("LEADERBOARD_SECURE_COOKIES")
    assert load_settings().secure_cookies is False
    monkeypatch.setenv("LEADERBOARD_SESSION_HOURS", "0.5")
    assert load_settings().session_hours == 0.5
    monkeypatch.setenv("LEADERBOARD_SESSION_HOURS", "0")
    with pytest.raises(
        ValueError, match="LEADERBOARD_SESSION_HOURS must be more than 0 and at most a year"
    ):
        load_settings()
