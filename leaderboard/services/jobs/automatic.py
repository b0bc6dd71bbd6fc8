"""The analysis the worker makes by itself: one per revision of a visible set's scores.

Whenever a set's scores change while its results are visible, its public table, exports and
freeze should carry clusters and rank intervals without an organizer asking (a phase's
``--analysis off`` opts out). Uploads only advance the set's revision (nothing is queued inside
a request); every few seconds the worker looks for the visible sets whose current revision has
no analysis the table would use, done or coming, and queues a normal analysis job with the
defaults (official measure, ranked runs) for each. A waiting automatic job stands for every
later revision too: it analyses the scores as they are when it starts, so a burst of uploads
makes one analysis, of the revision current then, and another only if the scores move on.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import Session

from leaderboard.models import EvalSet, Job, Phase, Run, Subtask, Task
from leaderboard.services.campaign.phases import analysed_automatically, hidden_phase, phases_of
from leaderboard.services.jobs.analyses import job_row, send_once_committed
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import BoardKind, JobPurpose, JobStatus, RunStatus
from leaderboard.tables.model import official_key
from leaderboard.targets import Target

#: Who the automatic analyses are requested by (as the scheduled release's audit events say).
AUTOMATIC = "system"
#: An analysis needs two runs to compare; a set with fewer is not looked at.
MIN_RUNS = 2

_WAITING = (JobStatus.QUEUED, JobStatus.RUNNING)


def due_sets(session: Session) -> list[tuple[int, int]]:
    """Return (set id, revision) of the visible sets whose current scores want an analysis.

    Left out: sets of hidden tasks; sets a phase hides or has the analysis turned off on; sets a
    phase shows as a best or Ladder board (their board carries no analysis, and the public
    chart of one would show the runs' own scores); sets with fewer than two active runs; sets
    with an automatic analysis waiting; and sets whose current revision has one with the
    default measure (done, coming, or an automatic one that failed: it is not tried again
    before the scores change). One query.
    """
    of_set = and_(Job.eval_set_id == EvalSet.id, Job.purpose == JobPurpose.TABLE)
    waiting = exists().where(of_set, Job.requested_by == AUTOMATIC, Job.status.in_(_WAITING))
    covered = exists().where(
        of_set,
        Job.revision == EvalSet.revision,
        Job.runs == "ranked",
        Job.measure == "",
        or_(Job.status != JobStatus.FAILED, Job.requested_by == AUTOMATIC),
    )
    held_back = exists().where(
        Phase.eval_set_id == EvalSet.id,
        or_(
            Phase.results_hidden.is_(True),
            Phase.auto_analysis.is_(False),
            Phase.board != BoardKind.SLOTS,
        ),
    )
    runs = (
        select(func.count(Run.id))
        .where(Run.eval_set_id == EvalSet.id, Run.status == RunStatus.ACTIVE)
        .scalar_subquery()
    )
    rows = session.execute(
        select(EvalSet.id, EvalSet.revision)
        .join(Subtask, Subtask.id == EvalSet.subtask_id)
        .join(Task, Task.id == Subtask.task_id)
        .where(Task.hidden.is_(False), ~held_back, ~waiting, ~covered, runs >= MIN_RUNS)
        .order_by(EvalSet.id)
    ).all()
    return [(int(set_id), int(revision)) for set_id, revision in rows]


def covered(session: Session, target: Target, *, besides: int | None = None) -> bool:
    """Return whether the set's current scores have an analysis the table uses, done or coming.

    That is a job of the current revision over the ranked runs on the official measure (named
    or left to the default), done or waiting, or an automatic one that failed; ``besides``
    leaves one job out (the automatic one asking).
    """
    official = official_key(target.family.measure_specs(target.context()))
    found = session.scalar(
        select(Job.id)
        .where(
            Job.eval_set_id == target.eval_set.id,
            Job.purpose == JobPurpose.TABLE,
            Job.revision == target.eval_set.revision,
            Job.runs == "ranked",
            Job.measure.in_(("", official)),
            Job.id != (besides or 0),
            or_(Job.status != JobStatus.FAILED, Job.requested_by == AUTOMATIC),
        )
        .limit(1)
    )
    return found is not None


def queue_due(session: Session, now: datetime) -> list[Job]:
    """Queue the automatic analysis of every due set; each job is sent once committed."""
    queued = []
    for set_id, _revision in due_sets(session):
        eval_set = session.get(EvalSet, set_id)
        if eval_set is None:
            continue
        subtask = eval_set.subtask
        target = resolve(session, subtask.task.slug, subtask.slug, eval_set.slug)
        # An organizer's analysis naming the official measure covers the revision too.
        if covered(session, target):
            continue
        job = job_row(target, Request(), actor=AUTOMATIC, now=now, status=JobStatus.QUEUED)
        session.add(job)
        send_once_committed(session, job, now)
        queued.append(job)
    return queued


def is_automatic(job: Job) -> bool:
    """Return whether a job is an automatic analysis (nobody asked for it)."""
    return job.purpose == JobPurpose.TABLE and job.requested_by == AUTOMATIC


def not_needed(session: Session, target: Target, job: Job) -> str | None:
    """Return why an automatic analysis about to run is not needed now, or None if it is.

    It was queued a moment ago; since then the results may have been hidden, the analysis
    turned off, or the current scores analysed by another job.
    """
    if target.task.hidden or hidden_phase(session, target.eval_set) is not None:
        return "Not needed: the set's results are hidden now."
    if not analysed_automatically(session, target.eval_set):
        return "Not needed: a phase of the set has the automatic analysis turned off."
    boards = {
        p.board for p in phases_of(session, target.subtask) if p.eval_set_id == target.eval_set.id
    }
    if boards - {BoardKind.SLOTS}:
        return "Not needed: the set's board is not the classic one of ranked slots."
    if covered(session, target, besides=job.id):
        return (
            f"Not needed: revision {target.eval_set.revision} of the set's scores has an "
            "analysis already."
        )
    return None
