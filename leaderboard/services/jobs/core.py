"""Run the job rows (analyses, freezes, verifications, re-scores): take, keep alive, finish, hand on.

Delivery is at least once: a job's task may arrive twice, or at a second worker while the
first still runs. Every step is therefore a conditional update of the row: a job is taken
when it is queued or its worker has been silent for three heartbeats, and a worker stores its
result only while the job is still its own, so a job never runs twice to a different end.

Each step works in the open transaction; the worker's task commits between them (see
``leaderboard.worker.jobs``): the claim before the run, the run's work with its outcome.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.jobqueue import DRAW_CHARTS, RUN_JOB, enqueue
from leaderboard.models import EvalSet, Job, utcnow
from leaderboard.services.common.errors import Conflict, DomainError, NotFound
from leaderboard.services.common.revisions import touch
from leaderboard.services.freeze.analysis import request_of_report
from leaderboard.services.freeze.core import freeze, verify_all
from leaderboard.services.gold.core import rescore_set
from leaderboard.services.jobs.analyses import _request_of, compute, worker_name
from leaderboard.services.jobs.automatic import is_automatic, not_needed
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import JobPurpose, JobStatus
from leaderboard.storage import Store

#: Heartbeats a running job may miss before another worker takes it over.
MISSED_HEARTBEATS = 3
#: A running job silent this long (three default heartbeats) has lost its worker.
STALE_AFTER = timedelta(seconds=30)
#: How many times a job is taken before a lost worker or an unexpected error fails it.
MAX_ATTEMPTS = 3
#: The jobs whose report has charts.
CHARTED = (JobPurpose.TABLE, JobPurpose.FREEZE)
#: A queued job whose task has waited this many stale periods is sent again (a lost message).
RESEND_AFTER_STALE_PERIODS = 10


def claim_name() -> str:
    """Return a new name for one claim of a job: host, process and a token of its own."""
    return f"{worker_name()}/{uuid.uuid4().hex[:8]}"[:128]


def _owned(job_id: int, worker: str) -> Any:
    """Return the condition that a job is running under this worker's claim."""
    return and_(Job.id == job_id, Job.worker == worker, Job.status == JobStatus.RUNNING)


def stale_after(settings: Settings) -> timedelta:
    """Return how long a running job may be silent before it counts as lost."""
    return timedelta(seconds=settings.job_heartbeat_seconds * MISSED_HEARTBEATS)


class Taken(StrEnum):
    """What became of an attempt to take a job."""

    TAKEN = "taken"
    #: Another worker runs it and is alive: try again later.
    BUSY = "busy"
    #: Done, failed or gone: nothing to do.
    FINISHED = "finished"


@dataclass(frozen=True)
class Claim:
    """The outcome of taking a job; ``job`` is set when it was taken."""

    taken: Taken
    job: Job | None = None


def _stale(now: datetime, stale: timedelta) -> Any:
    cutoff = now - stale
    return and_(
        Job.status == JobStatus.RUNNING,
        or_(
            Job.heartbeat_at < cutoff,
            and_(Job.heartbeat_at.is_(None), Job.started_at < cutoff),
        ),
    )


def claim(
    session: Session,
    job_id: int,
    *,
    worker: str,
    now: datetime | None = None,
    stale: timedelta = STALE_AFTER,
) -> Claim:
    """Take a job that is queued, or running with a silent worker; say why not otherwise.

    One whose every attempt lost its worker is failed instead. The caller commits the claim
    before running the job.
    """
    now = now or utcnow()
    # The conditional update is the claim: of two workers racing, one changes the row.
    taken = session.execute(
        update(Job)
        .where(
            Job.id == job_id,
            Job.attempts < MAX_ATTEMPTS,
            or_(Job.status == JobStatus.QUEUED, _stale(now, stale)),
        )
        .values(
            status=JobStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            worker=worker,
            attempts=Job.attempts + 1,
        )
    )
    if taken.rowcount == 1:  # type: ignore[attr-defined]
        return Claim(Taken.TAKEN, session.get(Job, job_id, populate_existing=True))
    job = session.get(Job, job_id, populate_existing=True)
    if job is None or job.status in (JobStatus.DONE, JobStatus.FAILED):
        return Claim(Taken.FINISHED)
    if job.attempts >= MAX_ATTEMPTS and _give_up(session, job_id, now, stale):
        return Claim(Taken.FINISHED)
    return Claim(Taken.BUSY)


