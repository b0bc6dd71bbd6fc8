"""Limit log-ins, sign-ups, reset and resend requests with counters in the shared database."""

# Three limits, each counted in a window that starts at the first counted attempt:
# - an account from one address ("pair"): the lockout, which never blocks the owner elsewhere;
# - an account from all addresses ("account"): a much higher cap against distributed guessing;
# - an address over all accounts ("address"): against one address trying many accounts.
# An attempt takes a slot in all three with conditional UPDATEs (count < limit) in one
# transaction and commits before the password is verified, so parallel requests on any number
# of workers and hosts cannot exceed a limit; a successful log-in gives its slots back.
# Sign-ups, password-reset and verification-resend requests are counted the same way, per
# address and per account (e-mail), in windows of an hour (REQUEST_LIMITS).

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from leaderboard.db import transaction
from leaderboard.models import LoginCounter

WINDOW = timedelta(minutes=15)
PER_PAIR = 5
PER_ACCOUNT = 100
PER_ADDRESS = 30
#: Requests per hour of each mailing action: (per address, per account).
#: "team" counts the team names a participant tries (/teams/new), so that names cannot be
#: guessed quickly while they are anonymous.
REQUEST_LIMITS = {"signup": (20, 5), "reset": (20, 5), "resend": (20, 5), "team": (60, 10)}
REQUEST_WINDOW = timedelta(hours=1)
#: The window of each scope that is not a log-in scope.
_WINDOWS = {
    f"{action}-{kind}": REQUEST_WINDOW
    for action in REQUEST_LIMITS
    for kind in ("address", "account")
}
#: Tries at a claim when a counter row vanished in between or the database gave up on a lock.
_TRIES = 5


class TooManyAttempts(Exception):
    """Log-ins are refused for a while; ``retry_after`` is in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Attempt:
    """The counters one log-in attempt claimed a slot in."""

    keys: tuple[tuple[str, str, int], ...]  # (scope, key, limit), in locking order

    @classmethod
    def of(cls, email: str, remote: str) -> Attempt:
        """Return the counters of a log-in as ``email`` from ``remote``."""
        # PostgreSQL refuses NUL in text; such an address counts under a stand-in character.
        account = email.strip().lower().replace("\x00", "\ufffd")[:320]
        address = remote.replace("\x00", "\ufffd")[:64]
        # The address comes first and has no spaces, so the pair key cannot be ambiguous.
        return cls(
            (
                ("pair", f"{address} {account}", PER_PAIR),
                ("account", account, PER_ACCOUNT),
                ("address", address, PER_ADDRESS),
            )
        )


def _window(scope: str) -> timedelta:
    return _WINDOWS.get(scope, WINDOW)


def claim_request(session: Session, action: str, email: str, remote: str, now: datetime) -> None:
    """Count one sign-up, reset, resend or team-name request; raise TooManyAttempts when over."""
    per_address, per_account = REQUEST_LIMITS[action]
    login = Attempt.of(email, remote)
    account, address = login.keys[1][1], login.keys[2][1]
    attempt = Attempt(
        (
            (f"{action}-address", address, per_address),
            (f"{action}-account", account, per_account),
        )
    )
    _claim_all(session, attempt, now)


def claim_attempt(session: Session, email: str, remote: str, now: datetime) -> Attempt:
    """Count one log-in attempt before its password is checked; raise TooManyAttempts when over."""
    # Known and unknown accounts are counted alike, so the answer tells nothing about either.
    attempt = Attempt.of(email, remote)
    _claim_all(session, attempt, now)
    return attempt


def _claim_all(session: Session, attempt: Attempt, now: datetime) -> None:
    """Take a slot in every counter of ``attempt`` or raise TooManyAttempts."""
    _forget_expired(session, now)
    for _ in range(_TRIES):
        try:
            _ensure_rows(session, attempt, now)
            refused = _claim(session, attempt, now)
        except OperationalError:
            session.rollback()  # SQLite busy past its timeout, or a PostgreSQL deadlock: again
            continue
        if refused is None:
            return
        if refused > 0:
            raise TooManyAttempts(refused)
        # A counter row was removed between the two steps (expired rows are cleared): again.
    raise TooManyAttempts(1)


def attempt_succeeded(session: Session, attempt: Attempt) -> None:
    """Forget the account's failures from this address and give back the attempt's slots."""
    pair = attempt.keys[0]
    session.execute(
        delete(LoginCounter).where(LoginCounter.scope == pair[0], LoginCounter.key == pair[1])
    )
    for scope, key, _limit in attempt.keys[1:]:
        session.execute(
            update(LoginCounter)
            .where(LoginCounter.scope == scope, LoginCounter.key == key, LoginCounter.count > 0)
            .values(count=LoginCounter.count - 1)
            .execution_options(synchronize_session=False)
        )
    session.commit()


def _ensure_rows(session: Session, attempt: Attempt, now: datetime) -> None:
    """Create the attempt's missing counters, committed on their own before any is claimed."""
    rows = [{"scope": s, "key": k, "count": 0, "window_start": now} for s, k, _ in attempt.keys]
    if session.get_bind().dialect.name == "postgresql":
        pg = pg_insert(LoginCounter).values(rows)
        session.execute(pg.on_conflict_do_nothing(index_elements=["scope", "key"]))
    else:
        lite = sqlite_insert(LoginCounter).values(rows)
        session.execute(lite.on_conflict_do_nothing(index_elements=["scope", "key"]))
    session.commit()


def _claim(session: Session, attempt: Attempt, now: datetime) -> int | None:
    """Claim a slot in every counter: None if done, else the seconds to wait (0: a row vanished)."""
    # Nothing is kept unless every counter had room.
    # Rows are always taken in the same order (pair, account, address), so no deadlock.
    for scope, key, limit in attempt.keys:
        window = _window(scope)
        # A window starting far ahead (a rehearsal clock moved back) is over too; a little ahead
        # is normal, as parallel requests read the clock in one order and reach the database in
        # another.
        expired = (LoginCounter.window_start <= now - window) | (
            LoginCounter.window_start > now + window
        )
        this = (LoginCounter.scope == scope, LoginCounter.key == key)
        claimed = session.execute(
            update(LoginCounter)
            .where(*this, expired | (LoginCounter.count < limit))
            .values(
                count=case((expired, 1), else_=LoginCounter.count + 1),
                window_start=case((expired, now), else_=LoginCounter.window_start),
            )
            .execution_options(synchronize_session=False)
        )
        if claimed.rowcount == 1:  # type: ignore[attr-defined]
            continue
        started = session.scalar(select(LoginCounter.window_start).where(*this))
        session.rollback()
        if started is None:
            return 0
        return max(1, int((started + window - now).total_seconds()))
    session.commit()
    return None


def _forget_expired(session: Session, now: datetime) -> None:
    """Delete counters whose window ended, skipping rows another attempt holds."""
    long_scopes = list(_WINDOWS)
    # Request counters keep their hour; log-in counters go after their own window.
    over = (LoginCounter.window_start <= now - REQUEST_WINDOW) | (
        LoginCounter.scope.not_in(long_scopes) & (LoginCounter.window_start <= now - WINDOW)
    )
    stale = select(LoginCounter.id).where(over).with_for_update(skip_locked=True)
    # Housekeeping only: when the database is busy, the next attempt tries again.
    with suppress(OperationalError), transaction(session):
        session.execute(delete(LoginCounter).where(LoginCounter.id.in_(stale)))
