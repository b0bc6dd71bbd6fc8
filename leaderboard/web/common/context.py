"""Request-scoped access to the reader, the session, the file store, the settings and the queue."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import current_app, g
from flask_login import current_user
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.clock import Clock
from leaderboard.config import Settings
from leaderboard.jobqueue import Dispatcher
from leaderboard.models import User
from leaderboard.services.accounts.core import note_pending_use
from leaderboard.storage import Store


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


def close_db(_exc: BaseException | None = None) -> None:
    """Roll back anything uncommitted and close this request's session."""
    session = g.pop("db", None)
    if session is not None:
        note_pending_use(session)
        session.rollback()
        session.close()
