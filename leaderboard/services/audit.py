"""Record organizer and system actions in the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, utcnow

if TYPE_CHECKING:  # catalog imports this module; the type is only for checking
    from leaderboard.services.catalog import Target


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
