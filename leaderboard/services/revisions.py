"""Revision counters of evaluation sets: bumped by every change that can alter their tables."""

from __future__ import annotations

from sqlalchemy import text, update
from sqlalchemy.orm import Session

from leaderboard.models import EvalSet


def bump(session: Session, *eval_set_ids: int) -> None:
    """Advance the revision of sets inside the caller's transaction (caches keyed by it expire)."""
    ids = sorted(set(eval_set_ids))
    if ids:
        session.execute(
            update(EvalSet)
            .where(EvalSet.id.in_(ids))
            .values(revision=EvalSet.revision + 1)
            .execution_options(synchronize_session=False)
        )


# A prepared text query: this runs on every cached page view, where building an ORM statement
# would cost more than the rest of the request.
_CURRENT = text(
    "SELECT e.id, e.revision FROM eval_sets e"
    " JOIN subtasks s ON e.subtask_id = s.id JOIN tasks t ON s.task_id = t.id"
    " WHERE t.slug = :task AND s.slug = :subtask AND e.slug = COALESCE(:set_slug, s.default_set)"
)


def current(
    session: Session, task: str, subtask: str, set_slug: str | None
) -> tuple[int, int] | None:
    """Return (set id, revision) of a set named by slugs in one query, or None if there is none."""
    row = session.execute(
        _CURRENT, {"task": task, "subtask": subtask, "set_slug": set_slug}
    ).first()
    return (int(row[0]), int(row[1])) if row is not None else None
