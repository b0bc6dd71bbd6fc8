"""Organizer messages to a task's participants, filtered by status, sent through the queue."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.models import Subtask, Task, User
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import InvalidInput, NotFound
from leaderboard.services.common.mail import NO_BASE_URL, NoBaseUrl
from leaderboard.services.common.markdown import render_markdown
from leaderboard.services.common.text import header_safe
from leaderboard.services.common.urls import absolute_markdown
from leaderboard.services.notify import audience
from leaderboard.services.notify.core import (
    ORGANIZER_MESSAGES,
    can_mail_links,
    notify_all,
    reachable,
)
from leaderboard.services.notify.links import mail_base

#: Audiences, with how the form names them.
AUDIENCES: dict[str, str] = {
    "members": "every member of the task's participating teams",
    "captains": "the captains of the task's participating teams",
    "with-primary": "members of teams with a primary run in the subtask",
    "without-primary": "members of participating teams without a primary run in the subtask",
    "pending-teams": "members of teams waiting for approval",
}
PRIMARY_FILTERS = ("with-primary", "without-primary")
MAX_SUBJECT = 200
MAX_BODY = 20_000


@dataclass(frozen=True)
class Message:
    """What an organizer typed: the task, the audience (and subtask), the subject and body."""

    task: str
    audience: str
    subtask: str
    subject: str
    body: str


@dataclass(frozen=True)
class Prepared:
    """A checked message: its task and subtask, its recipients and its body as HTML."""

    message: Message
    task: Task
    subtask: Subtask | None
    recipients: list[User]
    html: str


def _task(session: Session, slug: str) -> Task:
    if not slug.strip():
        raise InvalidInput("Choose the task whose participants get the message (field task).")
    task = session.scalar(select(Task).where(Task.slug == slug.strip()))
    if task is None:
        raise NotFound(f"No task {quoted(slug.strip()[:64])} (field task).")
    return task


def _subtask(task: Task, message: Message) -> Subtask | None:
    if message.audience not in PRIMARY_FILTERS:
        return None
    slug = message.subtask.strip()
    if not slug:
        raise InvalidInput(
            f"The audience {quoted(message.audience)} needs a subtask (field subtask)."
        )
    found = next((st for st in task.subtasks if st.slug == slug), None)
    if found is None:
        raise NotFound(f"Task {task.slug} has no subtask {quoted(slug[:64])} (field subtask).")
    return found


def _check_text(message: Message) -> None:
    subject = message.subject.strip()
    if not subject:
        raise InvalidInput("Write a subject (field subject).")
    if len(subject) > MAX_SUBJECT:
        raise InvalidInput(
            f"The subject has {len(subject)} characters; at most {MAX_SUBJECT} (field subject)."
        )
    header_safe(subject, "subject")
    if not message.body.strip():
        raise InvalidInput("Write the message (field body).")
    if len(message.body) > MAX_BODY:
        raise InvalidInput(
            f"The message has {len(message.body)} characters; at most {MAX_BODY} (field body)."
        )
    if "\0" in message.body:
        raise InvalidInput("The message holds a NUL character (field body).")


def _audience(session: Session, task: Task, subtask: Subtask | None, kind: str) -> list[User]:
    if kind == "pending-teams":
        return audience.members(session, (t.id for t in audience.pending_teams(session)))
    teams = {t.id for t in audience.participating_teams(session, task)}
    if kind == "members":
        return audience.members(session, teams)
    if kind == "captains":
        return audience.members(session, teams, captains=True)
    assert subtask is not None
    with_primary = teams & audience.teams_with_primary(session, subtask)
    if kind == "with-primary":
        return audience.members(session, with_primary)
    return audience.members(session, teams - with_primary)


def prepare(session: Session, message: Message) -> Prepared:
    """Check a message and find its recipients (those who turned such mail off left out)."""
    if message.audience not in AUDIENCES:
        raise InvalidInput(
            f"The audience must be one of {', '.join(AUDIENCES)}, not "
            f"{quoted(message.audience[:64])} (field audience)."
        )
    task = _task(session, message.task)
    subtask = _subtask(task, message)
    _check_text(message)
    users = _audience(session, task, subtask, message.audience)
    return Prepared(
        message=message,
        task=task,
        subtask=subtask,
        recipients=reachable(session, users, ORGANIZER_MESSAGES),
        html=render_markdown(message.body, mail_base(session)),
    )


def send_message(session: Session, message: Message, *, actor: str, now: datetime) -> int:
    """Queue one mail per recipient and record the message in the audit log; return the count."""
    ready = prepare(session, message)
    if not can_mail_links(session):
        raise NoBaseUrl(NO_BASE_URL)
    if not ready.recipients:
        raise InvalidInput("Nobody would get this message: no recipient matches the audience.")
    subject = message.subject.strip()
    intro = f"A message from the organizers of {ready.task.title} ({ready.task.slug}):\n\n"
    sent = notify_all(
        session,
        ready.recipients,
        ORGANIZER_MESSAGES,
        subject,
        # The plain part is the Markdown as typed, its links made absolute as in the HTML part.
        intro + absolute_markdown(message.body, mail_base(session)),
        html=ready.html,
    )
    record(
        session,
        actor,
        "send-message",
        at=now,
        task=ready.task.slug,
        subtask=ready.subtask.slug if ready.subtask else None,
        audience=message.audience,
        recipients=sent,
        subject=subject,
    )
    return sent
