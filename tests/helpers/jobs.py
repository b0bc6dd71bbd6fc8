"""Look at the jobs of a test app and give a worker process its environment."""

from __future__ import annotations

from flask import Flask
from sqlalchemy.orm import undefer

from bench._common import server_env
from leaderboard.models import Job
from tests.conftest import database_url


def sessions(app: Flask):  # type: ignore[no-untyped-def]
    """Return the app's sessionmaker."""
    return app.extensions["leaderboard"]["sessionmaker"]


def job_row(app: Flask, job: int) -> Job:
    """Return the analysis row of ``job``, its report loaded, detached from its session."""
    with sessions(app)() as session:
        row = session.get(Job, job, options=[undefer(Job.report)])
        assert row is not None
        session.expunge(row)
        return row


def worker_env(app: Flask, **settings: str) -> dict[str, str]:
    """Return the environment of a worker process on this app's instance and database."""
    config = app.extensions["leaderboard"]["settings"]
    return server_env(
        config.instance_dir,
        database_url(app),
        LEADERBOARD_SECRET_KEY=config.secret_key,
        **settings,
    )
