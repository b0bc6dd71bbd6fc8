"""Stored analyses of a set: requested by an organizer, computed by a worker or the CLI.

An analysis belongs to the revision of the set's scores it was computed on; a new run or a
re-score advances the revision, and the stored analysis is then shown as out of date until
one is computed again. Nothing here runs inside a page request: the web action only queues.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from leaderboard.db import get_row
from leaderboard.jobqueue import RUN_JOB, enqueue
from leaderboard.models import FrozenTable, Job, utcnow
from leaderboard.services.common.audit import record_for
from leaderboard.services.common.errors import NotFound
from leaderboard.services.common.revisions import touch
from leaderboard.services.freeze.core import (
    check_deadline,
    check_supersede,
    early_details,
    frozen_of,
    not_frozen,
)
from leaderboard.services.results.boards import board_of
from leaderboard.services.results.report_scale import in_table_scale, scales_of
from leaderboard.services.results.significance import (
    Request,
    analyse,
    check_request,
    source_of,
    testing_settings,
)
from leaderboard.states import BoardKind, JobPurpose, JobStatus
from leaderboard.storage import Store
from leaderboard.targets import Target

#: A job not finished yet: a second request for the same work returns it.
_WAITING = (JobStatus.QUEUED, JobStatus.RUNNING)


@dataclass(frozen=True)
class Status:
    """What a set's page says about its analysis: the latest one and whether it is current."""

    analysis: Job | None
    current: bool
    pending: bool
    #: The newest job after the shown analysis: queued, running, or failed (with its reason).
    job: Job | None = None


def worker_name() -> str:
    """Return this process's name in the jobs it claims (host and pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


def request_analysis(
    session: Session, target: Target, request: Request, *, actor: str, now: datetime | None = None
) -> Job:
    """Queue an analysis of the set's current scores (or return the one already queued)."""
    check_request(request)
    now = now or utcnow()
    revision = target.eval_set.revision
    waiting = session.scalar(
        select(Job).where(
            Job.eval_set_id == target.eval_set.id,
            Job.revision == revision,
            Job.purpose == JobPurpose.TABLE,
            Job.status.in_(_WAITING),
            Job.measure == (request.measure or ""),
            Job.method == request.method,
        )
    )
    if waiting is not None:
        return waiting
    analysis = job_row(target, request, actor=actor, now=now, status=JobStatus.QUEUED)
    session.add(analysis)
    record_for(session, actor, "request-analysis", target, method=request.method, at=now)
    send_once_committed(session, analysis, now)
    return analysis


def request_job(
    session: Session,
    target: Target,
    purpose: JobPurpose,
    *,
    actor: str,
    now: datetime | None = None,
    before_deadline: bool = False,
    zone: str = "UTC",
    supersede: str | None = None,
) -> Job:
    """Queue the freeze, the verification or the re-score of a set (or return the queued one).

    A freeze analyses the official table first, which is never done inside a page request;
    verifying re-scores every frozen run and recomputes that analysis. A freeze while a
    deadline of the set is ahead is refused at once unless ``before_deadline`` confirms it;
    the job carries that confirmation to the worker, which checks the deadline again. A freeze
    of a set already frozen must ``supersede`` it (the reason), carried to the worker likewise.
    """
    now = now or utcnow()
    frozen = frozen_of(session, target) if purpose != JobPurpose.RESCORE else None
    early = reason = None
    if purpose == JobPurpose.FREEZE:
        reason = check_supersede(target, frozen, supersede)
        early = check_deadline(session, target, now, before_deadline=before_deadline, zone=zone)
    if purpose == JobPurpose.VERIFY and frozen is None:
        raise not_frozen(target)
    # A re-score already running may have read the gold before a change: a new one is queued.
    waiting_states = (JobStatus.QUEUED,) if purpose == JobPurpose.RESCORE else _WAITING
    waiting = session.scalar(
        select(Job).where(
            Job.eval_set_id == target.eval_set.id,
            Job.purpose == purpose,
            Job.status.in_(waiting_states),
        )
    )
    if waiting is not None:
        return waiting
    job = job_row(target, Request(), actor=actor, now=now, status=JobStatus.QUEUED)
    job.purpose = purpose
    job.before_deadline = early is not None
    job.supersede_reason = reason
    session.add(job)
    details = early_details(early) | ({"supersede": reason} if reason is not None else {})
    record_for(session, actor, f"request-{purpose}", target, at=now, **details)
    send_once_committed(session, job, now)
    return job


