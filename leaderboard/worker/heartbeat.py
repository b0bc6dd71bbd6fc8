"""Keep a running job's heartbeat fresh from a thread while its worker computes it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session, sessionmaker

from leaderboard.services.jobs.core import beat
from leaderboard.unit_of_work import opened

log = logging.getLogger("leaderboard.worker")


@contextmanager
def heartbeat(
    sessions: sessionmaker[Session], job_id: int, *, worker: str, interval: float
) -> Iterator[None]:
    """Beat every ``interval`` seconds until the block ends or the job is no longer ours."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            try:
                with opened(sessions) as unit:
                    if not beat(unit.session, job_id, worker=worker):
                        return
            except Exception:  # a missed beat is retried at the next one
                log.exception("heartbeat of job %s failed", job_id)

    thread = threading.Thread(target=loop, name=f"heartbeat-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(interval + 5)
