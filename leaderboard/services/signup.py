"""Self-service sign-up, registration modes and the verification of e-mail addresses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.formats.issues import shown
from leaderboard.models import Team, User
from leaderboard.services import settings as site
from leaderboard.services.errors import Forbidden, InvalidInput
from leaderboard.services.links import BadLink, check_age, fingerprint
from leaderboard.services.mail import is_plain_address
from leaderboard.services.passwords import check_password, clean_text, hasher
from leaderboard.services.teams import has_room, usable_team_by_code


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
    """What to mail after a sign-up: ``verify`` (the link), ``exists`` (a hint) or nothing."""

    mail: str | None
    user: User | None


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
        raise InvalidInput(f"{shown(email)} is not an e-mail address.")
    return email


def sign_up(session: Session, form: SignUp, now: datetime) -> Outcome:
    """Create an unverified account without a team, or tell which mail an existing one gets.

    Known and unknown addresses take the same path up to the database, including the
    argon2 hash, so that neither the answer nor its timing tells them apart.
    """
    refusal = registration_refusal(session, form.invite_code, form.invited_email)
    if refusal:
        raise Forbidden(refusal)
    email = normalize_email(form.email)
    if form.invited_email and email != form.invited_email:
        raise InvalidInput(f"This invitation is for {form.invited_email}; sign up with it.")
    display_name = clean_text(form.display_name, "display name", required=True)
    affiliation = clean_text(form.affiliation, "affiliation", required=False)
    check_password(session, form.password, email)
    if site.get(session, "terms") and not form.accepted_terms:
        raise InvalidInput("Accept the terms to sign up.")
    password_hash = hasher.hash(form.password)
    existing = session.scalar(select(User).where(User.email == email))
    if existing is not None:
        return _known(session, existing, form, password_hash, display_name, affiliation, now)
    user = User(
        email=email,
        role="participant",
        team=None,
        password_hash=password_hash,
        display_name=display_name,
        affiliation=affiliation,
        verified_at=None,
        terms_accepted_at=now if form.accepted_terms else None,
        created_at=now,
    )
    session.add(user)
    try:
        session.commit()
    except IntegrityError:  # signed up at the same moment by another request
        session.rollback()
        return Outcome(None, None)
    return Outcome("verify", user)


def _known(
    session: Session,
    user: User,
    form: SignUp,
    password_hash: str,
    display_name: str,
    affiliation: str,
    now: datetime,
) -> Outcome:
    if not user.is_active:
        return Outcome(None, None)
    if user.verified_at is not None:
        return Outcome("exists", user)
    # Still unverified: the newest sign-up's details win and only its link verifies (the link
    # carries the password's fingerprint), so a stranger who signed up first with this address
    # cannot keep a password of theirs on the owner's account.
    user.password_hash = password_hash
    user.display_name = display_name
    user.affiliation = affiliation
    user.terms_accepted_at = now if form.accepted_terms else None
    session.commit()
    return Outcome("verify", user)


def verification_payload(user: User, invite_code: str = "") -> dict[str, Any]:
    """Return what a verification link carries for this account."""
    return {"u": user.id, "h": fingerprint(user.password_hash), "j": invite_code}


def verification_user(session: Session, payload: dict[str, Any]) -> User:
    """Return the account of a genuine verification link; raise BadLink when it names none."""
    user_id = payload.get("u")
    user = session.get(User, user_id) if isinstance(user_id, int) else None
    if user is None:
        raise BadLink("This link is not valid: its account does not exist.")
    return user


def pending_verification(session: Session, payload: dict[str, Any], now: datetime) -> User | None:
    """Return the account a link would verify, or None when it is verified already.

    Raise BadLink when a newer sign-up replaced the link, ExpiredLink when it is too old.
    """
    user = verification_user(session, payload)
    if user.verified_at is not None:
        return None
    if payload.get("h") != fingerprint(user.password_hash):
        raise BadLink(
            "This link was replaced by a newer sign-up with this address; use the link in "
            "the newest mail."
        )
    check_age("verify", payload, now)
    return user


def verify(session: Session, payload: dict[str, Any], now: datetime) -> bool:
    """Verify the account of a link; return False when it was verified already."""
    user = pending_verification(session, payload, now)
    if user is None:
        return False
    user.verified_at = now
    session.commit()
    return True


def resend_target(session: Session, email: str) -> User | None:
    """Return the active, unverified account a verification link may be mailed to, or None."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.is_active or user.verified_at is not None:
        return None
    return user
