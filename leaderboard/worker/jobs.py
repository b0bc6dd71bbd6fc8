"""Run one job row, deliver one mail, sweep lost jobs: the bodies of the Celery tasks."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.config import Settings
from leaderboard.models import Job
from leaderboard.services.common import mail, outbox
from leaderboard.services.jobs import core as jobs
from leaderboard.services.results.chart_files import Chart
from leaderboard.states import JobPurpose, JobStatus, MailStatus
from leaderboard.storage import Store
from leaderboard.unit_of_work import opened, unit_of
from leaderboard.worker.heartbeat import heartbeat
from leaderboard.worker.runtime import resources

log = logging.getLogger("leaderboard.worker")

#: How the worker names each kind of job it reports.
JOB_NAMES = {
    JobPurpose.TABLE: "analysis",
    JobPurpose.FREEZE: "freeze",
    JobPurpose.VERIFY: "verification",
    JobPurpose.RESCORE: "re-score",
}


class Outcome(StrEnum):
    """What became of one delivery of a job's task."""

    DONE = "done"
    FAILED = "failed"
    #: Already finished, or gone: the delivery was a duplicate.
    FINISHED = "finished"
    #: Another live worker runs it: look again once it could have gone silent.
    BUSY = "busy"
    #: It broke unexpectedly and was queued again: retry after a pause.
    RELEASED = "released"


def run_taken(
    session: Session,
    job: Job,
    *,
    sessions: sessionmaker[Session],
    store: Store,
    settings: Settings,
    clock: Callable[[], datetime],
) -> Job:
    """Run a job this worker has taken, beating its heartbeat meanwhile; return the row after."""
    with heartbeat(sessions, job.id, worker=job.worker, interval=settings.job_heartbeat_seconds):
        return jobs.run_claimed(session, store, settings, job, clock=clock)


def outcome_line(job: Job) -> str:
    """Return how a worker reports a finished job: "analysis 3: done" (with why it failed)."""
    return f"{JOB_NAMES[job.purpose]} {job.id}: {job.status}" + (
        f" ({job.error})" if job.error else ""
    )


def run_job(job_id: int) -> Outcome:
    """Take the job if it is free, run it with a heartbeat, and store its outcome."""
    res = resources()
    worker = jobs.claim_name()
    stale = jobs.stale_after(res.settings)
    with res.sessionmaker() as session:
        claim = jobs.claim(session, job_id, worker=worker, stale=stale)
        if claim.taken == jobs.Taken.BUSY:
            return Outcome.BUSY
        if claim.job is None:
            return Outcome.FINISHED
        try:
            done = run_taken(
                session,
                claim.job,
                sessions=res.sessionmaker,
                store=res.store,
                settings=res.settings,
                clock=res.clock.now,
            )
        except Exception as exc:
            log.exception("job %s broke", job_id)
            state = jobs.release(
                session, job_id, worker=worker, error=f"{type(exc).__name__}: {exc}"[:2000]
            )
            return Outcome.RELEASED if state == JobStatus.QUEUED else Outcome.FAILED
        log.info("%s", outcome_line(done))
        return Outcome.DONE if done.status == JobStatus.DONE else Outcome.FAILED


def send_mail(outbox_id: int, *, settings: Settings | None = None) -> outbox.Delivery:
    """Send one outbox mail through the configured transport, once however often it is asked."""
    res = resources()
    transport = mail.Transport.parse((settings or res.settings).mail_url)
    with res.sessionmaker() as session:
        done = outbox.deliver(session, outbox_id, transport, res.clock.now())
        # The transport's answer, never the mail: its text holds links.
        if done.status == MailStatus.QUEUED:
            reason = outbox.last_error(session, outbox_id)
            log.warning(
                "mail %s not sent: %s (tried again in %s s)", outbox_id, reason, done.retry_in
            )
        elif done.status == MailStatus.FAILED:
            reason = outbox.last_error(session, outbox_id)
            log.error("mail %s failed after its retries: %s", outbox_id, reason)
    return done


def draw_all(session: Session, store: Store, charts: Iterable[Chart]) -> int:
    """Draw and store each chart, committing each before the next is drawn; return how many."""
    from leaderboard.services.results.chart_files import draw_chart

    drawn = 0
    for kind, fmt, data in charts:
        # One at a time: a chart drawn is kept if a later one fails, and SQLite's write lock,
        # taken by the chart's row, is not held while the next one is drawn.
        with unit_of(session):
            draw_chart(session, store, kind, fmt, data)
        drawn += 1
    return drawn


def summarize_set(session: Session, store: Store, eval_set_id: int) -> int:
    """Store a set's per-query summaries, then draw its runs' charts; return how many measures."""
    from leaderboard.services.results.query_summaries import summarize_set as summarize

    try:
        with unit_of(session):
            summarized = summarize(session, store, eval_set_id)
    except IntegrityError:
        return 0  # another worker stored the same set's summaries meanwhile
    draw_all(session, store, summarized.charts)
    return summarized.measures


def draw_charts(job_id: int) -> int:
    """Draw and store the charts of a finished job's analysis, and summarize its set if stale."""
    from leaderboard.services.results.chart_data import job_charts
    from leaderboard.services.results.query_summaries import is_stale

    res = resources()
    with res.sessionmaker() as session:
        drawn = draw_all(session, res.store, job_charts(session, res.store, job_id))
        job = session.get(Job, job_id)
        if job is not None and is_stale(session, job.eval_set):
            summarize_set(session, res.store, job.eval_set_id)
        return drawn


def draw_chart(kind: str, fmt: str, data: dict[str, Any]) -> int:
    """Draw and store one chart a reader asked for; return its size in bytes."""
    from leaderboard.services.results.chart_files import draw_chart as draw

    res = resources()
    with opened(res.sessionmaker) as unit:
        return len(draw(unit.session, res.store, kind, fmt, data))


def stale_sets() -> list[tuple[int, int]]:
    """Return (set id, revision) of the sets whose per-query summaries are behind."""
    from leaderboard.services.results.query_summaries import stale_sets as find

    with resources().sessionmaker() as session:
        return find(session)


def queue_summary(eval_set_id: int, revision: int) -> None:
    """Send the summary of a set at a revision to the jobs queue."""
    from leaderboard.jobqueue import SUMMARIZE, send_now

    send_now(resources().dispatcher, SUMMARIZE, eval_set_id, revision)


def summarize(eval_set_id: int, revision: int) -> int:
    """Store a set's per-query summaries unless they already cover ``revision``; return how many."""
    from leaderboard.services.results.query_summaries import summarized_revision

    res = resources()
    with res.sessionmaker() as session:
        done = summarized_revision(session, eval_set_id)
        if done is not None and done >= revision:
            return 0
        return summarize_set(session, res.store, eval_set_id)


def sweep() -> list[int]:
    """Send again the jobs whose worker fell silent or whose task was lost."""
    res = resources()
    with opened(res.sessionmaker) as unit:
        return jobs.sweep(unit.session, stale=jobs.stale_after(res.settings))


def sweep_mail() -> list[int]:
    """Queue again the outbox mails whose message seems lost; return their ids."""
    res = resources()
    with opened(res.sessionmaker) as unit:
        return outbox.resend_lost(unit.session, res.clock.now())


def check_campaign() -> dict[str, int]:
    """Release the results due by now and send the notices that are due (each once)."""
    from leaderboard.services.notify.notices import check_campaign as check

    res = resources()
    with res.sessionmaker() as session:
        done = check(session, res.clock.now())
    if any(done.values()):
        log.info("campaign check: %s", done)
    return done
