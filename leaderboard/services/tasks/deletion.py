"""Delete a task that has no runs, and remember it so that ``leaderboard init`` never brings it back."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from leaderboard.models import DeletedTask, FrozenTable, Phase, Run, Subtask, TaskDataFile
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Conflict
from leaderboard.services.tasks.hiding import task_by_slug


def delete_task(session: Session, slug: str, *, actor: str, now: datetime) -> None:
    """Delete a task without runs: its subtasks, sets, gold rows, phases and data file rows.

    Stored files stay (they are content-addressed and may be shared); the audit log keeps every
    line and records the deletion. A task with runs (baselines included) or a frozen ranking
    is refused: those are results, and a hidden task keeps them out of sight instead.
    """
    task = task_by_slug(session, slug)
    subtasks = select(Subtask.id).where(Subtask.task_id == task.id)
    runs = session.scalar(select(func.count(Run.id)).where(Run.subtask_id.in_(subtasks))) or 0
    if runs:
        raise Conflict(
            f"Task {slug} has {runs} run(s) (baselines included) and cannot be deleted; hide it "
            f"instead (leaderboard task {slug} --hide): nothing is deleted, no one else sees it."
        )
    frozen = session.scalar(
        select(func.count(FrozenTable.id)).where(FrozenTable.subtask_id.in_(subtasks))
    )
    if frozen:
        raise Conflict(
            f"Task {slug} has a frozen official ranking and cannot be deleted; hide it instead."
        )
    files = session.scalar(
        select(func.count(TaskDataFile.id)).where(
            TaskDataFile.phase_id.in_(select(Phase.id).where(Phase.subtask_id.in_(subtasks)))
        )
    )
    sets = sum(len(st.eval_sets) for st in task.subtasks)
    record(
        session,
        actor,
        "delete-task",
        task=slug,
        at=now,
        title=task.title,
        definition_sha256=task.definition_sha256,
        subtasks=[st.slug for st in task.subtasks],
        sets=sets,
        data_files=files or 0,
    )
    # The database cascades to phases, their data file rows, analyses and downloads records.
    session.delete(task)
    session.execute(delete(DeletedTask).where(DeletedTask.slug == slug))
    session.add(DeletedTask(slug=slug, deleted_at=now, deleted_by=actor))


def deleted_slugs(session: Session) -> set[str]:
    """Return the slugs of the tasks organizers deleted (and did not add again)."""
    return set(session.scalars(select(DeletedTask.slug)))


def forget_deletion(session: Session, slug: str) -> None:
    """Forget that a task was deleted, as an organizer adds it again (in the caller's transaction)."""
    session.execute(delete(DeletedTask).where(DeletedTask.slug == slug))
