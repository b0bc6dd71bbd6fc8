"""Teams, users, passwords (argon2) and API tokens (only their SHA-256 is stored)."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache
from typing import cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Table, bindparam, exists, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from leaderboard.db import expire_loaded, get_row
from leaderboard.formats.issues import quoted
from leaderboard.models import MAX_NAME_KEY, ApiToken, Phase, Team, User, team_name_key, utcnow
from leaderboard.services.common import settings as site_settings
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.common.text import clean_text
from leaderboard.states import NameMode, Role
from leaderboard.unit_of_work import unit_of

ROLES = tuple(Role)
TOKEN_PREFIX = "lb_"
MAX_TOKEN_NAME = 100
#: How stale a token's recorded last use may get before a request writes it again.
LAST_USED_STEP = timedelta(minutes=1)
_hasher = PasswordHasher()


@cache
def dummy_hash() -> str:
    """Return the hash verified against when an e-mail is unknown (computed once per process).

    A login takes as long either way. It is computed when first asked for, not at import: a
    command that imports this module to store a run would otherwise spend 0.2 s hashing; the
    web app asks for it when it starts, so no login pays for it.
    """
    return _hasher.hash("not a real password")


#: Keys of names that read as an anonymous table's labels ("Team 12"): a team so named would
#: pass for another, anonymised team.
RESERVED_NAME = re.compile(r"team[\s#._-]*\d+")
#: The one answer to a participant whose team name cannot be used while names are anonymous.
UNUSABLE_NAME = "This team name cannot be used; choose another one."


def clean_team_name(name: str) -> str:
    """Return a team name stripped; refuse it empty, overlong, invisible or with control characters."""
    name = clean_text(name, "team name", required=True)
    key = team_name_key(name)
    if not key:
        raise InvalidInput("The team name must contain a visible character.")
    if len(key) > MAX_NAME_KEY:
        raise InvalidInput("The team name is too long.")
    return name


def names_anonymous(session: Session) -> bool:
    """Return whether any phase shows team names anonymously."""
    return bool(session.scalar(select(exists().where(Phase.names == NameMode.ANONYMOUS))))


def taken_name(name: str, *, discreet: bool) -> Conflict:
    """Return the refusal of a name another team has (one generic answer when ``discreet``)."""
    return Conflict(UNUSABLE_NAME if discreet else f"A team named {quoted(name)} already exists.")


def check_name_usable(
    session: Session, name: str, *, team_id: int | None = None, discreet: bool = False
) -> None:
    """Refuse a name reserved for anonymous labels or read alike with another team's.

    ``team_id`` is the team being renamed (its own name is no clash); ``discreet`` answers
    every unusable name alike, so that the answer does not confirm that a team exists.
    """
    key = team_name_key(name)
    if RESERVED_NAME.fullmatch(key):
        raise Conflict(
            UNUSABLE_NAME
            if discreet
            else f"Names like {quoted(name)} are reserved: anonymous tables call teams Team 1, "
            "Team 2, …; choose another name."
        )
    other = session.scalar(select(Team).where(Team.name_key == key))
    if other is not None and other.id != team_id:
        raise taken_name(other.name, discreet=discreet)


def create_team(session: Session, name: str, *, actor: str = "cli") -> Team:
    """Create a team with a unique name."""
    name = clean_team_name(name)
    check_name_usable(session, name)
    team = Team(name=name, invite_code=secrets.token_urlsafe(18))
    try:
        session.add(team)
        record(session, actor, "create-team", team=name)
        session.flush()  # a name taken meanwhile is caught here, not at the caller's commit
    except IntegrityError:
        raise taken_name(name, discreet=False) from None
    return team


def team_for_import(session: Session, name: str, *, actor: str) -> Team:
    """Return the team with this name, adding it (flushed, not committed) if there is none.

    The caller's transaction decides: a refused import rolls the new team back with the run.
    """
    name = clean_team_name(name)
    team = session.scalar(select(Team).where(Team.name_key == team_name_key(name)))
    if team is None:
        check_name_usable(session, name)
        team = Team(name=name, invite_code=secrets.token_urlsafe(18))
        session.add(team)
        record(session, actor, "create-team", team=name)
        session.flush()
    return team


def list_teams(session: Session) -> list[Team]:
    """Return every team by name."""
    return list(session.scalars(select(Team).order_by(Team.name)))


def find_team(session: Session, name: str) -> Team:
    """Return the team with this name (or one that reads alike) or raise NotFound."""
    team = session.scalar(select(Team).where(Team.name_key == team_name_key(name)))
    if team is None:
        raise NotFound(f"No team named {quoted(name)}.")
    return team


def create_user(
    session: Session,
    email: str,
    *,
    role: str,
    team: str | None = None,
    password: str | None = None,
    actor: str = "cli",
) -> User:
    """Create a user; participants must belong to a team."""
    email = clean_text(email, "e-mail address", required=True, limit=320).lower()
    if "@" not in email:
        raise InvalidInput(f"{quoted(email)} is not an e-mail address.")
    if role not in ROLES:
        raise InvalidInput(f"Role must be one of {', '.join(ROLES)}.")
    role = Role(role)
    team_obj = find_team(session, team) if team else None
    if role == Role.PARTICIPANT and team_obj is None:
        raise InvalidInput("A participant must belong to a team (--team NAME).")
    if role == Role.ORGANIZER and team_obj is not None:
        raise InvalidInput("Organizers cannot be team members; leave out --team.")
    # The first member of a team becomes its captain, so every team has someone to manage it.
    captain = team_obj is not None and not any(m.is_captain for m in team_obj.members)
    if team_obj is not None and team_obj.withdrawn_at is not None:
        raise Conflict(f"Team {quoted(team_obj.name)} is withdrawn: nobody can join it.")
    if team_obj is not None and len(team_obj.members) >= site_settings.max_team_size(session):
        raise Conflict(f"Team {quoted(team_obj.name)} is full (see the max_team_size setting).")
    if session.scalar(select(User).where(User.email == email)) is not None:
        raise Conflict(f"A user with e-mail {quoted(email)} already exists.")
    if team_obj is not None and team_obj.invite_code is None:
        team_obj.invite_code = secrets.token_urlsafe(18)  # a team left empty gets a link again
    user = User(
        email=email,
        role=role,
        team=team_obj,
        is_captain=captain,
        joined_team_at=utcnow() if team_obj is not None else None,
        password_hash=_hasher.hash(password) if password else None,
        # An organizer vouches for the address of an account they make.
        verified_at=utcnow(),
    )
    try:
        session.add(user)
        record(session, actor, "create-user", email=email, role=role, team=team)
        session.flush()  # an address taken meanwhile is caught here, not at the caller's commit
    except IntegrityError:
        raise Conflict(f"A user with e-mail {quoted(email)} already exists.") from None
    return user


def find_user(session: Session, email: str) -> User:
    """Return the user with this e-mail address or raise NotFound."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise NotFound(f"No user with e-mail {quoted(email)}.")
    return user


