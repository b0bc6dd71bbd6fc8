"""Record organizer and system actions in the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, utcnow
from leaderboard.targets import Target


def record(
    session: Session,
    actor: str,
    action: str,
    *,
    task: str | None = None,
    subtask: str | None = None,
    at: datetime | None = None,
    **details: Any,
) -> AuditEvent:
    """Add an audit event to the session (committed with the caller's transaction).

    ``at`` is the server clock's time where the caller has it (so rehearsals read consistently).
    """
    event = AuditEvent(
        actor=actor,
        action=action,
        task_slug=task,
        subtask_slug=subtask,
        details=details,
        at=at or utcnow(),
    )
    session.add(event)
    return event


def record_for(
    session: Session,
    actor: str,
    action: str,
    target: Target,
    *,
    at: datetime | None = None,
    **details: Any,
) -> AuditEvent:
    """Record an action on a task's subtask and set (the target names all three)."""
    return record(
        session,
        actor,
        action,
        task=target.task.slug,
        subtask=target.subtask.slug,
        at=at,
        set=target.eval_set.slug,
        **details,
    )


def latest_events(session: Session, limit: int = 100) -> list[AuditEvent]:
    """Return the newest audit events, newest first."""
    return list(session.scalars(select(AuditEvent).order_by(AuditEvent.id.desc()).limit(limit)))


def events_of_subtask(
    session: Session, task: str, subtask: str, limit: int = 200
) -> list[AuditEvent]:
    """Return the newest events of a subtask and the site-wide ones, newest first."""
    return list(
        session.scalars(
            select(AuditEvent)
            .where(
                or_(AuditEvent.task_slug.is_(None), AuditEvent.task_slug == task),
                or_(AuditEvent.subtask_slug.is_(None), AuditEvent.subtask_slug == subtask),
            )
            .order_by(AuditEvent.id.desc())
            .limit(limit)
        )
    )