def _give_up(session: Session, job_id: int, now: datetime, stale: timedelta) -> bool:
    """Fail a job whose every attempt lost its worker; return whether it was failed now."""
    failed = session.execute(
        update(Job)
        .where(
            Job.id == job_id,
            or_(Job.status == JobStatus.QUEUED, _stale(now, stale)),
        )
        .values(
            status=JobStatus.FAILED,
            error=f"Given up after {MAX_ATTEMPTS} attempts: each time its worker stopped.",
            finished_at=now,
            worker="",
        )
    )
    return failed.rowcount == 1  # type: ignore[attr-defined]


def claimable(
    session: Session, *, now: datetime | None = None, stale: timedelta = STALE_AFTER
) -> list[int]:
    """Return the ids of the twenty oldest jobs that are queued or have lost their worker."""
    now = now or utcnow()
    return list(
        session.scalars(
            select(Job.id)
            .where(or_(Job.status == JobStatus.QUEUED, _stale(now, stale)))
            .order_by(Job.id)
            .limit(20)
        )
    )


def beat(session: Session, job_id: int, *, worker: str, now: datetime | None = None) -> bool:
    """Record that the job's worker is alive; return False once the job is no longer its own."""
    alive = session.execute(
        update(Job).where(_owned(job_id, worker)).values(heartbeat_at=now or utcnow())
    )
    return alive.rowcount == 1  # type: ignore[attr-defined]


def finish(session: Session, job: Job, worker: str, values: dict[str, Any]) -> bool:
    """Store a job's outcome in the open transaction if it is still this worker's; say whether.

    When it is not, the caller rolls the run's work back: the new claimant's result stands.
    A finished analysis (or freeze) has its charts drawn next, by whichever worker takes that.
    """
    stored = session.execute(update(Job).where(_owned(job.id, worker)).values(**values))
    if stored.rowcount != 1:  # type: ignore[attr-defined]
        return False
    if values.get("status") == JobStatus.DONE and job.purpose in CHARTED:
        enqueue(session, DRAW_CHARTS, job.id)
    return True


def run_claimed(
    session: Session,
    store: Store,
    settings: Settings,
    job: Job,
    *,
    clock: Callable[[], datetime] = utcnow,
) -> dict[str, Any]:
    """Run a taken job on the set as it is now, in the open transaction; return its row's values.

    An analysis makes its report; a freeze freezes the official table (as of the request)
    and the analysis frozen with it; a verification reports what it found. A refused job
    raises DomainError: the caller rolls its work back and stores ``refused`` instead.
    """
    values = _run(session, store, settings, job, clock)
    values["status"] = JobStatus.DONE
    values["finished_at"] = clock()
    return values


def refused(error: DomainError, now: datetime) -> dict[str, Any]:
    """Return the row's values of a job refused with ``error``."""
    return {"status": JobStatus.FAILED, "error": error.message, "finished_at": now}


