"""The Celery application of the worker: its tasks, and the threads of every worker process."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from leaderboard.config import Settings
from leaderboard.jobqueue import (
    CHECK_CAMPAIGN,
    DRAW_CHART,
    DRAW_CHARTS,
    RUN_JOB,
    SEND_MAIL,
    SUMMARIZE,
    SWEEP,
)
from leaderboard.jobqueue.broker import make_celery
from leaderboard.private_files import restrict_umask
from leaderboard.services.jobs.analyses import worker_name
from leaderboard.services.jobs.core import stale_after
from leaderboard.unit_of_work import opened
from leaderboard.worker import jobs, periodic
from leaderboard.worker.runtime import configure, resources

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("leaderboard.worker")

#: Seconds before a job that broke unexpectedly is tried again.
JOB_RETRY_PAUSE = 10
#: Seconds between looks for sets whose scores changed (their per-query summaries are redone).
SUMMARY_INTERVAL = 2.0


def worker_app(settings: Settings) -> Celery:
    """Return the Celery application with the server's tasks, for ``settings``."""
    configure(settings)
    app = make_celery(settings)
    stale = stale_after(settings).total_seconds()

    @app.task(name=RUN_JOB, bind=True, max_retries=None)
    def run_job(self: Task, job_id: int) -> str:
        outcome = jobs.run_job(job_id)
        if outcome == jobs.Outcome.BUSY:
            # Another worker holds it; if that one dies, its heartbeat stops and this retry takes over.
            raise self.retry(countdown=stale)
        if outcome == jobs.Outcome.RELEASED:
            raise self.retry(countdown=JOB_RETRY_PAUSE)
        return str(outcome)

    # Retries are counted on the outbox row (it gives up after its last), not by Celery.
    @app.task(name=SEND_MAIL, bind=True, max_retries=None)
    def send_mail(self: Task, outbox_id: int) -> str:
        done = jobs.send_mail(outbox_id)
        if done.retry_in is not None:
            raise self.retry(countdown=done.retry_in)
        return str(done.status or "taken")

    @app.task(name=DRAW_CHARTS)
    def draw_charts(job_id: int) -> int:
        return jobs.draw_charts(job_id)

    @app.task(name=DRAW_CHART)
    def draw_chart(kind: str, fmt: str, data: dict[str, Any]) -> int:
        return jobs.draw_chart(kind, fmt, data)

    @app.task(name=SUMMARIZE)
    def summarize(eval_set_id: int, revision: int) -> int:
        return jobs.summarize(eval_set_id, revision)

    # Periodic jobs run from every worker's own thread (see ``start_periodic``), claimed in the
    # database; these tasks stay so that a message an older install's beat queued still runs
    # (both jobs are idempotent).
    @app.task(name=SWEEP)
    def sweep() -> list[int]:
        jobs.sweep_mail()
        return jobs.sweep()

    @app.task(name=CHECK_CAMPAIGN)
    def check_campaign() -> dict[str, int]:
        return jobs.check_campaign()

    return app


def _repeat(name: str, interval: float, step: Callable[[], None]) -> threading.Thread:
    """Run ``step`` every ``interval`` seconds in a daemon thread; log its failures and go on."""

    def loop() -> None:
        while True:
            try:
                step()
            except Exception:  # the broker or the database may be back at the next round
                log.exception("%s failed", name)
            threading.Event().wait(interval)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


def start_periodic(settings: Settings, queues: str) -> list[threading.Thread]:
    """Say this worker is alive, and run the periodic jobs it claims, each from a thread.

    Every worker runs both, with no flag: a deployment's periodic work needs one worker of any
    kind, and the claims in the database run each period once however many look.
    """
    due = periodic.schedule(settings)
    name = worker_name()

    def seen() -> None:
        with opened(resources().sessionmaker) as unit:
            periodic.record_seen(unit.session, queues)

    def run() -> None:
        periodic.run_due(due, name)

    def expired_uploads() -> None:
        periodic.remove_expired_uploads(settings)

    return [
        # Its own thread: a long campaign check never makes the worker look gone.
        _repeat("seen", periodic.SEEN_INTERVAL, seen),
        _repeat("periodic", periodic.TICK, run),
        _repeat("staged-uploads", periodic.STAGED_INTERVAL, expired_uploads),
    ]


def start_summarizer(interval: float) -> threading.Thread:
    """Queue the summaries of sets whose scores changed, every ``interval`` seconds.

    Uploads only advance their set's revision (nothing is queued inside a request); this loop
    finds the sets that moved and hands each to a pool process once per revision.
    """
    sent: dict[int, int] = {}

    def look() -> None:
        for set_id, revision in jobs.stale_sets():
            if sent.get(set_id) != revision:
                sent[set_id] = revision
                jobs.queue_summary(set_id, revision)

    return _repeat("summarizer", interval, look)


def start(settings: Settings, *, queues: str, concurrency: int, loglevel: str) -> None:
    """Run a Celery worker for the server's queues (and the periodic jobs) until it is stopped."""
    from celery import signals

    # Whatever a job writes in the instance folder is the server's own only.
    restrict_umask()
    app = worker_app(settings)

    @signals.worker_ready.connect(weak=False)
    def _ready(**_: Any) -> None:
        start_periodic(settings, queues)
        if "jobs" in queues.split(","):
            start_summarizer(SUMMARY_INTERVAL)

    argv = [
        "worker",
        f"--queues={queues}",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
        f"--hostname=leaderboard-{os.getpid()}@%h",
    ]
    app.worker_main(argv)
