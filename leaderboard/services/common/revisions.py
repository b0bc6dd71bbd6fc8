"""Revision counters of evaluation sets: bumped by every change that can alter their tables."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table, bindparam, text, update
from sqlalchemy.orm import Session

from leaderboard.db import expire_loaded
from leaderboard.models import EvalSet
from leaderboard.tasks.definition import slug_like

# A table-level statement built once (every upload runs it); sets the session holds are expired.
_SETS = cast(Table, EvalSet.__table__)
_BUMP = update(_SETS).where(_SETS.c.id == bindparam("set_id")).values(revision=_SETS.c.revision + 1)


def bump(session: Session, *eval_set_ids: int) -> None:
    """Advance the revision of sets inside the caller's transaction (caches keyed by it expire)."""
    ids = sorted(set(eval_set_ids))
    if not ids:
        return
    session.execute(_BUMP, [{"set_id": i} for i in ids])
    for set_id in ids:
        expire_loaded(session, EvalSet, set_id, ["revision"])


def touch(session: Session, eval_set_id: int) -> None:
    """Advance the set's page counter alone: cached pages rebuild, its scores' revision stays."""
    session.execute(
        update(EvalSet).where(EvalSet.id == eval_set_id).values(analysed=EvalSet.analysed + 1)
    )


# A prepared text query: this runs on every cached page view, where building an ORM statement
# would cost more than the rest of the request.
_CURRENT = text(
    "SELECT e.id, e.revision, e.analysed FROM eval_sets e"
    " JOIN subtasks s ON e.subtask_id = s.id JOIN tasks t ON s.task_id = t.id"
    " WHERE t.slug = :task AND s.slug = :subtask AND e.slug = COALESCE(:set_slug, s.default_set)"
)


def current(
    session: Session, task: str, subtask: str, set_slug: str | None
) -> tuple[int, int, int] | None:
    """Return (set id, revision, analyses stored) of a set named by slugs in one query."""
    # A name from a URL may hold anything, and PostgreSQL refuses a NUL byte in a parameter:
    # a name no slug can be names no set, unasked.
    if not all(slug_like(n) for n in (task, subtask, set_slug) if n is not None):
        return None
    row = session.execute(
        _CURRENT, {"task": task, "subtask": subtask, "set_slug": set_slug}
    ).first()
    return (int(row[0]), int(row[1]), int(row[2])) if row is not None else None