def set_password(session: Session, email: str, password: str, *, actor: str = "cli") -> None:
    """Set a user's password; end every session and revoke every API token of the user."""
    if len(password) < 8:
        raise InvalidInput("A password needs at least 8 characters.")
    user = find_user(session, email)
    user.password_hash = _hasher.hash(password)
    _bump_generation(session, user.id)
    revoke_all_tokens(session, user.id)
    record(session, actor, "set-password", email=user.email)


def _bump_generation(session: Session, user_id: int) -> None:
    """End every session of a user (in the caller's transaction)."""
    # Relative to the stored value, so two concurrent bumps both count.
    session.execute(
        update(User)
        .where(User.id == user_id)
        .values(session_generation=User.session_generation + 1)
        .execution_options(synchronize_session=False)
    )
    expire_loaded(session, User, user_id, ["session_generation"])


def revoke_all_tokens(session: Session, user_id: int) -> int:
    """Revoke every token of a user (in the caller's transaction); return how many were live.

    A new password or a disabled account must shut the API door too: a token taken along with
    the old password would otherwise outlive it.
    """
    result = session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    for loaded in list(session.identity_map.values()):
        if isinstance(loaded, ApiToken) and loaded.user_id == user_id:
            session.expire(loaded, ["revoked_at"])
    return int(result.rowcount)  # type: ignore[attr-defined]


def end_sessions(session: Session, user_id: int) -> None:
    """End every session of a user at once, in every browser (log-out does this)."""
    _bump_generation(session, user_id)


def disable_user(session: Session, email: str, *, actor: str = "cli") -> None:
    """Disable an account: no log-in, every session ended, every API token revoked."""
    user = find_user(session, email)
    user.is_active = False
    _bump_generation(session, user.id)
    revoke_all_tokens(session, user.id)
    record(session, actor, "disable-user", email=user.email)


def enable_user(session: Session, email: str, *, actor: str = "cli") -> None:
    """Let a disabled account log in again (its old sessions stay ended)."""
    user = find_user(session, email)
    user.is_active = True
    record(session, actor, "enable-user", email=user.email)


