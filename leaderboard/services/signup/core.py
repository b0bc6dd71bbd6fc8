"""Self-service sign-up, registration modes and the verification of e-mail addresses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from leaderboard.db import get_row
from leaderboard.formats.issues import quoted
from leaderboard.models import Team, User
from leaderboard.services.accounts.links import BadLink, check_link, fingerprint
from leaderboard.services.accounts.passwords import check_password, hasher
from leaderboard.services.common import settings as site
from leaderboard.services.common.errors import Forbidden, InvalidInput
from leaderboard.services.common.mail import is_plain_address
from leaderboard.services.common.text import clean_text
from leaderboard.services.teams.members import has_room, usable_team_by_code
from leaderboard.states import Role


@dataclass(frozen=True)
class SignUp:
    """What a visitor entered on the sign-up form, and the invitation they came with."""

    email: str
    display_name: str
    password: str
    affiliation: str = ""
    accepted_terms: bool = False
    #: A team's invite code from the link (``?invite=``), or "".
    invite_code: str = ""
    #: The address an organizer's checked invitation is for, or "".
    invited_email: str = ""


@dataclass(frozen=True)
class Outcome:
    """What to mail after a sign-up, and to whom.

    ``mail`` is ``verify`` (a new account: its link), ``exists`` (a verified account: a hint
    with a reset link) or ``pending`` (an account waiting for confirmation: nothing changed, a
    reset link). ``deliver`` is False for a disabled account: its mail is built all the same,
    then dropped, so that the answer costs the same.
    """

    mail: str
    user: User
    deliver: bool = True


def team_for_invite(session: Session, code: str) -> Team | None:
    """Return the team whose invite code this is, or None (also for a withdrawn team)."""
    return usable_team_by_code(session, code)


def registration_refusal(session: Session, invite_code: str, invited_email: str) -> str | None:
    """Return why sign-up is refused in the current registration mode, or None if allowed.

    In ``invite`` mode a team's code admits a sign-up only while the team could take the
    newcomer: not withdrawn, and with room.
    """
    mode = site.registration(session)
    if mode == "closed":
        return "Registration is closed."
    if mode != "invite" or invited_email:
        return None
    team = team_for_invite(session, invite_code)
    if team is None:
        return (
            "Registration is by invitation only: open the invitation link an organizer or a "
            "team sent you."
        )
    if not has_room(session, team):
        return (
            "Registration is by invitation only, and the team of this invitation link is full: "
            "ask its captain."
        )
    return None


def normalize_email(email: str) -> str:
    """Return an e-mail address stripped and lower-cased, refusing what is not one."""
    email = clean_text(email, "e-mail address", required=True, limit=320).lower()
    # One plain address: no display name, comment, list or quoting that a mail header or an
    # SMTP server would read as more (or other) recipients.
    if not is_plain_address(email):
        raise InvalidInput(f"{quoted(email)} is not an e-mail address.")
    return email


def sign_up(session: Session, form: SignUp, now: datetime) -> Outcome:
    """Create an unverified account without a team, or tell which mail an existing one gets.

    Known and unknown addresses do the same work up to the mail: the argon2 hash, one insert
    that an existing address turns into nothing, one read of the account and one commit (and
    the caller builds and signs one mail either way), so that neither the answer nor its
    timing tells them apart. An existing account, verified or not, is left as it was: a
    second sign-up never replaces the password of a pending one.
    """
    refusal = registration_refusal(session, form.invite_code, form.invited_email)
    if refusal:
        raise Forbidden(refusal)
    email = normalize_email(form.email)
    if form.invited_email and email != form.invited_email:
        raise InvalidInput(f"This invitation is for {form.invited_email}; sign up with it.")
    display_name = clean_text(form.display_name, "display name", required=True)
    affiliation = clean_text(form.affiliation, "affiliation")
    check_password(session, form.password, email)
    if site.get(session, "terms") and not form.accepted_terms:
        raise InvalidInput("Accept the terms to sign up.")
    new = {
        "email": email,
        "role": Role.PARTICIPANT,
        "team_id": None,
        "password_hash": hasher.hash(form.password),
        "display_name": display_name,
        "affiliation": affiliation,
        "verified_at": None,
        "terms_accepted_at": now if form.accepted_terms else None,
        "created_at": now,
    }
    dialect = session.get_bind().dialect.name
    insert = pg_insert(User) if dialect == "postgresql" else sqlite_insert(User)
    added = session.execute(
        insert.values(new).on_conflict_do_nothing(index_elements=["email"]).returning(User.id)
    ).scalar_one_or_none()
    user = session.scalars(
        select(User).where(User.email == email).execution_options(populate_existing=True)
    ).one()
    # Committed with its mail (the caller puts one in the outbox whatever the address).
    session.flush()
    if added is not None:
        return Outcome("verify", user)
    if not user.is_active:
        return Outcome("exists", user, deliver=False)
    return Outcome("exists" if user.verified_at is not None else "pending", user)


def verification_payload(user: User, invite_code: str = "") -> dict[str, Any]:
    """Return what a verification link carries for this account."""
    return {"u": user.id, "h": fingerprint(user.password_hash), "j": invite_code}


def verification_user(session: Session, payload: dict[str, Any]) -> User:
    """Return the account of a genuine verification link; raise BadLink when it names none."""
    user_id = payload.get("u")
    user = get_row(session, User, user_id) if isinstance(user_id, int) else None
    if user is None:
        raise BadLink("This link is not valid: its account does not exist.")
    return user


def pending_verification(session: Session, payload: dict[str, Any], now: datetime) -> User | None:
    """Return the account a link would verify, or None when it is verified already.

    Raise BadLink when the password changed since the link was sent (a reset, which
    verifies, or an organizer's set-password), ExpiredLink when it is too old.
    """
    user = verification_user(session, payload)
    if user.verified_at is not None:
        return None
    check_link(
        "verify",
        payload,
        user.password_hash,
        now,
        "This link is no longer valid: the account's password changed since it was sent. "
        "Log in, or ask for a new link.",
    )
    return user


def verify(session: Session, payload: dict[str, Any], now: datetime) -> bool:
    """Verify the account of a link; return False when it was verified already."""
    user = pending_verification(session, payload, now)
    if user is None:
        return False
    user.verified_at = now
    return True


def stand_in(email: str) -> User:
    """Return an unsaved account for an address that gets no mail (its mail is built, dropped)."""
    return User(id=0, email=email.strip().lower(), password_hash="", display_name="")


def resend_target(session: Session, email: str) -> User | None:
    """Return the active, unverified account a verification link may be mailed to, or None."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.is_active or user.verified_at is not None:
        return None
    return user
