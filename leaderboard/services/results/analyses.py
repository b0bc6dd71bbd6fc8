"""Stored analyses of a set: requested by an organizer, computed by a worker or the CLI.

An analysis belongs to the revision of the set's scores it was computed on; a new run or a
re-score advances the revision, and the stored analysis is then shown as out of date until
one is computed again. Nothing here runs inside a page request: the web action only queues.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, undefer

from leaderboard.config import Settings
from leaderboard.db import get_row
from leaderboard.models import Analysis, EvalSet, FrozenTable, utcnow
from leaderboard.services.campaign.freeze import (
    check_deadline,
    early_details,
    freeze,
    frozen_of,
    frozen_once,
    not_frozen,
    verify,
)
from leaderboard.services.campaign.frozen_analysis import request_of_report
from leaderboard.services.common.audit import record_for
from leaderboard.services.common.errors import DomainError, NotFound
from leaderboard.services.common.revisions import touch
from leaderboard.services.results.significance import (
    Request,
    analyse,
    check_request,
    source_of,
)
from leaderboard.services.tasks.catalog import resolve
from leaderboard.services.tasks.target import Target
from leaderboard.states import JobPurpose, JobStatus
from leaderboard.storage import Store

#: A claimed job still running after this long is taken to have lost its worker.
STALE_AFTER = timedelta(minutes=30)
#: A job not finished yet: a second request for the same work returns it.
_WAITING = (JobStatus.QUEUED, JobStatus.RUNNING)


@dataclass(frozen=True)
class Status:
    """What a set's page says about its analysis: the latest one and whether it is current."""

    analysis: Analysis | None
    current: bool
    pending: bool


def worker_name() -> str:
    """Return this process's name in the jobs it claims (host and pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


def request_analysis(
    session: Session, target: Target, request: Request, *, actor: str, now: datetime | None = None
) -> Analysis:
    """Queue an analysis of the set's current scores (or return the one already queued)."""
    check_request(request)
    now = now or utcnow()
    revision = target.eval_set.revision
    waiting = session.scalar(
        select(Analysis).where(
            Analysis.eval_set_id == target.eval_set.id,
            Analysis.revision == revision,
            Analysis.purpose == JobPurpose.TABLE,
            Analysis.status.in_(_WAITING),
            Analysis.measure == (request.measure or ""),
            Analysis.method == request.method,
        )
    )
    if waiting is not None:
        return waiting
    analysis = _row(target, request, actor=actor, now=now, status=JobStatus.QUEUED)
    session.add(analysis)
    record_for(session, actor, "request-analysis", target, method=request.method, at=now)
    session.commit()
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
) -> Analysis:
    """Queue the freeze or the verification of a set's official table (or return the queued one).

    A freeze analyses the official table first, which is never done inside a page request;
    verifying re-scores every frozen run and recomputes that analysis. A freeze while a
    deadline of the set is ahead is refused at once unless ``before_deadline`` confirms it;
    the job carries that confirmation to the worker, which checks the deadline again.
    """
    now = now or utcnow()
    frozen = frozen_of(session, target)
    if purpose == JobPurpose.FREEZE and frozen is not None:
        raise frozen_once(target, frozen)
    early = None
    if purpose == JobPurpose.FREEZE:
        early = check_deadline(session, target, now, before_deadline=before_deadline, zone=zone)
    if purpose == JobPurpose.VERIFY and frozen is None:
        raise not_frozen(target)
    waiting = session.scalar(
        select(Analysis).where(
            Analysis.eval_set_id == target.eval_set.id,
            Analysis.purpose == purpose,
            Analysis.status.in_(_WAITING),
        )
    )
    if waiting is not None:
        return waiting
    job = _row(target, Request(), actor=actor, now=now, status=JobStatus.QUEUED)
    job.purpose = purpose
    job.before_deadline = early is not None
    session.add(job)
    record_for(session, actor, f"request-{purpose}", target, at=now, **early_details(early))
    session.commit()
    return job


def latest_job(session: Session, target: Target, purpose: JobPurpose) -> Analysis | None:
    """Return the set's latest freeze or verification job, with its report."""
    return session.scalar(
        select(Analysis)
        .where(Analysis.eval_set_id == target.eval_set.id, Analysis.purpose == purpose)
        .order_by(Analysis.id.desc())
        .limit(1)
        .options(undefer(Analysis.report))
    )


def _row(
    target: Target, request: Request, *, actor: str, now: datetime, status: JobStatus
) -> Analysis:
    return Analysis(
        eval_set_id=target.eval_set.id,
        revision=target.eval_set.revision,
        measure=request.measure or "",
        method=request.method,
        samples=request.samples,
        seed=request.seed,
        alpha=request.alpha,
        correction=request.correction,
        runs=request.runs,
        status=status,
        requested_by=actor,
        requested_at=now,
    )


def _request_of(analysis: Analysis) -> Request:
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
) -> Analysis:
    """Compute an analysis in this process (the CLI) and store it; raise on a refusal."""
    now = now or utcnow()
    report = compute(session, store, target, request)
    analysis = _row(target, request, actor=actor, now=now, status=JobStatus.DONE)
    analysis.report = report
    analysis.started_at = now
    analysis.finished_at = utcnow()
    analysis.worker = worker_name()
    session.add(analysis)
    touch(session, target.eval_set.id)
    record_for(session, actor, "compute-analysis", target, method=request.method, at=now)
    session.commit()
    return analysis


