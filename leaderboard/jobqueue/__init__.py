"""Hand background jobs to the broker, each only once the row that records it is committed.

Services call ``enqueue`` inside their transaction; the job goes on the unit of work's
after-commit list, so it is sent when the session commits and forgotten when it rolls back, so no task runs for a rolled-back row. A row whose task was
lost (the broker was down at the commit, or restarted empty) is sent again by the workers'
sweep: the row, not the message, is the record of what was asked.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any, Protocol

from sqlalchemy.orm import Session

from leaderboard.unit_of_work import unit_of

log = logging.getLogger("leaderboard.jobqueue")

#: The task that runs one job row (an analysis, a freeze, a verification).
RUN_JOB = "leaderboard.run_job"
#: The task that draws and stores a finished analysis' charts (so no page request draws them).
DRAW_CHARTS = "leaderboard.draw_charts"
#: The task that draws and stores one chart a reader asked for and found not drawn yet.
DRAW_CHART = "leaderboard.draw_chart"
#: The task that stores a set's per-query summaries (and its runs' charts) at its revision.
SUMMARIZE = "leaderboard.summarize"
#: The task that delivers one mail.
SEND_MAIL = "leaderboard.send_mail"
#: The task that sends again the jobs whose task was lost or whose worker died.
SWEEP = "leaderboard.sweep"
#: The periodic task that releases results at their time and sends the notices that are due.
CHECK_CAMPAIGN = "leaderboard.check_campaign"
#: The queues: job rows, and mail (which a deployment may give workers of its own).
JOBS_QUEUE = "jobs"
MAIL_QUEUE = "mail"
QUEUE_OF = {
    RUN_JOB: JOBS_QUEUE,
    DRAW_CHARTS: JOBS_QUEUE,
    DRAW_CHART: JOBS_QUEUE,
    SUMMARIZE: JOBS_QUEUE,
    SWEEP: JOBS_QUEUE,
    CHECK_CAMPAIGN: JOBS_QUEUE,
    SEND_MAIL: MAIL_QUEUE,
}

#: Where a session keeps its dispatcher (set by the session factory).
DISPATCHER = "leaderboard.dispatcher"


class Dispatcher(Protocol):
    """Sends a task by name to the broker."""

    def send(self, task: str, args: tuple[Any, ...]) -> None:
        """Publish one task message; raise when the broker cannot take it."""


def enqueue(session: Session, task: str, *args: Any) -> None:
    """Send ``task(*args)`` when the session's transaction commits; never if it rolls back."""
    unit_of(session).after_commit(lambda: send_now(session.info.get(DISPATCHER), task, *args))


#: When each dispatcher last sent a task under a key (see ``enqueue_once``).
_RECENT: weakref.WeakKeyDictionary[Any, dict[str, float]] = weakref.WeakKeyDictionary()
_RECENT_LOCK = threading.Lock()


def enqueue_once(session: Session, key: str, within: float, task: str, *args: Any) -> bool:
    """Enqueue a task unless this process sent the same ``key`` less than ``within`` s ago.

    For work a reader's request asks for and that many readers (or one reader's reloads) ask
    for alike: one message per key and interval, not one per request. Returns whether queued.
    """
    dispatcher = session.info.get(DISPATCHER)
    now = time.monotonic()
    if dispatcher is not None:
        with _RECENT_LOCK:
            sent = _RECENT.setdefault(dispatcher, {})
            if now - sent.get(key, -within) < within:
                return False
            if len(sent) > 10_000:
                sent.clear()
            sent[key] = now
    enqueue(session, task, *args)
    return True


def named(task: str, args: tuple[Any, ...]) -> str:
    """Return how a log names a task: its name and its ids, never another argument's text."""
    # An argument other than an id may be anything a caller passed (once, a whole mail).
    ids = [str(arg) for arg in args if isinstance(arg, int) and not isinstance(arg, bool)]
    return f"{task}({', '.join(ids)})" if len(ids) == len(args) else task


def send_now(dispatcher: Dispatcher | None, task: str, *args: Any) -> bool:
    """Publish a task at once; log and return False when there is no broker to take it."""
    if dispatcher is None:
        log.warning("no queue: %s not sent", named(task, args))
        return False
    try:
        dispatcher.send(task, args)
    except Exception as exc:  # a broker outage must not fail the action that asked
        # The row is the record: the sweep sends it again. No traceback: its frames hold args.
        log.error(
            "%s could not be queued (%s; the sweep sends it again)",
            named(task, args),
            type(exc).__name__,
        )
        return False
    return True