def authenticate(session: Session, email: str, password: str) -> User | None:
    """Return the active user with this e-mail and password, or None."""
    email = email.strip().lower()
    # No account has a control character (PostgreSQL would refuse a NUL in the query), but the
    # dummy hash is still checked so that the answer takes as long.
    unusable = any(ord(c) < 32 or ord(c) == 127 for c in email)
    user = None if unusable else session.scalar(select(User).where(User.email == email))
    stored = user.password_hash if user is not None and user.password_hash else dummy_hash()
    try:
        _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return None
    if user is None or not user.password_hash or not user.is_active:
        return None
    if _hasher.check_needs_rehash(stored):
        user.password_hash = _hasher.hash(password)
    return user


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _new_token(session: Session, user: User, name: str, *, actor: str) -> str:
    """Add a token for ``user`` (in the caller's transaction) and return it in clear."""
    name = clean_text(name, "token name", limit=MAX_TOKEN_NAME)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(user=user, token_sha256=_digest(token), prefix=token[:10], name=name))
    record(session, actor, "issue-token", email=user.email, name=name)
    return token


def issue_token(session: Session, email: str, *, name: str = "", actor: str = "cli") -> str:
    """Create an API token for a user and return it (it is shown once, never stored in clear)."""
    user = find_user(session, email)
    token = _new_token(session, user, name, actor=actor)
    return token


def create_own_token(session: Session, user: User, name: str) -> str:
    """Create a named API token for the user themself and return it (shown once)."""
    if not name.strip():
        raise InvalidInput("Give the token a name (e.g. the machine or script that uses it).")
    return _new_token(session, user, name, actor=user.email)


def tokens_of(session: Session, user: User) -> list[ApiToken]:
    """Return a user's tokens, newest first, revoked ones included."""
    return list(
        session.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == user.id)
            .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        )
    )


def revoke_own_token(session: Session, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's own tokens; another user's token answers like a missing one."""
    row = get_row(session, ApiToken, token_id)
    if row is None or row.user_id != user.id:
        raise NotFound(f"No token {token_id}.")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        record(session, user.email, "revoke-token", email=user.email, name=row.name)
    return row


def user_for_token(session: Session, token: str, now: datetime | None = None) -> User | None:
    """Return the active, verified user owning an unrevoked token, or None; note its use.

    The use is written at most once a minute per token, so a burst of requests costs no writes.
    The note rides on the session's next commit (an upload's, which saves a transaction of its
    own); the entry point commits it alone (``take_note``) at once on SQLite (``note_at_once``),
    or at the request's end when no commit came.
    """
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    digest = _digest(token)
    row = session.execute(_TOKEN_USER, {"token_sha256": digest}).first()
    if row is None:
        return None
    user, last_used = row
    now = now or utcnow()
    if last_used is None or last_used < now - LAST_USED_STEP:
        note = {"digest": digest, "now": now, "before": now - LAST_USED_STEP}
        # Conditional, so that concurrent requests with one token write it once.
        unit_of(session).before_commit(_NOTE, lambda s: s.execute(_NOTE_USE, note))
    return user


def note_at_once(session: Session) -> bool:
    """Return whether a token's note of use is committed alone at once, not with a later commit."""
    # SQLite has one write lock for the whole file: a commit that only read must not wait for
    # it, so the note goes in at once, as its own transaction.
    return session.get_bind().dialect.name == "sqlite"


def take_note(session: Session) -> Callable[[Session], object] | None:
    """Remove and return the write of a token's note of use that no commit has run yet."""
    return unit_of(session).take_before_commit(_NOTE)


_NOTE = "leaderboard.token_note"


# One prebuilt query for the user, the user's team and the token's last use: every API
# request asks.
_TOKEN_USER = (
    select(User, ApiToken.last_used_at)
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(
        ApiToken.token_sha256 == bindparam("token_sha256"),
        ApiToken.revoked_at.is_(None),
        User.is_active.is_(True),
        # An unverified address opens no session, and no API door either.
        User.verified_at.is_not(None),
    )
    .options(joinedload(User.team))
)
# Built once, on the table (no ORM bookkeeping): a token's first request of a minute runs it.
_TOKENS = cast(Table, ApiToken.__table__)
_NOTE_USE = (
    update(_TOKENS)
    .where(
        _TOKENS.c.token_sha256 == bindparam("digest"),
        or_(_TOKENS.c.last_used_at.is_(None), _TOKENS.c.last_used_at < bindparam("before")),
    )
    .values(last_used_at=bindparam("now"))
)


def revoke_tokens(session: Session, email: str, *, actor: str = "cli") -> int:
    """Revoke every token of a user; return how many were revoked."""
    user = find_user(session, email)
    rows = session.scalars(
        select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
    ).all()
    for row in rows:
        row.revoked_at = utcnow()
    record(session, actor, "revoke-tokens", email=user.email, count=len(rows))
    return len(rows)
