"""Limit failed log-ins per account and per address; the counts live in the shared database."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from leaderboard.models import LoginFailure

WINDOW = timedelta(minutes=15)
PER_ACCOUNT = 5
PER_ADDRESS = 30


class TooManyAttempts(Exception):
    """Log-ins are refused for a while; ``retry_after`` is in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


def check_allowed(session: Session, email: str, remote: str, now: datetime) -> None:
    """Raise TooManyAttempts when the account or the address failed too often recently."""
    since = now - WINDOW
    for column, value, limit in (
        (LoginFailure.email, email.strip().lower(), PER_ACCOUNT),
        (LoginFailure.remote, remote, PER_ADDRESS),
    ):
        count, oldest = session.execute(
            select(func.count(), func.min(LoginFailure.at)).where(
                column == value, LoginFailure.at >= since
            )
        ).one()
        if count >= limit:
            oldest_at = oldest if oldest.tzinfo else oldest.replace(tzinfo=now.tzinfo)
            raise TooManyAttempts(max(1, int((oldest_at + WINDOW - now).total_seconds())))


def record_failure(session: Session, email: str, remote: str, now: datetime) -> None:
    """Count one failed log-in (and forget failures older than the window)."""
    session.execute(delete(LoginFailure).where(LoginFailure.at < now - WINDOW))
    session.add(LoginFailure(email=email.strip().lower()[:320], remote=remote[:64], at=now))
    session.commit()


def clear_failures(session: Session, email: str) -> None:
    """Forget an account's failures after it logged in."""
    session.execute(delete(LoginFailure).where(LoginFailure.email == email.strip().lower()))
    session.commit()
