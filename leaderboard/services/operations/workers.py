"""Record each background worker's signs of life and tell when one was last seen."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from leaderboard.db import insert_missing
from leaderboard.models import WorkerSeen

#: A worker silent this long is forgotten (its row would only tell of a process long gone).
FORGET_AFTER = timedelta(days=7)


def seen(session: Session, *, name: str, host: str, pid: int, queues: str, now: datetime) -> None:
    """Record that the worker ``name`` is alive at ``now``, and forget long-silent ones."""
    insert_missing(
        session,
        WorkerSeen,
        "name",
        {"name": name, "host": host, "pid": pid, "queues": queues, "started_at": now,
         "seen_at": now},
    )  # fmt: skip
    session.execute(
        update(WorkerSeen).where(WorkerSeen.name == name).values(seen_at=now, queues=queues)
    )
    session.execute(delete(WorkerSeen).where(WorkerSeen.seen_at < now - FORGET_AFTER))


def last_seen(session: Session) -> WorkerSeen | None:
    """Return the worker seen most recently, if any ever was."""
    return session.scalar(
        select(WorkerSeen).order_by(WorkerSeen.seen_at.desc(), WorkerSeen.name).limit(1)
    )
