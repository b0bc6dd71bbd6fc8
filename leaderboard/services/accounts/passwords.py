"""Password rules for self-service accounts, password reset and change, and the profile."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.db import get_row
from leaderboard.models import User
from leaderboard.services.accounts.core import _bump_generation, revoke_all_tokens
from leaderboard.services.accounts.links import BadLink, check_link
from leaderboard.services.common import settings as site
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.common.text import clean_text

MIN_LENGTH = 10
MAX_LENGTH = 1000
#: Parts of an address shorter than this are not looked for in a password (too common).
_MIN_PART = 3
hasher = PasswordHasher()


def password_problems(password: str, email: str, site_name: str) -> list[str]:
    """Return what is wrong with a new password (empty when it is acceptable)."""
    problems = []
    if len(password) < MIN_LENGTH:
        problems.append(f"A password needs at least {MIN_LENGTH} characters.")
    if len(password) > MAX_LENGTH:
        problems.append(f"A password has at most {MAX_LENGTH} characters.")
    lowered = password.casefold()
    name = site_name.strip().casefold()
    if len(name) >= _MIN_PART and name in lowered:
        problems.append("The password must not contain the site's name.")
    address = email.strip().casefold()
    local = address.partition("@")[0]
    if any(len(part) >= _MIN_PART and part in lowered for part in (address, local)):
        problems.append("The password must not contain your e-mail address or its local part.")
    return problems


def check_password(session: Session, password: str, email: str) -> None:
    """Raise InvalidInput naming every rule a new password breaks."""
    problems = password_problems(password, email, site.get(session, "site_name"))
    if problems:
        raise InvalidInput(" ".join(problems))


def update_profile(session: Session, user: User, display_name: str, affiliation: str) -> None:
    """Change a user's display name and affiliation."""
    user.display_name = clean_text(display_name, "display name", required=True)
    user.affiliation = clean_text(affiliation, "affiliation")


def change_password(session: Session, user: User, current: str, new: str) -> None:
    """Set a new password after checking the current one; end every session of the user.

    Every API token of the user is revoked too; outstanding reset links die with the old hash
    (they carry its fingerprint).
    """
    try:
        hasher.verify(user.password_hash or "", current)
    except (VerificationError, InvalidHashError):
        raise InvalidInput("The current password is wrong.") from None
    check_password(session, new, user.email)
    user.password_hash = hasher.hash(new)
    _bump_generation(session, user.id)
    revoke_all_tokens(session, user.id)


def reset_target(session: Session, email: str) -> User | None:
    """Return the active account a reset link may be mailed to, or None."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    return user if user is not None and user.is_active else None


def user_for_reset(session: Session, payload: dict[str, Any], now: datetime) -> User:
    """Return the account of a genuine reset link; raise BadLink when used or ExpiredLink."""
    user_id = payload.get("u")
    user = get_row(session, User, user_id) if isinstance(user_id, int) else None
    if user is None or not user.is_active:
        raise BadLink("This link is not valid.")
    # A changed password (also by this very link) changes the fingerprint: single use.
    check_link(
        "reset",
        payload,
        user.password_hash,
        now,
        "This link was already used or the password changed since it was sent; ask for a new one.",
    )
    return user


def reset_password(session: Session, payload: dict[str, Any], password: str, now: datetime) -> User:
    """Set a new password through a reset link; end every session, revoke every token."""
    user = user_for_reset(session, payload, now)
    check_password(session, password, user.email)
    user.password_hash = hasher.hash(password)
    # The link reached the mailbox, so the address is the owner's.
    if user.verified_at is None:
        user.verified_at = now
    _bump_generation(session, user.id)
    revoke_all_tokens(session, user.id)
    return user