def _run(
    session: Session,
    store: Store,
    settings: Settings,
    job: Job,
    clock: Callable[[], datetime],
) -> dict[str, Any]:
    """Do a job's work in the open transaction; return what its row then says."""
    eval_set = session.get(EvalSet, job.eval_set_id)
    if eval_set is None:
        raise NotFound("The set of this analysis no longer exists.")
    subtask = eval_set.subtask
    target = resolve(session, subtask.task.slug, subtask.slug, eval_set.slug)
    # The job describes the scores it was computed on, not those it was asked for.
    values: dict[str, Any] = {"revision": target.eval_set.revision}
    if job.purpose == JobPurpose.FREEZE:
        snapshot = freeze(
            session,
            store,
            settings,
            target,
            actor=job.requested_by,
            now=job.requested_at,
            # The deadline is checked again as the worker runs the job.
            before_deadline=job.before_deadline,
            checked_at=clock(),
            # Committed with the job's row, and only while the job is still this worker's.
            supersede=job.supersede_reason,
        )
        report = snapshot.manifest["analysis"]
        # The job row says how the frozen table was analysed, not the defaults it was queued with.
        used = request_of_report(report)
        values.update(
            report=report,
            method=used.method,
            samples=used.samples,
            seed=used.seed,
            alpha=used.alpha,
            correction=used.correction,
        )
    elif job.purpose == JobPurpose.RESCORE:
        rescored = rescore_set(
            session,
            store,
            settings,
            target,
            actor=job.requested_by,
            reason=f"job {job.id}",
        )
        values["report"] = {
            "rescored": rescored.rescored,
            "failed": {str(run): messages for run, messages in rescored.failed.items()},
        }
        # The job describes the scores it made.
        values["revision"] = target.eval_set.revision
    elif job.purpose == JobPurpose.VERIFY:
        checked = verify_all(session, store, settings, target)
        several = len(checked) > 1
        values["report"] = {
            "checked_runs": sum(found.checked_runs for _, found in checked),
            # With superseded versions, each difference names the version it is in.
            "differences": [
                f"version {version.snapshot.version}: {line}" if several else line
                for version, found in checked
                for line in found.differences
            ],
            "versions": len(checked),
        }
    else:
        # An automatic analysis runs on the scores as they are now, whichever revision it was
        # queued at, unless they need none (a refusal: the caller stores the reason).
        reason = not_needed(session, target, job) if is_automatic(job) else None
        if reason is not None:
            raise Conflict(reason)
        values["report"] = compute(session, store, target, _request_of(job))
        touch(session, target.eval_set.id)
    return values


def release(
    session: Session, job_id: int, *, worker: str, error: str, now: datetime | None = None
) -> JobStatus | None:
    """Give back a job whose run broke unexpectedly: queued again, or failed at the last attempt.

    The caller rolls the broken run's work back first. Returns the job's new state, or None
    when it was no longer this worker's.
    """
    job = session.get(Job, job_id, populate_existing=True)
    if job is None:
        return None
    last = job.attempts >= MAX_ATTEMPTS
    values: dict[str, Any] = (
        {"status": JobStatus.FAILED, "error": error, "finished_at": now or utcnow()}
        if last
        else {"status": JobStatus.QUEUED, "heartbeat_at": None}
    )
    values["worker"] = ""
    given = session.execute(update(Job).where(_owned(job_id, worker)).values(**values))
    if given.rowcount != 1:  # type: ignore[attr-defined]
        return None
    return JobStatus(values["status"])


def sweep(
    session: Session, *, now: datetime | None = None, stale: timedelta = STALE_AFTER
) -> list[int]:
    """Send again the jobs whose worker fell silent and the queued ones whose task seems lost.

    Sending a job twice is harmless (whoever takes it second finds it taken or done). Returns
    the ids sent.
    """
    now = now or utcnow()
    resend = now - stale * RESEND_AFTER_STALE_PERIODS
    lost = or_(
        _stale(now, stale),
        and_(
            Job.status == JobStatus.QUEUED,
            or_(Job.enqueued_at.is_(None), Job.enqueued_at < resend),
        ),
    )
    ids = list(session.scalars(select(Job.id).where(lost).order_by(Job.id)))
    if ids:
        session.execute(update(Job).where(Job.id.in_(ids)).values(enqueued_at=now))
        for job_id in ids:
            enqueue(session, RUN_JOB, job_id)
    return ids
