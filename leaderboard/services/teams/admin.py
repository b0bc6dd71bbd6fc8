"""Organizer actions on teams: overview, approve, rename, merge, withdraw, delete, add members."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, exists, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from leaderboard.db import get_row
from leaderboard.formats.issues import quoted
from leaderboard.models import EvalSet, JoinRequest, QuotaUsage, Run, Subtask, Team, User, utcnow
from leaderboard.services.accounts.core import (
    check_name_usable,
    clean_team_name,
    find_user,
    taken_name,
)
from leaderboard.services.common.audit import record
from leaderboard.services.common.counts import per_team
from leaderboard.services.common.errors import Conflict, Forbidden, NotFound
from leaderboard.services.common.revisions import bump
from leaderboard.services.runs.core import active_key
from leaderboard.services.teams.members import (
    fresh_row,
    has_runs,
    lock_teams,
    member_count,
    new_invite_code,
    put_in_team,
)
from leaderboard.states import JoinStatus, RunStatus


@dataclass(frozen=True)
class TeamRow:
    """One line of the organizer's team list."""

    team: Team
    members: list[User]
    runs: int


def team_overview(session: Session) -> list[TeamRow]:
    """Return every team with its members (captain first) and its number of runs."""
    teams = session.scalars(
        select(Team).options(selectinload(Team.members)).order_by(Team.name)
    ).all()
    counts = per_team(session, Run.team_id, Run.id)
    return [
        TeamRow(
            t,
            sorted(t.members, key=lambda u: (not u.is_captain, u.email)),
            int(counts.get(t.id, 0)),
        )
        for t in teams
    ]


def team_by_id(session: Session, team_id: int) -> Team:
    """Return a team by id or raise NotFound."""
    team = get_row(session, Team, team_id)
    if team is None:
        raise NotFound(f"No team {team_id}.")
    return team


def _fresh(session: Session, team_id: int) -> Team:
    """Return the team re-read after taking its lock."""
    return fresh_row(
        session, Team, team_id, f"No team {team_id} (it may have been merged or deleted meanwhile)."
    )


def _team_sets(session: Session, team_id: int) -> list[int]:
    return list(session.scalars(select(Run.eval_set_id).where(Run.team_id == team_id).distinct()))


def approve_team(session: Session, team_id: int, *, actor: str) -> Team:
    """Approve a team created in approval mode: its members may upload."""
    lock_teams(session, team_id)
    team = _fresh(session, team_id)
    if team.approved:
        raise Conflict(f"Team {quoted(team.name)} is already approved.")
    team.approved = True
    record(session, actor, "approve-team", team=team.name)
    return team


def rename_team(session: Session, team_id: int, new_name: str, *, actor: str) -> Team:
    """Rename a team; live tables show the new name, frozen tables keep the old one."""
    new_name = clean_team_name(new_name)
    try:
        lock_teams(session, team_id)
        team = _fresh(session, team_id)
        old = team.name
        if new_name == old:
            raise Conflict(f"The team is already named {quoted(old)}.")
        check_name_usable(session, new_name, team_id=team_id)
        team.name = new_name
        bump(session, *_team_sets(session, team_id))
        record(session, actor, "rename-team", team=new_name, old=old)
        # The unique name speaks here, where it is caught, not at the caller's commit.
        session.flush()
    except IntegrityError:
        raise taken_name(new_name, discreet=False) from None
    return team


def _slot_name(session: Session, run: Run) -> str:
    sub = session.get(Subtask, run.subtask_id)
    eval_set = session.get(EvalSet, run.eval_set_id)
    assert sub is not None and eval_set is not None
    return f"{sub.task.slug}/{sub.slug} {eval_set.slug} {run.slot}"


