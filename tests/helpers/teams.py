"""Make participants, log them in and post the team forms."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from leaderboard.models import User, utcnow
from leaderboard.services.accounts import core as accounts
from tests.conftest import csrf_from, login

PASSWORD = "correct horse battery"


def loose_participant(app: Flask, email: str, name: str = "") -> None:
    """Create a verified participant without a team (as sign-up will)."""
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        s.add(
            User(
                email=email,
                role="participant",
                password_hash=accounts._hasher.hash(PASSWORD),
                verified_at=utcnow(),
                display_name=name,
            )
        )
        s.commit()


def client_of(app: Flask, email: str, password: str = PASSWORD) -> FlaskClient:
    """Return a test client logged in as ``email``."""
    client = app.test_client()
    login(client, email, password)
    return client


def post(client: FlaskClient, path: str, page: str = "/", **data: str) -> tuple[int, str]:
    """POST a form with the session's CSRF token; return status and the followed page text."""
    token = csrf_from(client.get("/").get_data(as_text=True))
    resp = client.post(path, data={"csrf_token": token, **data}, follow_redirects=True)
    return resp.status_code, resp.get_data(as_text=True)


def create(client: FlaskClient, name: str, affiliation: str = "") -> tuple[int, str]:
    """Create the team ``name`` with the form; return status and page text."""
    return post(client, "/teams/new", "/teams/new", name=name, affiliation=affiliation)
