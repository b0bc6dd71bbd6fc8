"""Helpers for the self-service account tests: forms posted with their CSRF token, mailed links."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import URLSafeSerializer
from sqlalchemy import event, select
from werkzeug.test import TestResponse

from leaderboard.models import OutboxMail, User
from leaderboard.services.common import mail, outbox
from tests import dispatch
from tests.conftest import csrf_from
from tests.smtp import Inbox, MailServer, link_in

BASE = "https://lb.example.org"
PASSWORD = "a long enough secret 42"


def mailing(server: MailServer) -> dict[str, str]:
    """Return the app settings that mail through a loopback server, with links under BASE."""
    return {"mail_url": f"smtp://{server.host}:{server.port}", "base_url": BASE}


def post_form(
    client: FlaskClient, path: str, data: dict[str, str], remote: str = "127.0.0.1"
) -> TestResponse:
    """GET a page, then POST its form with the page's CSRF token."""
    page = client.get(path, environ_base={"REMOTE_ADDR": remote})
    token = csrf_from(page.get_data(as_text=True))
    return client.post(
        path, data={**data, "csrf_token": token}, environ_base={"REMOTE_ADDR": remote}
    )


def sign_up(
    client: FlaskClient,
    email: str,
    password: str = PASSWORD,
    query: str = "",
    remote: str = "127.0.0.1",
    **extra: str,
) -> TestResponse:
    """Post the sign-up form."""
    data = {
        "email": email,
        "display_name": "Dana Doe",
        "affiliation": "Example University",
        "password": password,
        "password_confirm": password,
        **extra,
    }
    return post_form(client, f"/signup{query}", data, remote)


def path_of(link: str) -> str:
    """Return a mailed link's path and query, checking that it starts with the base URL."""
    assert link.startswith(BASE + "/"), link
    parts = urlsplit(link)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def last_link(inbox: Inbox, email: str, count: int = 1) -> str:
    """Wait for the ``count``-th mail to ``email`` and return its link's path."""
    return path_of(link_in(inbox.wait_for(email, count)[count - 1]))


def confirm(client: FlaskClient, path: str) -> TestResponse:
    """Open a verification link and press its confirm button."""
    page = client.get(path)
    assert page.status_code == 200, page.get_data(as_text=True)
    return client.post(path, data={"csrf_token": csrf_from(page.get_data(as_text=True))})


def user_row(app: Flask, email: str) -> User | None:
    """Return the account with this address, read afresh."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        user = session.scalar(select(User).where(User.email == email))
        if user is not None:
            session.expunge(user)
        return user


def mails_to(inbox: Inbox, email: str) -> list[EmailMessage]:
    """Return the mails to ``email`` once every background delivery has finished."""
    dispatch.flush()
    return inbox.to(email)


@dataclass
class Work:
    """What one request did: tokens signed, mails composed and handed on, SQL run, commits."""

    signed: int = 0
    composed: int = 0
    handed_on: int = 0
    statements: list[str] = field(default_factory=list)
    commits: int = 0


@contextmanager
def counting(app: Flask) -> Iterator[Work]:
    """Count the work done inside the block: signing, mail building, SQL statements, commits.

    Timing tells known addresses from unknown ones only where the work differs, so tests
    compare the work, which a busy machine does not blur.
    """
    work = Work()
    engine = app.extensions["leaderboard"]["engine"]

    def signing(self: URLSafeSerializer, obj: object, salt: str | None = None) -> Any:
        work.signed += 1
        return dumps(self, obj, salt)

    def composing(*args: Any, **kwargs: Any) -> EmailMessage:
        work.composed += 1
        return compose(*args, **kwargs)

    def handing_on(*args: Any, **kwargs: Any) -> OutboxMail:
        work.handed_on += 1
        return hand_on(*args, **kwargs)

    def statement(conn: Any, cursor: Any, text: str, *rest: Any) -> None:
        work.statements.append(text)

    def commit(conn: Any) -> None:
        work.commits += 1

    dumps, compose, hand_on = URLSafeSerializer.dumps, mail.compose, outbox.put
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(URLSafeSerializer, "dumps", signing)
        patch.setattr(mail, "compose", composing)
        patch.setattr(outbox, "put", handing_on)
        event.listen(engine, "before_cursor_execute", statement)
        event.listen(engine, "commit", commit)
        try:
            yield work
        finally:
            event.remove(engine, "before_cursor_execute", statement)
            event.remove(engine, "commit", commit)
            dispatch.flush()