def merge_teams(session: Session, source_id: int, target_id: int, *, actor: str) -> Team:
    """Move every member and run of one team into another and delete the emptied team.

    Refused, with nothing changed, when an active run of each occupies the same slot. Both
    team rows are locked in id order, so concurrent merges cannot lose a run.
    """
    if source_id == target_id:
        raise Conflict("A team cannot be merged into itself.")
    lock_teams(session, source_id, target_id)
    source, target = _fresh(session, source_id), _fresh(session, target_id)
    moving = list(session.scalars(select(Run).where(Run.team_id == source.id)))
    taken = set(
        session.scalars(
            select(Run.active_key).where(Run.team_id == target.id, Run.status == RunStatus.ACTIVE)
        )
    )
    clashes = [
        _slot_name(session, r)
        for r in moving
        if r.status == RunStatus.ACTIVE and active_key(r.eval_set_id, target.id, r.slot) in taken
    ]
    if clashes:
        raise Conflict(
            f"Cannot merge {quoted(source.name)} into {quoted(target.name)}: both have an "
            f"active run in {', '.join(sorted(clashes))}. Withdraw or replace one of each "
            "first."
        )
    # Free the source's keys first: the unique column must never see two holders.
    session.execute(
        update(Run)
        .where(Run.team_id == source.id)
        .values(active_key=None)
        .execution_options(synchronize_session=False)
    )
    for run in moving:
        run.team_id = target.id
        if run.status == RunStatus.ACTIVE:
            run.active_key = active_key(run.eval_set_id, target.id, run.slot)
    session.flush()
    _merge_quota(session, source.id, target.id)
    has_captain = any(
        session.scalars(select(User.id).where(User.team_id == target.id, User.is_captain))
    )
    if target.invite_code is None and member_count(session, source.id):
        target.invite_code = new_invite_code()  # an emptied target gets members, and a link
    session.execute(
        update(User)
        .where(User.team_id == source.id)
        # The target's captain stays the one captain; a captain-less target takes the source's.
        .values(
            team_id=target.id,
            joined_team_at=utcnow(),
            **({"is_captain": False} if has_captain else {}),
        )
        .execution_options(synchronize_session=False)
    )
    session.execute(
        update(JoinRequest)
        .where(JoinRequest.team_id == source.id, JoinRequest.status == JoinStatus.PENDING)
        .values(status=JoinStatus.WITHDRAWN, decided_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    bump(session, *{r.eval_set_id for r in moving})
    record(
        session,
        actor,
        "merge-teams",
        team=target.name,
        merged=source.name,
        runs=len(moving),
    )
    session.flush()
    session.execute(delete(Team).where(Team.id == source.id))
    session.expire_all()
    return target


def _merge_quota(session: Session, source_id: int, target_id: int) -> None:
    """Add the source's used quota to the target's, period by period."""
    rows = session.scalars(select(QuotaUsage).where(QuotaUsage.team_id == source_id)).all()
    for row in rows:
        mine = session.scalar(
            select(QuotaUsage).where(
                QuotaUsage.team_id == target_id,
                QuotaUsage.phase_id == row.phase_id,
                QuotaUsage.period == row.period,
            )
        )
        if mine is None:
            row.team_id = target_id
        else:
            mine.used += row.used
            session.delete(row)
    session.flush()


def withdraw_team(session: Session, team_id: int, *, actor: str) -> Team:
    """Withdraw a team: its runs leave live tables and exports; history and frozen tables keep them."""
    lock_teams(session, team_id)
    team = _fresh(session, team_id)
    if team.withdrawn_at is not None:
        raise Conflict(f"Team {quoted(team.name)} is already withdrawn.")
    team.withdrawn_at = utcnow()
    bump(session, *_team_sets(session, team_id))
    record(session, actor, "withdraw-team", team=team.name)
    return team


def delete_team(session: Session, team_id: int, *, actor: str) -> str:
    """Delete a team with no members and no runs; return its name."""
    lock_teams(session, team_id)
    team = _fresh(session, team_id)
    if has_runs(session, team_id):
        raise Conflict(
            f"Team {quoted(team.name)} has runs and cannot be deleted; withdraw it instead."
        )
    if member_count(session, team_id):
        raise Conflict(f"Team {quoted(team.name)} still has members; it cannot be deleted.")
    name = team.name
    record(session, actor, "delete-team", team=name)
    session.delete(team)
    return name


def add_member(session: Session, team_id: int, email: str, *, actor: str) -> User:
    """Add a participant without a team to a team, as its captain if it has none.

    The organizers' way into a team left without members (it has no invite code); it works in
    every registration mode, but not into a withdrawn or full team.
    """
    lock_teams(session, team_id)
    team = _fresh(session, team_id)
    user = fresh_row(session, User, find_user(session, email).id, f"No user {quoted(email)}.")
    if user.is_organizer:
        raise Forbidden("Organizers cannot be team members.")
    if not user.is_active:
        raise Conflict(f"The account {quoted(user.email)} is disabled.")
    if user.team_id is not None:
        raise Conflict(f"{quoted(user.email)} is already in a team; they must leave it first.")
    captain = not session.scalar(select(exists().where(User.team_id == team.id, User.is_captain)))
    put_in_team(session, user.id, team, captain=captain)
    if team.invite_code is None:
        team.invite_code = new_invite_code()  # the new captain can invite again
    details: dict[str, Any] = {"team": team.name, "email": user.email}
    if captain:
        details["captain"] = True
    record(session, actor, "add-member", **details)
    session.refresh(user)
    return user
