"""Forgotten passwords, reset links, and the account page's profile and password change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient

from leaderboard.clock import FixedClock
from tests.accounts import PASSWORD, last_link, mailing, post_form, sign_up, user_row
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_participant, token_for
from tests.smtp import MailServer, body_of

T0 = datetime(2016, 1, 20, 9, 0, tzinfo=UTC)
ALICE = "alice@example.org"
NEW_PASSWORD = "a brand new password"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def site(make_app: AppFactory, server: MailServer, clock: FixedClock) -> Flask:
    app = make_app(clock=clock, **mailing(server))
    make_participant(app, "Aurora", ALICE, PASSWORD)
    return app


def reset_link(client: FlaskClient, server: MailServer, count: int = 1) -> str:
    assert post_form(client, "/password/forgot", {"email": ALICE}).status_code == 200
    return last_link(server.inbox, ALICE, count)


def set_new(client: FlaskClient, link: str, password: str = NEW_PASSWORD):  # type: ignore[no-untyped-def]
    return post_form(client, link, {"password": password, "password_confirm": password})


def refused_login(client: FlaskClient, email: str, password: str) -> int:
    page = client.get("/login").get_data(as_text=True)
    resp = client.post(
        "/login", data={"email": email, "password": password, "csrf_token": csrf_from(page)}
    )
    return resp.status_code


def test_reset_sets_the_password_ends_sessions_and_revokes_tokens(
    site: Flask, server: MailServer
) -> None:
    browser = site.test_client()
    login(browser, ALICE, PASSWORD)
    token = token_for(site, ALICE)
    web = site.test_client()
    link = reset_link(web, server)
    assert link.startswith("/password/reset/")
    # The mail says what a new password ends; it greets no one by name.
    body = body_of(server.inbox.wait_for(ALICE)[0])
    assert "revokes every API token" in body and body.splitlines()[0] == "Hello,"
    page = web.get(link)
    assert page.status_code == 200 and ALICE in page.get_data(as_text=True)
    done = set_new(web, link)
    assert done.status_code == 302 and done.headers["Location"] == "/login"
    shown = web.get("/login").get_data(as_text=True)
    assert "every API token of the account was revoked" in shown
    # Every session ended; the old password is refused, the new one works.
    assert browser.get("/account").status_code == 302
    assert refused_login(site.test_client(), ALICE, PASSWORD) == 401
    login(site.test_client(), ALICE, NEW_PASSWORD)
    # Every API token is revoked by a reset: one taken with the old password dies with it.
    api = site.test_client().get(
        "/api/v1/tasks/semeval2016-task3/A/table", headers={"Authorization": f"Bearer {token}"}
    )
    assert api.status_code == 401
    # Single use: the password changed, so the link is spent.
    again = web.get(link)
    assert again.status_code == 400 and "already used" in again.get_data(as_text=True)


def test_reset_links_expire_after_an_hour_and_refuse_tampering(
    site: Flask, server: MailServer, clock: FixedClock
) -> None:
    web = site.test_client()
    link = reset_link(web, server)
    assert web.get(link.replace("/password/reset/", "/password/reset/x")).status_code == 400
    # A verification link's token does not pass as a reset token (salt per purpose).
    assert web.get(link.replace("/password/reset/", "/verify/")).status_code == 400
    clock.set(T0 + timedelta(minutes=59))
    assert web.get(link).status_code == 200
    clock.set(T0 + timedelta(hours=1, seconds=1))
    expired = web.get(link)
    assert expired.status_code == 410 and "expired" in expired.get_data(as_text=True)
    token = csrf_from(web.get("/login").get_data(as_text=True))
    post = web.post(
        link,
        data={"password": NEW_PASSWORD, "password_confirm": NEW_PASSWORD, "csrf_token": token},
    )
    assert post.status_code == 410
    login(site.test_client(), ALICE, PASSWORD)


def test_a_password_change_invalidates_outstanding_reset_links(
    site: Flask, server: MailServer
) -> None:
    web = site.test_client()
    link = reset_link(web, server)
    account = site.test_client()
    login(account, ALICE, PASSWORD)
    changed = post_form(
        account,
        "/account",
        {"current_password": PASSWORD, "password": NEW_PASSWORD, "password_confirm": NEW_PASSWORD},
    )
    assert changed.status_code == 302
    assert web.get(link).status_code == 400
    login(site.test_client(), ALICE, NEW_PASSWORD)


def test_reset_refuses_a_weak_password_and_keeps_the_link(site: Flask, server: MailServer) -> None:
    web = site.test_client()
    link = reset_link(web, server)
    weak = set_new(web, link, "short")
    assert weak.status_code == 400 and "at least 10 characters" in weak.get_data(as_text=True)
    mine = set_new(web, link, "alice loves passwords")
    assert mine.status_code == 400 and "local part" in mine.get_data(as_text=True)
    assert set_new(web, link).status_code == 302


def test_a_reset_verifies_an_unverified_address(site: Flask, server: MailServer) -> None:
    web = site.test_client()
    sign_up(web, "dana@example.org")
    server.inbox.wait_for("dana@example.org")
    post_form(web, "/password/forgot", {"email": "dana@example.org"})
    link = last_link(server.inbox, "dana@example.org", 2)
    assert set_new(web, link).status_code == 302
    assert user_row(site, "dana@example.org").verified_at == T0  # type: ignore[union-attr]
    login(site.test_client(), "dana@example.org", NEW_PASSWORD)


def test_the_account_page_changes_profile_and_password(site: Flask) -> None:
    other = site.test_client()
    login(other, ALICE, PASSWORD)
    web = site.test_client()
    login(web, ALICE, PASSWORD)
    saved = post_form(
        web, "/account", {"display_name": "Alice \u0639\u0644\u064a", "affiliation": "Uni A"}
    )
    assert saved.status_code == 302
    page = web.get("/account").get_data(as_text=True)
    assert "Alice \u0639\u0644\u064a" in page and "Uni A" in page
    alice = user_row(site, ALICE)
    assert alice is not None and alice.affiliation == "Uni A"
    empty = post_form(web, "/account", {"display_name": "", "affiliation": ""})
    assert empty.status_code == 400 and "Enter your name" in empty.get_data(as_text=True)

    wrong = post_form(
        web,
        "/account",
        {
            "current_password": "not it at all",
            "password": NEW_PASSWORD,
            "password_confirm": NEW_PASSWORD,
        },
    )
    assert wrong.status_code == 400 and "current password is wrong" in wrong.get_data(as_text=True)
    mismatch = post_form(
        web,
        "/account",
        {"current_password": PASSWORD, "password": NEW_PASSWORD, "password_confirm": "x" * 12},
    )
    assert mismatch.status_code == 400
    tokens = [token_for(site, ALICE), token_for(site, ALICE)]
    changed = post_form(
        web,
        "/account",
        {"current_password": PASSWORD, "password": NEW_PASSWORD, "password_confirm": NEW_PASSWORD},
    )
    assert changed.status_code == 302
    # This browser stays logged in, and is told; the other session ended; every token is revoked.
    after = web.get("/account").get_data(as_text=True)
    assert "every API token of yours was revoked" in after
    assert other.get("/account").status_code == 302
    for token in tokens:
        api = site.test_client().get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"})
        assert api.status_code == 401
    login(site.test_client(), ALICE, NEW_PASSWORD)


def test_the_account_page_needs_a_log_in(site: Flask) -> None:
    resp = site.test_client().get("/account")
    assert resp.status_code == 302 and resp.headers["Location"].startswith("/login")