def send_once_committed(session: Session, job: Job, now: datetime) -> None:
    """Have the job's task sent to the workers when (and only if) its row is committed."""
    session.flush()
    job.enqueued_at = now
    enqueue(session, RUN_JOB, job.id)


def latest_job(session: Session, target: Target, purpose: JobPurpose) -> Job | None:
    """Return the set's latest job of one purpose (freeze, verification, re-score), with its report."""
    return session.scalar(
        select(Job)
        .where(Job.eval_set_id == target.eval_set.id, Job.purpose == purpose)
        .order_by(Job.id.desc())
        .limit(1)
        .options(undefer(Job.report))
    )


def job_row(
    target: Target, request: Request, *, actor: str, now: datetime, status: JobStatus
) -> Job:
    """Return a new analysis job of the set's current revision, as ``request`` asks it."""
    return Job(
        eval_set_id=target.eval_set.id,
        revision=target.eval_set.revision,
        measure=request.measure or "",
        **testing_settings(request),
        runs=request.runs,
        status=status,
        requested_by=actor,
        requested_at=now,
    )


def _request_of(analysis: Job) -> Request:
    return Request(
        analysis.measure or None,
        analysis.method,
        analysis.samples,
        analysis.seed,
        analysis.alpha,
        analysis.correction,
        analysis.runs,
    )


def compute(session: Session, store: Store, target: Target, request: Request) -> dict[str, Any]:
    """Return the report of a request on the set's scores now, with every run's intervals."""
    report = analyse(target, source_of(session, store, target), request)
    report["revision"] = target.eval_set.revision
    return report


def compute_now(
    session: Session,
    store: Store,
    target: Target,
    request: Request,
    *,
    actor: str,
    now: datetime | None = None,
) -> Job:
    """Compute an analysis in this process (the CLI) and store it; raise on a refusal."""
    now = now or utcnow()
    report = compute(session, store, target, request)
    analysis = job_row(target, request, actor=actor, now=now, status=JobStatus.DONE)
    analysis.report = report
    analysis.started_at = now
    analysis.finished_at = utcnow()
    analysis.worker = worker_name()
    session.add(analysis)
    touch(session, target.eval_set.id)
    record_for(session, actor, "compute-analysis", target, method=request.method, at=now)
    return analysis


def status(session: Session, target: Target) -> Status:
    """Return the set's latest finished analysis, whether it is current, and the job after it."""
    latest = session.scalar(
        select(Job)
        .where(
            Job.eval_set_id == target.eval_set.id,
            Job.purpose == JobPurpose.TABLE,
            Job.status == JobStatus.DONE,
        )
        .order_by(Job.id.desc())
        .limit(1)
        .options(undefer(Job.report))
    )
    # The newest job asked after it: waiting (queued, running) or failed.
    job = session.scalar(
        select(Job)
        .where(
            Job.eval_set_id == target.eval_set.id,
            Job.purpose == JobPurpose.TABLE,
            Job.status != JobStatus.DONE,
            Job.id > (latest.id if latest is not None else 0),
        )
        .order_by(Job.id.desc())
        .limit(1)
    )
    current = latest is not None and latest.revision == target.eval_set.revision
    pending = job is not None and job.status in _WAITING
    return Status(latest, current, pending, job)


def shown_report(
    session: Session, target: Target, view: str, snapshot: FrozenTable | None
) -> dict[str, Any] | None:
    """Return the analysis a results view shows: the frozen one, or the current live one.

    ``snapshot`` is the set's frozen table, if any. None when the view has none (not frozen
    with one, or no analysis of the current scores).
    """
    if view == "official":
        frozen = snapshot.manifest.get("analysis") if snapshot is not None else None
        if frozen is None or "unavailable" in frozen:
            return None
        return in_table_scale(frozen, scales_of(target))
    if board_of(session, target).kind != BoardKind.SLOTS:
        # A best or Ladder board shows one released value per team: an analysis of the ranked
        # slots would chart every run's own scores, which such a board keeps from the public.
        return None
    state = status(session, target)
    if not state.current or state.analysis is None or state.analysis.report is None:
        return None
    return in_table_scale(state.analysis.report, scales_of(target))


def finished_analysis(session: Session, analysis_id: int) -> tuple[Job, dict[str, Any]]:
    """Return a finished analysis by id, current or not, with its report, or raise NotFound."""
    analysis = get_row(session, Job, analysis_id)
    if analysis is None or analysis.status != JobStatus.DONE or analysis.report is None:
        raise NotFound(f"No finished analysis {analysis_id}.")
    return analysis, analysis.report
