"""Tell whether background work gets done: when a worker was last seen, and what waits for one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.models import Job, utcnow
from leaderboard.services.common.outbox import queued_mail_count
from leaderboard.services.notify.notices import due_releases
from leaderboard.services.operations.workers import last_seen
from leaderboard.states import JobStatus

#: No worker seen for this long: the health check and the dashboard warn.
STALE_AFTER = timedelta(minutes=5)
#: How many due releases a detailed warning names (the rest are counted).
NAMED_RELEASES = 5
START_ONE = "start `leaderboard worker`"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def ago(delta: timedelta) -> str:
    """Return a time span in words, coarsely: "40 seconds", "12 minutes", "3 hours", "2 days"."""
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 90:
        return _count(seconds, "second")
    if seconds < 90 * 60:
        return _count(round(seconds / 60), "minute")
    if seconds < 48 * 3600:
        return _count(round(seconds / 3600), "hour")
    return _count(round(seconds / 86400), "day")


@dataclass(frozen=True)
class DueRelease:
    """A phase whose results a worker should have released by now."""

    task: str
    subtask: str
    phase: str
    due: datetime

    def __str__(self) -> str:
        return f"{self.task}/{self.subtask} {self.phase}, due {self.due:%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True)
class Waiting:
    """What waits for a worker: queued jobs, due scheduled releases and undelivered mail."""

    jobs: int
    releases: tuple[DueRelease, ...]
    mail: int

    def counts(self) -> dict[str, int]:
        """Return how many of each kind wait (no names: the health check is public)."""
        return {"jobs": self.jobs, "releases": len(self.releases), "mail": self.mail}

    @property
    def total(self) -> int:
        """Return how many things wait, of every kind."""
        return self.jobs + len(self.releases) + self.mail

    def phrase(self, *, detailed: bool) -> str:
        """Return what waits in words, "3 mails, 1 scheduled release and 2 jobs" ("" if none).

        ``detailed`` names each due release's task, subtask, phase and time (for organizers).
        """
        parts = []
        if self.mail:
            parts.append(_count(self.mail, "mail"))
        if self.releases:
            releases = _count(len(self.releases), "scheduled release")
            if detailed:
                named = "; ".join(str(r) for r in self.releases[:NAMED_RELEASES])
                more = len(self.releases) - NAMED_RELEASES
                releases += f" ({named}{f'; {more} more' if more > 0 else ''})"
            parts.append(releases)
        if self.jobs:
            parts.append(_count(self.jobs, "job"))
        if len(parts) < 2:
            return "".join(parts)
        return ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True)
class Health:
    """When a worker was last seen, whether that is too long ago, and what waits for one."""

    now: datetime
    last_seen: datetime | None
    worker: str | None
    queues: str | None
    waiting: Waiting

    @property
    def stale(self) -> bool:
        """Return whether no worker was seen in the last five minutes (or ever)."""
        return self.last_seen is None or self.now - self.last_seen > STALE_AFTER

    def problem(self, *, detailed: bool = False) -> str | None:
        """Return what is wrong when no worker was seen for five minutes (else None).

        ``detailed`` names the due releases (for organizers); the advice is ``warning``'s.
        """
        if not self.stale:
            return None
        if self.last_seen is None:
            head = "No worker has been seen yet"
        else:
            head = (
                f"No worker has been seen for {ago(self.now - self.last_seen)} "
                f"(last at {self.last_seen:%Y-%m-%d %H:%M} UTC)"
            )
        what = self.waiting.phrase(detailed=detailed)
        if not what:
            return (
                f"{head}, so scheduled releases, deadline notices, mail and analyses will wait "
                "(none waits now)"
            )
        verb = "waits" if self.waiting.total == 1 else "wait"
        return f"{head}: {what} {verb} for one"

    def warning(self, *, detailed: bool = False) -> str | None:
        """Return the warning sentence, with its advice, when no worker was seen for a while."""
        problem = self.problem(detailed=detailed)
        return f"{problem}; {START_ONE}." if problem else None


def waiting(session: Session, *, campaign_now: datetime) -> Waiting:
    """Return what waits for a worker; releases are due by the campaign's clock."""
    jobs = session.scalar(
        select(func.count()).select_from(Job).where(Job.status == JobStatus.QUEUED)
    )
    releases = tuple(
        DueRelease(
            task=phase.subtask.task.slug,
            subtask=phase.subtask.slug,
            phase=phase.name,
            due=phase.release_at,
        )
        for phase in due_releases(session, campaign_now)
        if phase.release_at is not None
    )
    return Waiting(jobs=int(jobs or 0), releases=releases, mail=queued_mail_count(session))


def health(session: Session, *, campaign_now: datetime, now: datetime | None = None) -> Health:
    """Return the workers' health at ``now`` (system time, as workers record their lives).

    Due releases are judged by the campaign's clock (``campaign_now``), which a rehearsal may
    move, as the workers judge them.
    """
    worker = last_seen(session)
    return Health(
        now=now or utcnow(),
        last_seen=worker.seen_at if worker is not None else None,
        worker=worker.name if worker is not None else None,
        queues=worker.queues if worker is not None else None,
        waiting=waiting(session, campaign_now=campaign_now),
    )
