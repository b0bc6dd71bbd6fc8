"""The organizer's view of accounts: list, disable, enable, resend verification, invite."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from leaderboard.db import get_row
from leaderboard.formats.issues import quoted
from leaderboard.models import User
from leaderboard.services.accounts import core as accounts
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Conflict, NotFound
from leaderboard.services.signup.core import normalize_email


def list_users(session: Session) -> list[User]:
    """Return every account with its team, by e-mail address."""
    return list(session.scalars(select(User).options(joinedload(User.team)).order_by(User.email)))


def user_by_id(session: Session, user_id: int) -> User:
    """Return the account with this id or raise NotFound."""
    user = get_row(session, User, user_id)
    if user is None:
        raise NotFound(f"No account with id {user_id}.")
    return user


def set_active(session: Session, user: User, active: bool, *, actor: str) -> None:
    """Disable or enable an account (audited); an organizer cannot disable their own."""
    if not active and user.email == actor:
        raise Conflict("You cannot disable your own account.")
    if active:
        accounts.enable_user(session, user.email, actor=actor)
    else:
        accounts.disable_user(session, user.email, actor=actor)


def unverified_for_resend(session: Session, email: str, *, actor: str) -> User:
    """Return an unverified account an organizer resends the link to, recording it."""
    user = accounts.find_user(session, email)
    if user.verified_at is not None:
        raise Conflict(f"{quoted(user.email)} is verified already.")
    if not user.is_active:
        raise Conflict(f"{quoted(user.email)} is disabled; enable it first.")
    record(session, actor, "resend-verification", email=user.email)
    # Committed with the mail it sends (the record and the mail stand or fall together).
    session.flush()
    return user


def invitable(session: Session, email: str, *, actor: str) -> str:
    """Return the normalized address an organizer invites, recording it; refuse known ones."""
    email = normalize_email(email)
    if session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict(f"{quoted(email)} already has an account.")
    record(session, actor, "invite-user", email=email)
    # Committed with the mail it sends (the record and the mail stand or fall together).
    session.flush()
    return email
