"""Request-scoped access to the reader, the session, the file store, the settings and the queue."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime
from typing import Any

from flask import current_app, g
from flask_login import current_user
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.clock import Clock
from leaderboard.config import Settings
from leaderboard.jobqueue import Dispatcher
from leaderboard.models import User
from leaderboard.services.accounts.core import take_note
from leaderboard.storage import Store
from leaderboard.unit_of_work import unit_of


def _ext() -> dict[str, Any]:
    return current_app.extensions["leaderboard"]


def viewer() -> User | None:
    """Return the logged-in user, if any."""
    return current_user._get_current_object() if current_user.is_authenticated else None


def db() -> Session:
    """Return this request's database session (closed when the request ends)."""
    if "db" not in g:
        factory: sessionmaker[Session] = _ext()["sessionmaker"]
        g.db = factory()
    return g.db


def store() -> Store:
    """Return the file store."""
    return _ext()["store"]


def now() -> datetime:
    """Return the current time by the server's clock (controllable in tests and rehearsals)."""
    clock: Clock = _ext()["clock"]
    return clock.now()


def settings() -> Settings:
    """Return the server settings."""
    return _ext()["settings"]


def queue() -> Dispatcher:
    """Return the queue this process hands background work to."""
    return _ext()["dispatcher"]


def commit_token_note(session: Session) -> None:
    """Commit a token's note of use that no commit has written yet, in a transaction of its own."""
    write = take_note(session)
    if write is not None:
        # A note of use is not worth failing the request for.
        with suppress(OperationalError), unit_of(session):
            write(session)


def close_db(_exc: BaseException | None = None) -> None:
    """Roll back anything uncommitted, write a pending token note and close the session."""
    session = g.pop("db", None)
    if session is not None:
        session.rollback()
        commit_token_note(session)
        session.close()
