"""Claim the runs of periodic jobs in the database, so each period runs once on one worker.

Every worker looks every few seconds for periodic jobs that are due and claims each with one
conditional UPDATE that moves its due time a period on: of any number of workers looking at
once, one changes the row and runs the job; the others find it not due. A worker that dies
in the middle leaves the job to whichever worker claims the next period.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlalchemy.orm import Session

from leaderboard.db import insert_missing
from leaderboard.models import PeriodicRun


def claim(session: Session, name: str, *, every: timedelta, worker: str, now: datetime) -> bool:
    """Claim the run of ``name`` due by ``now`` for ``worker``; False when not due or taken.

    The claim holds once the caller's unit of work commits.
    """
    insert_missing(
        session, PeriodicRun, "name", {"name": name, "due_at": now, "claimed_by": "", "runs": 0}
    )
    won = session.execute(
        update(PeriodicRun)
        .where(
            PeriodicRun.name == name,
            # A due time more than two periods ahead means the clock went back: run now. Within
            # them it is a worker that read the clock before the one that just claimed the row.
            or_(PeriodicRun.due_at <= now, PeriodicRun.due_at > now + 2 * every),
        )
        .values(due_at=now + every, claimed_by=worker, claimed_at=now, runs=PeriodicRun.runs + 1)
    )
    return won.rowcount == 1  # type: ignore[attr-defined]


def finished(session: Session, name: str, *, worker: str, now: datetime) -> None:
    """Record that ``worker``'s claimed run of ``name`` ended (unless another claimed it since)."""
    session.execute(
        update(PeriodicRun)
        .where(PeriodicRun.name == name, PeriodicRun.claimed_by == worker)
        .values(finished_at=now)
    )
