"""Notification mail: opt-outs on the account page, one-click unsubscribe links, each kind's recipients."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from flask import Flask
from sqlalchemy import select

from leaderboard.jobqueue import SEND_MAIL
from leaderboard.models import NotificationOptOut, User
from leaderboard.services.common import mail
from leaderboard.services.notify.core import KINDS, notify
from tests.accounts import BASE
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_participant

PASSWORD = "correct horse battery"
CHECKBOXES = (
    "notify_join_requests",
    "notify_results_released",
    "notify_deadline",
    "notify_rejected_api",
    "notify_organizer_messages",
)


def queued(app: Flask, clear: bool = True) -> list[EmailMessage]:
    """Return the notification mails queued so far (and forget them)."""
    dispatcher = app.extensions["leaderboard"]["dispatcher"]
    mails = [mail.parse(args[0]) for task, args in dispatcher.sent if task == SEND_MAIL]
    if clear:
        dispatcher.sent.clear()
    return mails


def recipients(app: Flask) -> list[str]:
    """Return the addresses of the mails queued so far, sorted (and forget them)."""
    return sorted(str(m["To"]) for m in queued(app))


def unsubscribe_path(message: EmailMessage) -> str:
    """Return the path of a mail's List-Unsubscribe link."""
    header = str(message["List-Unsubscribe"])
    assert header.startswith(f"<{BASE}/unsubscribe/") and header.endswith(">"), header
    return header[1 + len(BASE) : -1]


def off_kinds(app: Flask, email: str) -> set[str]:
    """Return the kinds a user turned off, read afresh."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        user = session.scalar(select(User).where(User.email == email))
        assert user is not None
        return set(
            session.scalars(
                select(NotificationOptOut.kind).where(NotificationOptOut.user_id == user.id)
            )
        )


def send_to(app: Flask, email: str, kind: str) -> bool:
    """Queue a notification of ``kind`` to a user through the service; return whether queued."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        user = session.scalar(select(User).where(User.email == email))
        assert user is not None
        sent = notify(session, user, kind, "Hello", "Something happened.")
        session.commit()
        return sent


@pytest.fixture
def mailing_app(make_app: AppFactory) -> Flask:
    """Return an app whose links start with BASE, with one participant (ann of Aurora)."""
    app = make_app(base_url=BASE)
    make_participant(app, "Aurora", "ann@example.org")
    return app


def checked(html: str, name: str) -> bool:
    """Return whether the checkbox ``name`` is ticked on a page."""
    import re

    tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert tag, f"no checkbox {name}"
    return "checked" in tag.group(0)


def test_the_account_page_has_every_kind_ticked_by_default(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    html = client.get("/account").get_data(as_text=True)
    assert 'id="notifications"' in html
    assert all(checked(html, name) for name in CHECKBOXES)


def test_unticking_kinds_turns_them_off_and_ticking_turns_them_on(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    token = csrf_from(client.get("/account").get_data(as_text=True))
    keep = {
        "notify_join_requests": "y",
        "notify_rejected_api": "y",
        "notify_organizer_messages": "y",
    }
    resp = client.post("/account/notifications", data={**keep, "csrf_token": token})
    assert resp.status_code == 302
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released", "deadline"}
    html = client.get("/account").get_data(as_text=True)
    assert not checked(html, "notify_deadline") and checked(html, "notify_join_requests")
    everything = {name: "y" for name in CHECKBOXES}
    client.post("/account/notifications", data={**everything, "csrf_token": token})
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_the_settings_form_without_csrf_changes_nothing(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    resp = client.post("/account/notifications", data={})
    assert resp.status_code == 400
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_a_notification_carries_one_click_unsubscribe_headers(mailing_app: Flask) -> None:
    assert send_to(mailing_app, "ann@example.org", "deadline")
    [message] = queued(mailing_app)
    assert message["To"] == "ann@example.org"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    path = unsubscribe_path(message)
    body = message.get_body(("plain",))
    assert body is not None and f"{BASE}{path}" in body.get_content()


def test_a_kind_turned_off_is_not_sent_and_others_still_are(mailing_app: Flask) -> None:
    assert send_to(mailing_app, "ann@example.org", "deadline")
    path = unsubscribe_path(queued(mailing_app)[0])
    assert mailing_app.test_client().post(path).status_code == 200
    assert not send_to(mailing_app, "ann@example.org", "deadline")
    assert queued(mailing_app) == []
    assert send_to(mailing_app, "ann@example.org", "organizer_messages")
    assert recipients(mailing_app) == ["ann@example.org"]


def test_unsubscribe_get_asks_and_post_turns_the_kind_off_without_csrf(mailing_app: Flask) -> None:
    send_to(mailing_app, "ann@example.org", "results_released")
    path = unsubscribe_path(queued(mailing_app)[0])
    client = mailing_app.test_client()
    page = client.get(path)
    assert page.status_code == 200
    assert "<button" in page.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == set()  # a GET changes nothing
    # As a mail client does it: the RFC 8058 body, no cookie, no CSRF token.
    resp = client.post(path, data={"List-Unsubscribe": "One-Click"})
    assert resp.status_code == 200
    assert 'id="unsubscribed"' in resp.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released"}
    assert client.post(path).status_code == 200  # twice: still off, no error
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released"}


def test_a_forged_or_altered_unsubscribe_token_is_refused(mailing_app: Flask) -> None:
    send_to(mailing_app, "ann@example.org", "deadline")
    path = unsubscribe_path(queued(mailing_app)[0])
    client = mailing_app.test_client()
    payload, _, signature = path.rpartition(".")
    for forged in (
        "/unsubscribe/not-a-token",
        f"{payload}.{signature[::-1]}",
        path[:-3],
    ):
        for method in (client.get, client.post):
            resp = method(forged)
            assert resp.status_code == 400, forged
            assert "not valid" in resp.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_a_token_signed_with_another_secret_is_refused(mailing_app: Flask) -> None:
    from leaderboard.services.notify.core import unsubscribe_token

    with mailing_app.extensions["leaderboard"]["sessionmaker"]() as session:
        ann = session.scalar(select(User).where(User.email == "ann@example.org"))
        assert ann is not None
        forged = unsubscribe_token("another secret", ann.id, "deadline")
    resp = mailing_app.test_client().post(f"/unsubscribe/{forged}")
    assert resp.status_code == 400
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_without_a_base_url_nothing_is_queued(make_app: AppFactory) -> None:
    app = make_app()
    make_participant(app, "Aurora", "ann@example.org")
    assert not send_to(app, "ann@example.org", "deadline")
    assert queued(app) == []


def test_every_kind_has_a_checkbox() -> None:
    assert {f"notify_{k}" for k in KINDS} == set(CHECKBOXES)
