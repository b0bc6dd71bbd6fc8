"""Record organizer and system actions in the audit log."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent


def record(
    session: Session,
    actor: str,
    action: str,
    *,
    task: str | None = None,
    subtask: str | None = None,
    **details: Any,
) -> AuditEvent:
    """Add an audit event to the session (committed with the caller's transaction)."""
    event = AuditEvent(
        actor=actor, action=action, task_slug=task, subtask_slug=subtask, details=details
    )
    session.add(event)
    return event