def claim_next(session: Session, *, worker: str, now: datetime | None = None) -> Analysis | None:
    """Claim the oldest queued analysis for this worker; requeue ones whose worker was lost."""
    now = now or utcnow()
    session.execute(
        update(Analysis)
        .where(Analysis.status == JobStatus.RUNNING, Analysis.started_at < now - STALE_AFTER)
        .values(status=JobStatus.QUEUED, worker="")
    )
    session.commit()
    while True:
        candidate = session.scalar(
            select(Analysis.id)
            .where(Analysis.status == JobStatus.QUEUED)
            .order_by(Analysis.id)
            .limit(1)
        )
        if candidate is None:
            return None
        # The conditional update is the claim: of two workers racing, one changes the row.
        claimed = session.execute(
            update(Analysis)
            .where(Analysis.id == candidate, Analysis.status == JobStatus.QUEUED)
            .values(status=JobStatus.RUNNING, started_at=now, worker=worker)
        )
        session.commit()
        if claimed.rowcount == 1:  # type: ignore[attr-defined]
            return session.get(Analysis, candidate)


def run_claimed(
    session: Session,
    store: Store,
    settings: Settings,
    analysis: Analysis,
    *,
    clock: Callable[[], datetime] = utcnow,
) -> Analysis:
    """Run a claimed job on the set as it is now; store its report or why it failed.

    An analysis stores its report; a freeze freezes the official table (as of the request)
    and stores the analysis frozen with it; a verification stores what it found.
    """
    eval_set = session.get(EvalSet, analysis.eval_set_id)
    try:
        if eval_set is None:
            raise NotFound("The set of this analysis no longer exists.")
        subtask = eval_set.subtask
        target = resolve(session, subtask.task.slug, subtask.slug, eval_set.slug)
        # The job describes the scores it was computed on, not those it was asked for.
        analysis.revision = target.eval_set.revision
        if analysis.purpose == JobPurpose.FREEZE:
            snapshot = freeze(
                session,
                store,
                settings,
                target,
                actor=analysis.requested_by,
                now=analysis.requested_at,
                # The deadline is checked again as the worker runs the job.
                before_deadline=analysis.before_deadline,
                checked_at=clock(),
            )
            analysis.report = snapshot.manifest["analysis"]
            # The job row says how the frozen table was analysed, not the defaults it was queued with.
            used = request_of_report(analysis.report)
            analysis.method, analysis.samples, analysis.seed = used.method, used.samples, used.seed
            analysis.alpha, analysis.correction = used.alpha, used.correction
        elif analysis.purpose == JobPurpose.VERIFY:
            found = verify(session, store, settings, target)
            analysis.report = {"checked_runs": found.checked_runs, "differences": found.differences}
        else:
            analysis.report = compute(session, store, target, _request_of(analysis))
            touch(session, target.eval_set.id)
        analysis.status = JobStatus.DONE
    except DomainError as exc:
        session.rollback()
        analysis.status = JobStatus.FAILED
        analysis.error = exc.message
    analysis.finished_at = clock()
    session.commit()
    return analysis


def status(session: Session, target: Target) -> Status:
    """Return the set's latest finished analysis and whether it matches the current scores."""
    latest = session.scalar(
        select(Analysis)
        .where(
            Analysis.eval_set_id == target.eval_set.id,
            Analysis.purpose == JobPurpose.TABLE,
            Analysis.status == JobStatus.DONE,
        )
        .order_by(Analysis.id.desc())
        .limit(1)
        .options(undefer(Analysis.report))
    )
    pending = (
        session.scalar(
            select(Analysis.id)
            .where(
                Analysis.eval_set_id == target.eval_set.id,
                Analysis.purpose == JobPurpose.TABLE,
                Analysis.status.in_(_WAITING),
            )
            .limit(1)
        )
        is not None
    )
    current = latest is not None and latest.revision == target.eval_set.revision
    return Status(latest, current, pending)


def shown_report(
    session: Session, target: Target, view: str, snapshot: FrozenTable | None
) -> dict[str, Any] | None:
    """Return the analysis a results view shows: the frozen one, or the current live one.

    ``snapshot`` is the set's frozen table, if any. None when the view has none (not frozen
    with one, or no analysis of the current scores).
    """
    if view == "official":
        frozen = snapshot.manifest.get("analysis") if snapshot is not None else None
        return frozen if frozen is not None and "unavailable" not in frozen else None
    state = status(session, target)
    if not state.current or state.analysis is None:
        return None
    return state.analysis.report


def finished_analysis(session: Session, analysis_id: int) -> tuple[Analysis, dict[str, Any]]:
    """Return a finished analysis by id, current or not, with its report, or raise NotFound."""
    analysis = get_row(session, Analysis, analysis_id)
    if analysis is None or analysis.status != JobStatus.DONE or analysis.report is None:
        raise NotFound(f"No finished analysis {analysis_id}.")
    return analysis, analysis.report
