"""Hide a task from everyone but the organizers, and show it again; nothing is deleted."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.models import Task, User
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import NotFound
from leaderboard.tasks.definition import slug_like


def task_by_slug(session: Session, slug: str) -> Task:
    """Return a task by slug, or raise NotFound naming it."""
    task = session.scalar(select(Task).where(Task.slug == slug)) if slug_like(slug) else None
    if task is None:
        raise NotFound(f"No task {quoted(slug)}.")
    return task


def set_hidden(session: Session, slug: str, hidden: bool, *, actor: str, now: datetime) -> bool:
    """Hide or show a task; return whether that changed anything (the audit log says so)."""
    task = task_by_slug(session, slug)
    if task.hidden == hidden:
        return False
    task.hidden = hidden
    record(session, actor, "hide-task" if hidden else "show-task", task=slug, at=now)
    return True


def sees_hidden(user: User | None) -> bool:
    """Return whether a user sees hidden tasks (organizers only)."""
    return user is not None and user.is_organizer


def is_hidden(session: Session, slug: str) -> bool:
    """Return whether a task of this slug exists and is hidden."""
    # A name that cannot be a slug (a NUL byte, which PostgreSQL refuses) names no task.
    if not slug_like(slug):
        return False
    return bool(session.scalar(select(Task.hidden).where(Task.slug == slug)))


def refuse_hidden(session: Session, slug: str, user: User | None) -> None:
    """Answer a hidden task to everyone but organizers as if it did not exist."""
    if not sees_hidden(user) and is_hidden(session, slug):
        raise NotFound(f"No task {quoted(slug)}.")
