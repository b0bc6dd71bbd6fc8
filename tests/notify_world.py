"""A campaign for the notification tests: teams in every state a message audience tells apart."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask
from sqlalchemy import select

from leaderboard.models import DataDownload, NotificationOptOut, Task, Team, TermsAcceptance, User
from tests.runs import GOLD_TEST_A, api_upload, constant_run, make_participant, token_for

T3 = "semeval2016-task3"
PASSWORD = "correct horse battery"
#: Aurora: a primary run in A (alice captain, amy); Borealis: a contrastive run in A only (bob);
#: Cygnus: accepted the terms (carl); Dorado: downloaded data (dora); Eridanus: nothing (ed);
#: Fornax: waiting for approval (fay); Gemini: a primary run in A, then withdrawn (gil).
TEAMS = {
    "Aurora": ["alice@example.org", "amy@example.org"],
    "Borealis": ["bob@example.org"],
    "Cygnus": ["carl@example.org"],
    "Dorado": ["dora@example.org"],
    "Eridanus": ["ed@example.org"],
    "Fornax": ["fay@example.org"],
    "Gemini": ["gil@example.org"],
}
AT = datetime(2016, 1, 10, tzinfo=UTC)


def sessions(app: Flask):  # type: ignore[no-untyped-def]
    return app.extensions["leaderboard"]["sessionmaker"]


def user_id(app: Flask, email: str) -> int:
    with sessions(app)() as session:
        found = session.scalar(select(User.id).where(User.email == email))
        assert found is not None
        return int(found)


def turn_off(app: Flask, email: str, kind: str) -> None:
    """Record that a user turned a kind of mail off."""
    with sessions(app)() as session:
        session.add(NotificationOptOut(user_id=user_id(app, email), kind=kind))
        session.commit()


def build(app: Flask) -> None:
    """Make the teams above, their runs and their traces in the task."""
    for team, emails in TEAMS.items():
        for email in emails:
            make_participant(app, team, email, PASSWORD)
    client = app.test_client()
    run = constant_run(GOLD_TEST_A)
    for email, slot in (
        ("alice@example.org", "primary"),
        ("bob@example.org", "contrastive1"),
        ("gil@example.org", "primary"),
    ):
        resp = api_upload(client, token_for(app, email), run, slot=slot)
        assert resp.status_code == 201, resp.get_json()
    with sessions(app)() as session:
        task = session.scalar(select(Task).where(Task.slug == T3))
        assert task is not None
        session.add(
            TermsAcceptance(
                user_id=user_id(app, "carl@example.org"), task_id=task.id, accepted_at=AT
            )
        )
        session.add(
            DataDownload(user_id=user_id(app, "dora@example.org"), task_id=task.id, first_at=AT)
        )
        fornax = session.scalar(select(Team).where(Team.name == "Fornax"))
        gemini = session.scalar(select(Team).where(Team.name == "Gemini"))
        assert fornax is not None and gemini is not None
        fornax.approved = False
        gemini.withdrawn_at = AT
        session.commit()
