"""Record organizer and system actions in the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, utcnow


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
