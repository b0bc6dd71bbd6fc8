"""What the organizer's subtask page says of a set's freeze, verification and re-score jobs.

The page prints these values; which sentence a job gets, and which buttons a set offers, is
decided here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from leaderboard.models import Job
from leaderboard.states import JobPurpose, JobStatus

#: Which sentence a job gets: waiting or running, failed, done, or done but the check differed.
State = Literal["pending", "failed", "done", "differs"]

PENDING = (JobStatus.QUEUED, JobStatus.RUNNING)
#: The class of the verification's box, by its state.
VERIFY_CLASSES: dict[State, str] = {
    "pending": "pending",
    "failed": "failed",
    "done": "ok",
    "differs": "failed",
}


@dataclass(frozen=True)
class Action:
    """A campaign button of a set: the form's action value, its label and its endpoint."""

    name: str
    label: str
    endpoint: str


#: The campaign actions of a set, in page order.
ACTIONS = (
    Action("baselines", "Generate baselines", "organizer.baselines"),
    Action("rescore", "Re-score all runs", "organizer.rescore"),
    Action("freeze", "Freeze official ranking", "organizer.freeze_set"),
    Action("verify", "Verify frozen ranking", "organizer.verify_set"),
)


@dataclass(frozen=True)
class JobNote:
    """One job as the page words it: its row (id, times, error) and which sentence it gets."""

    job: Job
    state: State


@dataclass(frozen=True)
class SetJobs:
    """Everything the page shows of one set's jobs, and the actions it offers."""

    freeze_pending: bool
    actions: list[Action]
    freeze: JobNote | None
    rescore: JobNote | None
    rescored: Rescored | None
    verify: JobNote | None
    verified: Verified | None

    @property
    def verify_class(self) -> str:
        """Return the class of the verification's box (ok, failed or pending)."""
        return VERIFY_CLASSES[self.verify.state] if self.verify is not None else ""


@dataclass(frozen=True)
class Rescored:
    """A finished re-score: how many runs it scored again, and each it could not ("run 5: ...")."""

    count: int
    failures: list[str]


@dataclass(frozen=True)
class Verified:
    """A finished verification: the rows checked, the versions (when several), the differences."""

    checked_runs: int
    versions: int | None
    differences: list[str]


def _state(job: Job) -> State:
    if job.status in PENDING:
        return "pending"
    return "failed" if job.status == JobStatus.FAILED else "done"


def _rescored(job: Job) -> Rescored:
    report = job.report or {}
    failed: Mapping[str, list[str]] = report.get("failed") or {}
    return Rescored(
        count=report.get("rescored", 0),
        failures=[f"run {run}: {' '.join(messages)}" for run, messages in failed.items()],
    )


def _verified(job: Job) -> Verified:
    report = job.report or {}
    versions = report.get("versions")
    return Verified(
        checked_runs=report.get("checked_runs", 0),
        versions=versions if versions and versions > 1 else None,
        differences=list(report.get("differences") or []),
    )


def set_jobs(jobs: Mapping[JobPurpose, Job | None], frozen: bool) -> SetJobs:
    """Return what the page shows of a set's latest freeze, verification and re-score."""
    freezing = jobs.get(JobPurpose.FREEZE)
    checking = jobs.get(JobPurpose.VERIFY)
    rescoring = jobs.get(JobPurpose.RESCORE)
    freeze_pending = freezing is not None and freezing.status in PENDING
    # A freeze is offered until the set is frozen (then superseded instead) and none is waiting;
    # a verification only of a frozen set.
    hidden = {"freeze"} if frozen or freeze_pending else set()
    if not frozen:
        hidden.add("verify")
    freeze = None
    if freezing is not None and (
        not frozen or (freezing.supersede_reason and freezing.status != JobStatus.DONE)
    ):
        # A freeze that is not waiting and left no frozen table failed, whatever its row says.
        freeze = JobNote(freezing, "pending" if freeze_pending else "failed")
    rescore = rescored = None
    if rescoring is not None:
        rescore = JobNote(rescoring, _state(rescoring))
        rescored = _rescored(rescoring) if rescore.state == "done" else None
    verify = verified = None
    if checking is not None and frozen:
        state = _state(checking)
        if state == "done":
            verified = _verified(checking)
            state = "differs" if verified.differences else "done"
        verify = JobNote(checking, state)
    return SetJobs(
        freeze_pending=freeze_pending,
        actions=[a for a in ACTIONS if a.name not in hidden],
        freeze=freeze,
        rescore=rescore,
        rescored=rescored,
        verify=verify,
        verified=verified,
    )
