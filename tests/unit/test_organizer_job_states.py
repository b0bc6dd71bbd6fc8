"""The organizer subtask page's presenter: each job state the page words differently."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.models import Job
from leaderboard.states import JobPurpose, JobStatus
from leaderboard.web.organizer.job_states import set_jobs

FREEZE, VERIFY, RESCORE = JobPurpose.FREEZE, JobPurpose.VERIFY, JobPurpose.RESCORE
PENDING = [JobStatus.QUEUED, JobStatus.RUNNING]


def job(status: JobStatus, **values: Any) -> Job:
    """Return a job row (never stored) in a state."""
    return Job(status=status, **values)


def actions(jobs: dict[JobPurpose, Job | None], frozen: bool) -> list[str]:
    return [a.name for a in set_jobs(jobs, frozen=frozen).actions]


def test_an_unfrozen_set_offers_a_freeze_but_no_verification() -> None:
    shown = set_jobs({}, frozen=False)
    assert [(a.name, a.endpoint) for a in shown.actions] == [
        ("baselines", "organizer.baselines"),
        ("rescore", "organizer.rescore"),
        ("freeze", "organizer.freeze_set"),
    ]
    assert (shown.freeze, shown.rescore, shown.verify) == (None, None, None)
    assert not shown.freeze_pending


def test_a_frozen_set_offers_a_verification_but_no_freeze() -> None:
    assert actions({}, frozen=True) == ["baselines", "rescore", "verify"]


@pytest.mark.parametrize("status", PENDING)
def test_a_waiting_freeze_is_pending_and_not_offered_again(status: JobStatus) -> None:
    shown = set_jobs({FREEZE: job(status)}, frozen=False)
    assert shown.freeze_pending
    assert shown.freeze is not None and shown.freeze.state == "pending"
    assert "freeze" not in [a.name for a in shown.actions]


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.DONE])
def test_a_freeze_that_left_no_frozen_table_failed(status: JobStatus) -> None:
    shown = set_jobs({FREEZE: job(status)}, frozen=False)
    assert shown.freeze is not None and shown.freeze.state == "failed"
    assert not shown.freeze_pending
    assert "freeze" in [a.name for a in shown.actions]


def test_the_freeze_of_a_frozen_set_is_not_mentioned() -> None:
    assert set_jobs({FREEZE: job(JobStatus.DONE)}, frozen=True).freeze is None


@pytest.mark.parametrize(
    ("status", "state"),
    [(JobStatus.QUEUED, "pending"), (JobStatus.RUNNING, "pending"), (JobStatus.FAILED, "failed")],
)
def test_a_supersede_not_done_is_mentioned(status: JobStatus, state: str) -> None:
    shown = set_jobs({FREEZE: job(status, supersede_reason="new gold")}, frozen=True)
    assert shown.freeze is not None and shown.freeze.state == state
    assert shown.freeze_pending == (state == "pending")


def test_a_supersede_done_is_not_mentioned() -> None:
    done = job(JobStatus.DONE, supersede_reason="new gold")
    assert set_jobs({FREEZE: done}, frozen=True).freeze is None


@pytest.mark.parametrize(
    ("status", "state"),
    [(JobStatus.QUEUED, "pending"), (JobStatus.RUNNING, "pending"), (JobStatus.FAILED, "failed")],
)
def test_a_rescore_not_done_has_no_count(status: JobStatus, state: str) -> None:
    shown = set_jobs({RESCORE: job(status)}, frozen=False)
    assert shown.rescore is not None and shown.rescore.state == state
    assert shown.rescored is None


def test_a_rescore_done_counts_its_runs() -> None:
    done = job(JobStatus.DONE, report={"rescored": 3, "failed": {}})
    shown = set_jobs({RESCORE: done}, frozen=False)
    assert shown.rescore is not None and shown.rescore.state == "done"
    assert shown.rescored is not None
    assert (shown.rescored.count, shown.rescored.failures) == (3, [])


def test_a_rescore_done_names_each_run_it_could_not_score() -> None:
    report = {"rescored": 1, "failed": {"5": ["line 2: bad", "line 3: worse"], "9": ["gone"]}}
    shown = set_jobs({RESCORE: job(JobStatus.DONE, report=report)}, frozen=True)
    assert shown.rescored is not None
    assert shown.rescored.failures == ["run 5: line 2: bad line 3: worse", "run 9: gone"]


def test_a_verification_of_an_unfrozen_set_is_not_mentioned() -> None:
    shown = set_jobs({VERIFY: job(JobStatus.DONE, report={"differences": []})}, frozen=False)
    assert (shown.verify, shown.verified, shown.verify_class) == (None, None, "")


@pytest.mark.parametrize(
    ("status", "state", "css"),
    [
        (JobStatus.QUEUED, "pending", "pending"),
        (JobStatus.RUNNING, "pending", "pending"),
        (JobStatus.FAILED, "failed", "failed"),
    ],
)
def test_a_verification_not_done(status: JobStatus, state: str, css: str) -> None:
    shown = set_jobs({VERIFY: job(status)}, frozen=True)
    assert shown.verify is not None and shown.verify.state == state
    assert shown.verify_class == css
    assert shown.verified is None


@pytest.mark.parametrize(("versions", "shown_versions"), [(None, None), (1, None), (3, 3)])
def test_a_verification_that_matched(versions: int | None, shown_versions: int | None) -> None:
    report = {"checked_runs": 5, "differences": [], "versions": versions}
    shown = set_jobs({VERIFY: job(JobStatus.DONE, report=report)}, frozen=True)
    assert shown.verify is not None and shown.verify.state == "done"
    assert shown.verify_class == "ok"
    assert shown.verified is not None
    assert (shown.verified.checked_runs, shown.verified.versions) == (5, shown_versions)


def test_a_verification_that_differed_lists_the_differences() -> None:
    report = {"checked_runs": 5, "differences": ["row 1 differs", "hash differs"]}
    shown = set_jobs({VERIFY: job(JobStatus.DONE, report=report)}, frozen=True)
    assert shown.verify is not None and shown.verify.state == "differs"
    assert shown.verify_class == "failed"
    assert shown.verified is not None
    assert shown.verified.differences == ["row 1 differs", "hash differs"]
