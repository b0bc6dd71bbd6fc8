"""Limit log-ins, sign-ups, reset and resend requests with counters in the shared database."""

# Three limits, each counted in a window that starts at the first counted attempt:
# - an account from one address ("pair"): the lockout, which never blocks the owner elsewhere;
# - an account from all addresses ("account"): a much higher cap against distributed guessing;
# - an address over all accounts ("address"): against one address trying many accounts.
# An attempt locks all three counters, checks their room and takes a slot in each with
# conditional UPDATEs (count < limit) in one transaction, which the request commits before the
# password is verified, so parallel requests on any number of workers and hosts cannot exceed a
# limit, and a refused log-in keeps its count; a successful log-in gives its slots back.
# Expired counters are forgotten (forget_expired) in a transaction of their own before a claim.
# Sign-ups, password-reset and verification-resend requests are counted the same way, per
# address and per account (e-mail), in windows of an hour (REQUEST_LIMITS).

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

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
    # The caller commits the count on its own, so that a request refused later keeps it.
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
    # The caller commits the count before checking the password: a wrong one keeps it, and
    # SQLite's write lock is not held while the password is hashed.
    # Known and unknown accounts are counted alike, so the answer tells nothing about either.
    attempt = Attempt.of(email, remote)
    _claim_all(session, attempt, now)
    return attempt


def _claim_all(session: Session, attempt: Attempt, now: datetime) -> None:
    """Take a slot in every counter of ``attempt`` or raise TooManyAttempts, taking none."""
    # Every counter is locked and checked before any is claimed, so a refusal has nothing to
    # undo, and the lock keeps the room found until the claim. Rows are always locked in the same
    # order (pair, account, address), so no deadlock.
    for scope, key, limit in attempt.keys:
        room, started = _lock(session, scope, key, limit, now)
        if not room:
            raise TooManyAttempts(max(1, int((started + _window(scope) - now).total_seconds())))
    for scope, key, limit in attempt.keys:
        expired = _expired(scope, now)
        session.execute(
            update(LoginCounter)
            .where(*_this(scope, key), expired | (LoginCounter.count < limit))
            .values(
                count=case((expired, 1), else_=LoginCounter.count + 1),
                window_start=case((expired, now), else_=LoginCounter.window_start),
            )
            .execution_options(synchronize_session=False)
        )


def attempt_succeeded(session: Session, attempt: Attempt) -> None:
    """Forget the account's failures from this address and give back the attempt's slots."""
    pair = attempt.keys[0]
    session.execute(delete(LoginCounter).where(*_this(pair[0], pair[1])))
    for scope, key, _limit in attempt.keys[1:]:
        session.execute(
            update(LoginCounter)
            .where(*_this(scope, key), LoginCounter.count > 0)
            .values(count=LoginCounter.count - 1)
            .execution_options(synchronize_session=False)
        )


def _this(scope: str, key: str) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    return LoginCounter.scope == scope, LoginCounter.key == key


def _expired(scope: str, now: datetime) -> ColumnElement[bool]:
    """Return whether a counter's window is over at ``now``."""
    window = _window(scope)
    # A window starting far ahead (a rehearsal clock moved back) is over too; a little ahead is
    # normal, as parallel requests read the clock in one order and reach the database in another.
    return (LoginCounter.window_start <= now - window) | (LoginCounter.window_start > now + window)


def _lock(
    session: Session, scope: str, key: str, limit: int, now: datetime
) -> tuple[bool, datetime]:
    """Make a counter if missing and lock it; return whether it has room and since when it counts."""
    # An upsert, not a read: it locks the row, and a row removed meanwhile is made again.
    row = {"scope": scope, "key": key, "count": 0, "window_start": now}
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    locked = (
        insert(LoginCounter)
        .values(row)
        .on_conflict_do_update(index_elements=["scope", "key"], set_={"count": LoginCounter.count})
        .returning(_expired(scope, now) | (LoginCounter.count < limit), LoginCounter.window_start)
    )
    room, started = session.execute(locked).one()
    return bool(room), started


def forget_expired(session: Session, now: datetime) -> None:
    """Delete counters whose window ended, skipping rows another attempt holds."""
    # Committed on its own before a claim: it waits for no lock, so a claim waiting for its
    # deletions cannot make a deadlock with it.
    long_scopes = list(_WINDOWS)
    # Request counters keep their hour; log-in counters go after their own window.
    over = (LoginCounter.window_start <= now - REQUEST_WINDOW) | (
        LoginCounter.scope.not_in(long_scopes) & (LoginCounter.window_start <= now - WINDOW)
    )
    stale = select(LoginCounter.id).where(over).with_for_update(skip_locked=True)
    session.execute(delete(LoginCounter).where(LoginCounter.id.in_(stale)))
