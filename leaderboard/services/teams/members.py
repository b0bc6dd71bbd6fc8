"""Self-service teams: create, invite, join, requests, leave, hand over, remove members."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.db import get_row, in_key_range
from leaderboard.formats.issues import quoted
from leaderboard.models import JoinRequest, Run, Team, User, utcnow
from leaderboard.services.accounts.core import (
    check_name_usable,
    clean_team_name,
    names_anonymous,
    taken_name,
)
from leaderboard.services.common import settings
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Conflict, Forbidden, InvalidInput, NotFound
from leaderboard.services.common.text import clean_text
from leaderboard.services.notify.notices import join_decided, join_requested
from leaderboard.states import JoinStatus, Role

#: What ``fresh_row`` re-reads: a team or an account.
Fresh = TypeVar("Fresh", Team, User)

MAX_AFFILIATION = 255


def new_invite_code() -> str:
    """Return a fresh, unguessable invite code."""
    return secrets.token_urlsafe(18)


def lock_teams(session: Session, *team_ids: int) -> None:
    """Lock team rows in id order for the rest of the caller's transaction.

    PostgreSQL locks the rows (``FOR UPDATE``); SQLite has one writer at a time, so a no-op
    UPDATE as the transaction's first statement takes the write lock before anything is read.
    """
    ids = sorted({i for i in team_ids if in_key_range(i)})
    if not ids:
        return
    if session.get_bind().dialect.name == "sqlite":
        session.execute(
            update(Team)
            .where(Team.id.in_(ids))
            .values(name=Team.name)
            .execution_options(synchronize_session=False)
        )
    else:
        session.execute(select(Team.id).where(Team.id.in_(ids)).order_by(Team.id).with_for_update())


def fresh_row(session: Session, model: type[Fresh], row_id: int, missing: str) -> Fresh:
    """Return a team or account re-read after taking its lock (the session's may be stale)."""
    row = get_row(session, model, row_id, populate_existing=True)
    if row is None:
        raise NotFound(missing)
    return row


def _fresh_team(session: Session, team_id: int) -> Team:
    """Return the team re-read after taking its lock."""
    return fresh_row(session, Team, team_id, "That team no longer exists.")


def _fresh_user(session: Session, user_id: int) -> User:
    """Return the account re-read after taking its lock."""
    return fresh_row(session, User, user_id, "That account no longer exists.")


def member_count(session: Session, team_id: int) -> int:
    """Return how many accounts belong to a team."""
    return int(session.scalar(select(func.count(User.id)).where(User.team_id == team_id)) or 0)


def has_runs(session: Session, team_id: int) -> bool:
    """Return whether a team has ever had a run (active or in history)."""
    return bool(session.scalar(select(exists().where(Run.team_id == team_id))))


def _may_take_part(user: User) -> None:
    if user.is_organizer:
        raise Forbidden("Organizers cannot be team members.")
    if user.role != Role.PARTICIPANT:
        raise Forbidden("Only participants can be team members.")


def create_own_team(session: Session, user: User, name: str, affiliation: str = "") -> Team:
    """Create a team for a participant without one and make them its captain.

    In ``approval`` mode the team waits for an organizer; in ``closed`` mode nothing is created.
    """
    _may_take_part(user)
    mode = settings.registration(session)
    if mode == "closed":
        raise Forbidden("Registration is closed: no new teams can be created.")
    name = clean_team_name(name)
    affiliation = clean_text(affiliation, "affiliation", limit=MAX_AFFILIATION)
    if user.team_id is not None:
        raise Conflict("You are already in a team; leave it before creating another one.")
    # While names are anonymous, every unusable name gets one answer: a taken one must not
    # confirm that a guessed team takes part (the view also limits attempts per account).
    discreet = names_anonymous(session)
    check_name_usable(session, name, discreet=discreet)
    team = Team(
        name=name,
        affiliation=affiliation,
        approved=mode != "approval",
        invite_code=new_invite_code(),
    )
    try:
        session.add(team)
        session.flush()  # the name (or one read alike) may have been taken meanwhile
        # Only if the user is still team-less: a concurrent join elsewhere wins.
        moved = session.execute(
            update(User)
            .where(User.id == user.id, User.team_id.is_(None))
            .values(team_id=team.id, is_captain=True, joined_team_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            raise Conflict("You are already in a team; leave it before creating another one.")
        _withdraw_requests(session, user.id)
        record(session, user.email, "create-team", team=name, approved=team.approved)
        session.flush()  # a clash is caught here, not at the caller's commit
    except IntegrityError:
        raise taken_name(name, discreet=discreet) from None
    session.refresh(user)
    return team


INVALID_LINK = "This invite link is not valid (any more); ask the team for a new one."


def usable_team_by_code(session: Session, code: str) -> Team | None:
    """Return the team whose invite link carries this code, unless it is withdrawn; else None.

    A team left without members has no code at all, so no link reaches it.
    """
    code = code.strip()
    if not code or len(code) > 64:
        return None
    team = session.scalar(select(Team).where(Team.invite_code == code))
    return None if team is None or team.withdrawn_at is not None else team


def team_by_code(session: Session, code: str) -> Team:
    """Return the team whose invite link carries this code, or raise NotFound."""
    team = usable_team_by_code(session, code)
    if team is None:
        raise NotFound(INVALID_LINK)
    return team


def joins_at_once(session: Session) -> bool:
    """Return whether an invite link joins at once (else it files a join request)."""
    return settings.registration(session) in ("open", "invite")


@dataclass(frozen=True)
class JoinOutcome:
    """What opening an invite link did: joined the team, or filed a request."""

    team: Team
    joined: bool


def has_room(session: Session, team: Team) -> bool:
    """Return whether a team has fewer members than the site's ``max_team_size``."""
    return member_count(session, team.id) < settings.max_team_size(session)


def _check_room(session: Session, team: Team) -> None:
    if not has_room(session, team):
        limit = settings.max_team_size(session)
        raise Conflict(f"Team {quoted(team.name)} is full: it has the maximum of {limit} members.")


def check_open_to_members(session: Session, team: Team) -> None:
    """Refuse a new member for a withdrawn team or one without room (the team is locked)."""
    if team.withdrawn_at is not None:
        raise Conflict(f"Team {quoted(team.name)} is withdrawn: nobody can join it.")
    _check_room(session, team)


def put_in_team(session: Session, user_id: int, team: Team, *, captain: bool = False) -> None:
    """Move a team-less user into a locked team with room; refuse if they have a team now."""
    check_open_to_members(session, team)
    moved = session.execute(
        update(User)
        .where(User.id == user_id, User.team_id.is_(None))
        .values(team_id=team.id, is_captain=captain, joined_team_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:  # type: ignore[attr-defined]
        raise Conflict("That account is already in a team.")
    _withdraw_requests(session, user_id)


def _withdraw_requests(session: Session, user_id: int) -> None:
    """Close a user's pending join requests (they have a team now)."""
    session.execute(
        update(JoinRequest)
        .where(JoinRequest.user_id == user_id, JoinRequest.status == JoinStatus.PENDING)
        .values(status=JoinStatus.WITHDRAWN, decided_at=utcnow())
        .execution_options(synchronize_session=False)
    )


def join_by_code(session: Session, user: User, code: str) -> JoinOutcome:
    """Join the team of an invite link (open and invite modes) or file a join request."""
    _may_take_part(user)
    team = team_by_code(session, code)
    mode = settings.registration(session)
    if mode == "closed":
        raise Forbidden("Registration is closed: nobody can join a team now.")
    if user.team_id is not None:
        raise Conflict("You are already in a team; leave it before joining another one.")
    team_id = team.id
    lock_teams(session, team_id)
    team = _fresh_team(session, team_id)
    if team.invite_code != code or team.withdrawn_at is not None:
        raise NotFound(INVALID_LINK)
    if _fresh_user(session, user.id).team_id is not None:
        raise Conflict("You are already in a team; leave it before joining another one.")
    if mode in ("open", "invite"):
        put_in_team(session, user.id, team)
        record(session, user.email, "join-team", team=team.name, via="invite link")
        joined = True
    else:
        pending = session.scalar(
            select(JoinRequest.id).where(
                JoinRequest.team_id == team_id,
                JoinRequest.user_id == user.id,
                JoinRequest.status == JoinStatus.PENDING,
            )
        )
        if pending is not None:
            raise Conflict(f"You have already asked to join {quoted(team.name)}.")
        _check_room(session, team)
        session.add(JoinRequest(team_id=team_id, user_id=user.id, status=JoinStatus.PENDING))
        record(session, user.email, "request-join", team=team.name)
        join_requested(session, team, user)
        joined = False
    session.flush()  # written before the refresh below reads the rows back
    session.refresh(user)
    return JoinOutcome(team, joined)


def _captain_team(session: Session, captain: User) -> Team:
    """Lock and return the captain's team; refuse anyone who is not its captain."""
    if captain.team_id is None:
        raise Forbidden("Your account is not in a team.")
    team_id = captain.team_id
    lock_teams(session, team_id)
    fresh = _fresh_user(session, captain.id)
    if fresh.team_id != team_id or not fresh.is_captain:
        raise Forbidden("Only the team's captain can do this.")
    return _fresh_team(session, team_id)


def regenerate_invite(session: Session, captain: User) -> str:
    """Give the captain's team a new invite code; the old link stops working."""
    team = _captain_team(session, captain)
    team.invite_code = new_invite_code()
    record(session, captain.email, "regenerate-invite", team=team.name)
    return str(team.invite_code)


def _pending(session: Session, whose: ColumnElement[bool]) -> list[JoinRequest]:
    return list(
        session.scalars(
            select(JoinRequest)
            .where(whose, JoinRequest.status == JoinStatus.PENDING)
            .order_by(JoinRequest.id)
        )
    )


def pending_requests(session: Session, team: Team) -> list[JoinRequest]:
    """Return a team's pending join requests, oldest first."""
    return _pending(session, JoinRequest.team_id == team.id)


def own_pending_requests(session: Session, user: User) -> list[JoinRequest]:
    """Return the user's own pending join requests."""
    return _pending(session, JoinRequest.user_id == user.id)


class JoinedMeanwhile(Conflict):
    """A refused answer to a request whose applicant joined another team: commit its closing."""


def decide_request(session: Session, captain: User, request_id: int, *, accept: bool) -> User:
    """Accept (within the size limit) or decline a pending request to join the captain's team."""
    team = _captain_team(session, captain)
    req = get_row(session, JoinRequest, request_id)
    if req is None or req.team_id != team.id:
        raise NotFound(f"No join request {request_id} for your team.")
    if req.status != JoinStatus.PENDING:
        raise Conflict(f"That join request was already {req.status}.")
    applicant = _fresh_user(session, req.user_id)
    if accept:
        # Whatever the mode, a withdrawn team takes nobody; a closed site lets nobody in.
        if team.withdrawn_at is not None:
            raise Conflict(f"Team {quoted(team.name)} is withdrawn: nobody can join it.")
        if settings.registration(session) == "closed":
            raise Forbidden("Registration is closed: nobody can join a team now.")
        if applicant.team_id is not None:
            req.status, req.decided_at = JoinStatus.WITHDRAWN, utcnow()
            raise JoinedMeanwhile(f"{quoted(applicant.email)} has joined another team meanwhile.")
        put_in_team(session, applicant.id, team)
    req.status = JoinStatus.ACCEPTED if accept else JoinStatus.DECLINED
    req.decided_at = utcnow()
    record(
        session,
        captain.email,
        "accept-join" if accept else "decline-join",
        team=team.name,
        email=applicant.email,
    )
    join_decided(session, team, applicant, accepted=accept)
    return applicant


def withdraw_own_request(session: Session, user: User, request_id: int) -> None:
    """Let a user take back their own pending join request."""
    req = get_row(session, JoinRequest, request_id)
    if req is None or req.user_id != user.id:
        raise NotFound(f"No join request {request_id} of yours.")
    if req.status != JoinStatus.PENDING:
        raise Conflict(f"That join request was already {req.status}.")
    req.status, req.decided_at = JoinStatus.WITHDRAWN, utcnow()
    record(session, user.email, "withdraw-join-request", team=req.team.name)


def _other_member(
    session: Session, team: Team, captain: User, member_id: int, if_captain: str
) -> User:
    """Return a member of the captain's team other than the captain; ``if_captain`` refuses it."""
    member = get_row(session, User, member_id)
    if member is None or member.team_id != team.id:
        raise NotFound("That account is not a member of your team.")
    if member.id == captain.id:
        raise InvalidInput(if_captain)
    return member


def hand_over(session: Session, captain: User, member_id: int) -> User:
    """Make another member of the captain's team its captain."""
    team = _captain_team(session, captain)
    member = _other_member(session, team, captain, member_id, "You are the captain already.")
    session.execute(
        update(User)
        .where(User.team_id == team.id)
        .values(is_captain=User.id == member.id)
        .execution_options(synchronize_session=False)
    )
    record(session, captain.email, "hand-over-captaincy", team=team.name, to=member.email)
    session.flush()  # written before the refresh below reads the rows back
    session.refresh(captain)
    session.refresh(member)
    return member


def remove_member(session: Session, captain: User, member_id: int) -> User:
    """Remove another member from the captain's team (the team keeps its runs)."""
    team = _captain_team(session, captain)
    member = _other_member(session, team, captain, member_id, "To leave your own team, use Leave.")
    member.team_id, member.is_captain, member.joined_team_at = None, False, None
    # The removed member may know the link: it stops working.
    team.invite_code = new_invite_code()
    record(session, captain.email, "remove-member", team=team.name, email=member.email)
    return member


@dataclass(frozen=True)
class LeaveOutcome:
    """What leaving did: the team's name, whether the now empty team was deleted, the new captain."""

    team: str
    deleted: bool
    captain: User | None = None


def longest_standing(session: Session, team_id: int) -> User | None:
    """Return the member of a team who joined it first (the lowest id among equals), or None."""
    members = session.scalars(
        select(User).where(User.team_id == team_id).execution_options(populate_existing=True)
    ).all()
    return min(members, key=lambda u: (u.joined_team_at or u.created_at, u.id), default=None)


def leave_team(session: Session, user: User) -> LeaveOutcome:
    """Leave one's team; a leaving captain hands over to the longest-standing member.

    The invite code changes (the leaver knows it). The last member leaving empties the team:
    it is deleted when it has no run, and kept otherwise (with its runs, and no invite code:
    only an organizer can add members to it, or merge or withdraw it).
    """
    _may_take_part(user)
    if user.team_id is None:
        raise Conflict("Your account is not in a team.")
    team_id = user.team_id
    lock_teams(session, team_id)
    me = _fresh_user(session, user.id)
    if me.team_id != team_id:
        raise Conflict("Your account is not in that team any more.")
    team = _fresh_team(session, team_id)
    was_captain = me.is_captain
    me.team_id, me.is_captain, me.joined_team_at = None, False, None
    session.flush()
    successor = longest_standing(session, team_id) if was_captain else None
    if successor is not None:
        successor.is_captain = True
    empty = member_count(session, team_id) == 0
    deleted = empty and not has_runs(session, team_id)
    # Nobody is left to share a link: no code at all, so that no old link lets anyone in.
    team.invite_code = None if empty else new_invite_code()
    details: dict[str, Any] = {"team": team.name, "deleted_team": deleted}
    if successor is not None:
        details["captain"] = successor.email
    record(session, user.email, "leave-team", **details)
    name = team.name
    if deleted:
        session.flush()
        session.delete(team)
    session.flush()  # written before the refresh below reads the rows back
    session.refresh(user)
    return LeaveOutcome(name, deleted, successor)


def members_of(session: Session, team: Team) -> list[User]:
    """Return a team's members: the captain first, then by display name or e-mail."""
    users = session.scalars(select(User).where(User.team_id == team.id)).all()
    return sorted(users, key=lambda u: (not u.is_captain, (u.display_name or u.email).casefold()))
