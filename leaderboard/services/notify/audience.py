"""Who takes part in a task, and which of its teams have a run where it counts."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.models import DataDownload, Phase, Run, Subtask, Task, Team, TermsAcceptance, User
from leaderboard.services.tasks.catalog import definition_of
from leaderboard.states import RunKind, RunStatus


def primary_slot(task: Task) -> str:
    """Return the slot of a team's primary run: the first ranked slot of the task's definition."""
    return definition_of(task).runs.ranked_slots[0]


def participating_teams(session: Session, task: Task) -> list[Team]:
    """Return a task's participating teams (not withdrawn), in id order.

    A team takes part when it has a run in any subtask of the task, or a member of it accepted
    the task's terms or downloaded its data.
    """
    subtasks = select(Subtask.id).where(Subtask.task_id == task.id)
    with_runs = select(Run.team_id).where(
        Run.subtask_id.in_(subtasks), Run.kind == RunKind.RUN, Run.team_id.is_not(None)
    )
    accepted = (
        select(User.team_id)
        .join(TermsAcceptance, TermsAcceptance.user_id == User.id)
        .where(TermsAcceptance.task_id == task.id)
    )
    downloaded = (
        select(User.team_id)
        .join(DataDownload, DataDownload.user_id == User.id)
        .where(DataDownload.task_id == task.id)
    )
    return list(
        session.scalars(
            select(Team)
            .where(
                or_(Team.id.in_(with_runs), Team.id.in_(accepted), Team.id.in_(downloaded)),
                Team.withdrawn_at.is_(None),
            )
            .order_by(Team.id)
        )
    )


def pending_teams(session: Session) -> list[Team]:
    """Return the teams waiting for an organizer's approval (they may not take part yet)."""
    return list(
        session.scalars(
            select(Team)
            .where(Team.approved.is_(False), Team.withdrawn_at.is_(None))
            .order_by(Team.id)
        )
    )


def teams_with_runs(session: Session, subtask: Subtask) -> set[int]:
    """Return the ids of the teams with a run (of any status) in a subtask."""
    return set(
        session.scalars(
            select(Run.team_id).where(
                Run.subtask_id == subtask.id, Run.kind == RunKind.RUN, Run.team_id.is_not(None)
            )
        )
    )


def teams_with_active_run(
    session: Session, subtask: Subtask, slots: Iterable[str], eval_set_id: int | None = None
) -> set[int]:
    """Return the ids of the teams with an active run in one of ``slots`` of a subtask (and set)."""
    query = select(Run.team_id).where(
        Run.subtask_id == subtask.id,
        Run.kind == RunKind.RUN,
        Run.status == RunStatus.ACTIVE,
        Run.slot.in_(list(slots)),
        Run.team_id.is_not(None),
    )
    if eval_set_id is not None:
        query = query.where(Run.eval_set_id == eval_set_id)
    return set(session.scalars(query))


def teams_with_primary(session: Session, subtask: Subtask) -> set[int]:
    """Return the ids of the teams with a run in their primary slot of a subtask."""
    return teams_with_active_run(session, subtask, [primary_slot(subtask.task)])


def teams_with_ranked_run(session: Session, phase: Phase) -> set[int]:
    """Return the ids of the teams with a run in a ranked slot of a phase's subtask and set."""
    slots = definition_of(phase.subtask.task).runs.ranked_slots
    return teams_with_active_run(session, phase.subtask, slots, phase.eval_set_id)


def members(session: Session, team_ids: Iterable[int], *, captains: bool = False) -> list[User]:
    """Return the members (or only the captains) of some teams, in id order."""
    ids = sorted(set(team_ids))
    if not ids:
        return []
    query = select(User).where(User.team_id.in_(ids))
    if captains:
        query = query.where(User.is_captain.is_(True))
    return list(session.scalars(query.order_by(User.id)))


def note_download(session: Session, user: User, task: Task, now: datetime) -> None:
    """Record that a participant downloaded a task's data (the first time only)."""
    if user.is_organizer:
        return
    known = select(DataDownload.id).where(
        DataDownload.user_id == user.id, DataDownload.task_id == task.id
    )
    if session.scalar(known) is not None:
        return
    try:
        with session.begin_nested():
            session.add(DataDownload(user_id=user.id, task_id=task.id, first_at=now))
    except IntegrityError:
        pass  # a download of the same user a moment earlier recorded it
