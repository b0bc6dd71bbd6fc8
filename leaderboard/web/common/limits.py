"""Count a request against the attempt limits in units of work of their own."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from typing import TypeVar

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from leaderboard.services.common.throttle import TooManyAttempts, forget_expired
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now

Claimed = TypeVar("Claimed")

#: Tries at a claim when the database gave up waiting for a lock.
TRIES = 5


def counted(claim: Callable[[Session, datetime], Claimed]) -> Claimed:
    """Run a throttle claim in a unit of its own, committed before the request's slow work."""
    # So a request refused later (a wrong password, a taken name) keeps its count. A claim the
    # database gave up on is tried again, and refused for a second when it gives up every time.
    session, at = db(), now()
    # Housekeeping only: when the database is busy, the next attempt tries again.
    with suppress(OperationalError), unit_of(session):
        forget_expired(session, at)
    for _ in range(TRIES):
        # The database gave up waiting for a lock (SQLite busy past its timeout): rolled back.
        with suppress(OperationalError), unit_of(session):
            return claim(session, at)
    raise TooManyAttempts(1)
