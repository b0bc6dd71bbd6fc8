"""The schedule a task's pages show: phases, the countdown to the next deadline, uploads open."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Boolean, Integer, Row, String, text
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from leaderboard.models import UTCDateTime
from leaderboard.tasks.definition import slug_like

UPCOMING, OPEN, ENDED = "upcoming", "open", "ended"


@dataclass(frozen=True)
class PhaseTimes:
    """One phase as the schedule shows it: its set, its window and where ``now`` stands."""

    subtask: str
    name: str
    set_slug: str
    set_title: str
    starts_at: datetime | None
    ends_at: datetime | None
    late_allowed: bool
    state: str  # UPCOMING | OPEN | ENDED


@dataclass(frozen=True)
class Countdown:
    """The next deadline ahead: its phase and set, and the time left in words."""

    phase: str
    set_title: str
    deadline: datetime
    left: str


@dataclass(frozen=True)
class Schedule:
    """A subtask's (or a task's) phases in time order, its next deadline, and uploads open now."""

    phases: tuple[PhaseTimes, ...]
    countdown: Countdown | None
    uploads_open: bool

    @property
    def key(self) -> tuple[object, ...]:
        """Return what of the rendered schedule changes with time alone (a page-cache key part)."""
        return (
            tuple(p.state for p in self.phases),
            self.countdown.left if self.countdown is not None else None,
            self.uploads_open,
        )


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def time_left(delta: timedelta) -> str:
    """Return a time left in words: "2 days 3 hours left", "5 hours 1 minute left", ...

    Coarse on purpose (the page updates it live): it changes hourly while days are left, then
    every minute, and by the second only in the last minute.
    """
    total = max(0, int(delta.total_seconds()))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        parts = [_plural(days, "day")] + ([_plural(hours, "hour")] if hours else [])
    elif hours:
        parts = [_plural(hours, "hour")] + ([_plural(minutes, "minute")] if minutes else [])
    elif minutes:
        parts = [_plural(minutes, "minute")]
    else:
        parts = [_plural(seconds, "second")]
    return " ".join(parts) + " left"


def _state(starts_at: datetime | None, ends_at: datetime | None, now: datetime) -> str:
    if starts_at is not None and now < starts_at:
        return UPCOMING
    if ends_at is not None and ends_at <= now:
        return ENDED
    return OPEN


# Prepared text queries with typed columns (times come back aware, in UTC): the results page
# asks on every view, cached or not, where building an ORM statement would cost more.
_COLUMNS: dict[str, TypeEngine[Any]] = {
    "subtask": String(),
    "position": Integer(),
    "name": String(),
    "set_slug": String(),
    "set_title": String(),
    "starts_at": UTCDateTime(),
    "ends_at": UTCDateTime(),
    "late_allowed": Boolean(),
    "created_at": UTCDateTime(),
    "id": Integer(),
}
_SQL = (
    "SELECT s.slug AS subtask, s.position AS position, p.name AS name, e.slug AS set_slug,"
    " e.title AS set_title, p.starts_at AS starts_at, p.ends_at AS ends_at,"
    " p.late_allowed AS late_allowed, p.created_at AS created_at, p.id AS id"
    " FROM phases p JOIN eval_sets e ON p.eval_set_id = e.id"
    " JOIN subtasks s ON p.subtask_id = s.id JOIN tasks t ON s.task_id = t.id"
    " WHERE t.slug = :task"
)
_OF_TASK = text(_SQL).columns(**_COLUMNS)
_OF_SUBTASK = text(_SQL + " AND s.slug = :subtask").columns(**_COLUMNS)


def _uploads_open(phases: tuple[PhaseTimes, ...]) -> bool:
    """Return whether some set takes a team's run now, by the rules the upload applies.

    A set takes runs while one of its phases is open; after its last phase ended, only as late
    runs if that phase allows them (a correction needs the team's own on-time run: not counted).
    """
    for subtask, set_slug in {(p.subtask, p.set_slug) for p in phases}:
        mine = [p for p in phases if (p.subtask, p.set_slug) == (subtask, set_slug)]
        if any(p.state == OPEN for p in mine):
            return True
        ended = [(p.ends_at, p) for p in mine if p.state == ENDED and p.ends_at is not None]
        if ended and max(ended, key=lambda e: e[0])[1].late_allowed:
            return True
    return False


def _schedule(rows: Sequence[Row[Any]], now: datetime) -> Schedule:
    # In time order per subtask, as phases_of orders a subtask's phases.
    ordered = sorted(
        rows,
        key=lambda r: (
            r.position,
            r.subtask,
            r.starts_at is not None,
            r.starts_at or r.created_at,
            r.id,
        ),
    )
    phases = tuple(
        PhaseTimes(
            subtask=r.subtask,
            name=r.name,
            set_slug=r.set_slug,
            set_title=r.set_title,
            starts_at=r.starts_at,
            ends_at=r.ends_at,
            late_allowed=bool(r.late_allowed),
            state=_state(r.starts_at, r.ends_at, now),
        )
        for r in ordered
    )
    ahead = [(p.ends_at, p) for p in phases if p.ends_at is not None and now < p.ends_at]
    countdown = None
    if ahead:
        deadline, nxt = min(ahead, key=lambda e: e[0])
        countdown = Countdown(nxt.name, nxt.set_title, deadline, time_left(deadline - now))
    return Schedule(phases, countdown, _uploads_open(phases))


def subtask_schedule(session: Session, task: str, subtask: str, now: datetime) -> Schedule:
    """Return a subtask's schedule by slugs in one query (empty for an unknown subtask)."""
    if not (slug_like(task) and slug_like(subtask)):
        return _schedule([], now)
    return _schedule(session.execute(_OF_SUBTASK, {"task": task, "subtask": subtask}).all(), now)


def task_schedule(session: Session, task: str, now: datetime) -> Schedule:
    """Return every phase of a task's subtasks, by subtask then time, in one query.

    Its countdown and uploads-open are the task's as a whole (any subtask's next deadline).
    """
    if not slug_like(task):
        return _schedule([], now)
    return _schedule(session.execute(_OF_TASK, {"task": task}).all(), now)
