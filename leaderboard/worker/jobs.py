"""Run one job row, deliver one mail, sweep lost jobs: the bodies of the Celery tasks.

A job's task owns its transactions: the claim commits before the run (no lock is held over
it), and the run's work commits with its outcome, or is rolled back when the job was handed on
meanwhile, refused (its failure stored alone) or broken (the job given back).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.config import Settings
from leaderboard.models import Job, utcnow
from leaderboard.services.common import mail, outbox
from leaderboard.services.common.errors import DomainError
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


def take(
    session: Session,
    job_id: int,
    *,
    worker: str,
    stale: timedelta = jobs.STALE_AFTER,
    now: datetime | None = None,
) -> jobs.Claim:
    """Claim a job in a transaction of its own, committed before the job runs."""
    with unit_of(session):
        return jobs.claim(session, job_id, worker=worker, now=now, stale=stale)


def take_next(
    session: Session,
    *,
    worker: str,
    stale: timedelta = jobs.STALE_AFTER,
    now: datetime | None = None,
) -> Job | None:
    """Take the oldest job that is queued or has lost its worker, if any; each try committed."""
    now = now or utcnow()
    while True:
        candidates = jobs.claimable(session, now=now, stale=stale)
        if not candidates:
            return None
        for candidate in candidates:
            claim = take(session, candidate, worker=worker, stale=stale, now=now)
            if claim.taken == jobs.Taken.TAKEN:
                return claim.job


def run_taken(
    session: Session,
    job: Job,
    *,
    sessions: sessionmaker[Session],
    store: Store,
    settings: Settings,
    clock: Callable[[], datetime],
) -> Job:
    """Run a job this worker has taken, beating its heartbeat meanwhile; return the row after.

    The run's work commits with its outcome while the job is still this worker's, and not at
    all once it was handed on; a refused job stores why, without the work it had done.
    """
    unit = unit_of(session)
    worker = job.worker
    with heartbeat(sessions, job.id, worker=worker, interval=settings.job_heartbeat_seconds):
        try:
            values = jobs.run_claimed(session, store, settings, job, clock=clock)
        except DomainError as exc:
            unit.rollback()
            values = jobs.refused(exc, clock())
        if jobs.finish(session, job, worker, values):
            unit.commit()
        else:
            # Handed on meanwhile: the new claimant's result stands, this one is dropped whole.
            unit.rollback()
    return session.get(Job, job.id, populate_existing=True) or job


def give_back(session: Session, job_id: int, *, worker: str, error: str) -> JobStatus | None:
    """Drop a broken run's work and give its job back (queued again, or failed at its last try)."""
    unit = unit_of(session)
    unit.rollback()
    with unit:
        return jobs.release(session, job_id, worker=worker, error=error)


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
        claim = take(session, job_id, worker=worker, stale=stale)
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
            state = give_back(
                session, job_id, worker=worker, error=f"{type(exc).__name__}: {exc}"[:2000]
            )
            return Outcome.RELEASED if state == JobStatus.QUEUED else Outcome.FAILED
        log.info("%s", outcome_line(done))
        return Outcome.DONE if done.status == JobStatus.DONE else Outcome.FAILED


def deliver_mail(
    session: Session, outbox_id: int, transport: mail.Transport, now: datetime
) -> outbox.Delivery:
    """Send one outbox mail unless it is taken or done, and record the outcome on its row.

    The claim commits before the transport is reached and the outcome after it: no
    transaction (nor SQLite's one write lock) waits on a mail server.
    """
    unit = unit_of(session)
    with unit:
        row = outbox.take(session, outbox_id, now)
    if row is None:
        return outbox.Delivery(None)
    failure = outbox.send(row, transport)
    with unit:
        return outbox.record(row, failure, now)


def send_mail(outbox_id: int, *, settings: Settings | None = None) -> outbox.Delivery:
    """Send one outbox mail through the configured transport, once however often it is asked."""
    res = resources()
    transport = mail.Transport.parse((settings or res.settings).mail_url)
    with res.sessionmaker() as session:
        done = deliver_mail(session, outbox_id, transport, res.clock.now())
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


def queue_analyses(session: Session, now: datetime) -> list[int]:
    """Queue the automatic analyses of the visible sets whose scores changed; return the job ids."""
    from leaderboard.services.jobs.automatic import queue_due

    with unit_of(session):
        queued = queue_due(session, now)
    return [job.id for job in queued]


def analyse_changed() -> list[int]:
    """Queue the automatic analyses that are due (the workers' periodic look); return their ids."""
    res = resources()
    with res.sessionmaker() as session:
        queued = queue_analyses(session, res.clock.now())
    if queued:
        log.info("automatic analysis queued: job(s) %s", ", ".join(map(str, queued)))
    return queued


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


def campaign_check(session: Session, now: datetime) -> dict[str, int]:
    """Release the results whose time has come and queue the notices due, once each.

    Each phase is a transaction of its own: one that fails leaves the ones before it done.
    """
    from leaderboard.services.notify.notices import deadline_ahead, due_work, release_due

    unit = unit_of(session)
    with unit:
        due = due_work(session, now)
    done = {"released": 0, "release_mails": 0, "deadline_mails": 0}
    for phase in due.releases:
        with unit:
            mails = release_due(session, phase, now)
        if mails is not None:
            done["released"] += 1
            done["release_mails"] += mails
    for phase in due.deadlines:
        with unit:
            done["deadline_mails"] += deadline_ahead(session, phase, now)
    return done


def check_campaign() -> dict[str, int]:
    """Release the results due by now and send the notices that are due (each once)."""
    res = resources()
    with res.sessionmaker() as session:
        done = campaign_check(session, res.clock.now())
    if any(done.values()):
        log.info("campaign check: %s", done)
    return done
