"""The Celery application of the worker: its tasks, its schedule and its watchdog."""

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
from leaderboard.services.results.jobs import stale_after
from leaderboard.worker import jobs
from leaderboard.worker.runtime import configure

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("leaderboard.worker")

#: Seconds before a job that broke unexpectedly is tried again.
JOB_RETRY_PAUSE = 10
#: Seconds between the campaign checks (scheduled releases, deadline notices) of beat.
CAMPAIGN_INTERVAL = 60.0
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

    @app.task(name=SWEEP)
    def sweep() -> list[int]:
        jobs.sweep_mail()
        return jobs.sweep()

    @app.task(name=CHECK_CAMPAIGN)
    def check_campaign() -> dict[str, int]:
        return jobs.check_campaign()

    # Beat (one per deployment) runs the campaign's periodic jobs.
    app.conf.beat_schedule = {
        "sweep-lost-jobs": {"task": SWEEP, "schedule": stale},
        "check-campaign": {"task": CHECK_CAMPAIGN, "schedule": CAMPAIGN_INTERVAL},
    }
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


def start_watchdog(interval: float) -> threading.Thread:
    """Sweep lost jobs every ``interval`` seconds from a thread of this (the main) process.

    Every worker sweeps, so no job waits on one host's beat; a job sent twice is harmless.
    """

    def sweep() -> None:
        sent = jobs.sweep()
        if sent:
            log.info("sent again: job(s) %s", ", ".join(map(str, sent)))
        mails = jobs.sweep_mail()
        if mails:
            log.info("sent again: mail(s) %s", ", ".join(map(str, mails)))

    return _repeat("watchdog", interval, sweep)


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


def start(settings: Settings, *, queues: str, concurrency: int, beat: bool, loglevel: str) -> None:
    """Run a Celery worker for the server's queues until it is stopped."""
    from celery import signals

    # Beat's schedule file and whatever a job writes are the server's own only.
    restrict_umask()
    app = worker_app(settings)

    @signals.worker_ready.connect(weak=False)
    def _ready(**_: Any) -> None:
        start_watchdog(stale_after(settings).total_seconds())
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
    if beat:
        argv.append("--beat")
    app.worker_main(argv)
