"""The life of a job row under at-least-once delivery: taken, kept alive, handed on, given up."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.jobqueue import DRAW_CHARTS, RUN_JOB
from leaderboard.models import EvalSet, Job, utcnow
from leaderboard.resources import Resources
from leaderboard.services.common.errors import DomainError
from leaderboard.services.common.revisions import touch
from leaderboard.services.jobs import core as jobs
from leaderboard.services.results.significance import Request
from leaderboard.states import JobStatus
from leaderboard.unit_of_work import opened, unit_of
from leaderboard.worker import runtime
from leaderboard.worker.jobs import Outcome, give_back, run_job, run_taken, take, take_next
from tests.dispatch import LocalDispatcher
from tests.helpers.jobs import job_row, sessions
from tests.helpers.sentiment import queue

STALE = jobs.STALE_AFTER


def _set(app: Flask, job: int, **values: Any) -> None:
    with sessions(app)() as session:
        session.execute(update(Job).where(Job.id == job).values(**values))
        session.commit()


def _analysed(app: Flask, job: int) -> int:
    """Return how many analyses the job's set has stored (each touches its page counter)."""
    with sessions(app)() as session:
        found = session.scalar(
            select(EvalSet.analysed).join(Job, Job.eval_set_id == EvalSet.id).where(Job.id == job)
        )
        assert found is not None
        return found


def _run(app: Flask, session: Session, job: Job) -> Job:
    """Run a taken job as the worker's task does."""
    ext = app.extensions["leaderboard"]
    return run_taken(
        session,
        job,
        sessions=sessions(app),
        store=ext["store"],
        settings=ext["settings"],
        clock=utcnow,
    )


def _touch_then(error: Exception):  # type: ignore[no-untyped-def]
    """Return a computation that does some of its work (the set's counter), then raises."""

    def compute(session: Session, _store: object, target: Any, _request: object) -> None:
        touch(session, target.eval_set.id)
        raise error

    return compute


def test_a_live_workers_job_is_busy_and_a_silent_ones_is_taken_over(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    now = utcnow()
    with sessions(app)() as session:
        first = take(session, job, worker="a:1/x", now=now)
        assert first.taken == jobs.Taken.TAKEN and first.job is not None
        assert first.job.attempts == 1 and first.job.heartbeat_at == now
        # Its worker beats: another delivery finds it busy, even long after it started.
        later = now + STALE * 4
        assert jobs.beat(session, job, worker="a:1/x", now=later - timedelta(seconds=1))
        assert take(session, job, worker="b:2/y", now=later).taken == jobs.Taken.BUSY
        # Silent for three heartbeats: the next delivery takes it over.
        silent = later + STALE
        second = take(session, job, worker="b:2/y", now=silent)
        assert second.taken == jobs.Taken.TAKEN and second.job is not None
        assert second.job.attempts == 2 and second.job.worker == "b:2/y"
        # The first worker's beats no longer count: the job is not its own.
        assert not jobs.beat(session, job, worker="a:1/x", now=silent)


def test_only_the_current_claimant_stores_a_result(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    job = queue(app, Request(samples=100))
    before = _analysed(app, job)
    now = utcnow()
    with sessions(app)() as session:
        stale = take(session, job, worker="a:1/x", now=now - STALE * 2).job
        assert stale is not None
    with sessions(app)() as other:
        taken = take(other, job, worker="b:2/y", now=now).job
        assert taken is not None
    dispatcher.sent.clear()
    # The first worker finishes late: its result is dropped whole, its work too.
    with sessions(app)() as session:
        stale = session.get(Job, job)
        assert stale is not None
        stale.worker = "a:1/x"  # as that worker's own copy of the row says
        session.expunge(stale)
        late = _run(app, session, stale)
        assert late.status == JobStatus.RUNNING and late.worker == "b:2/y"
        unit_of(session).commit()  # nothing of the run is left to commit
    assert _analysed(app, job) == before and dispatcher.sent == []
    with sessions(app)() as session:
        row = session.get(Job, job)
        assert row is not None
        done = _run(app, session, row)
        assert done.status == JobStatus.DONE and done.worker == "b:2/y"
    # Stored with its work, and its charts sent once committed.
    assert _analysed(app, job) == before + 1
    assert dispatcher.sent == [(DRAW_CHARTS, (job,))]


def test_a_refused_job_stores_why_without_its_work(
    app: Flask,
    hosted: FlaskCliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    job = queue(app, Request(samples=100))
    before = _analysed(app, job)
    monkeypatch.setattr(jobs, "compute", _touch_then(DomainError("Not with these runs.")))
    dispatcher.sent.clear()
    with sessions(app)() as session:
        taken = take(session, job, worker="a").job
        assert taken is not None
        done = _run(app, session, taken)
    assert done.status == JobStatus.FAILED and done.error == "Not with these runs."
    row = job_row(app, job)
    assert row.status == JobStatus.FAILED and row.finished_at is not None
    assert _analysed(app, job) == before and dispatcher.sent == []


def test_the_steps_leave_the_commit_to_their_caller(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    with sessions(app)() as session:
        assert jobs.claim(session, job, worker="a").taken == jobs.Taken.TAKEN
        session.rollback()
    assert job_row(app, job).status == JobStatus.QUEUED
    with sessions(app)() as session:
        take(session, job, worker="a")
        assert jobs.release(session, job, worker="a", error="OSError: disk") == JobStatus.QUEUED
        session.rollback()
    row = job_row(app, job)
    assert row.status == JobStatus.RUNNING and row.worker == "a"


def test_a_job_whose_workers_keep_dying_is_given_up(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    now = utcnow()
    with sessions(app)() as session:
        for attempt in range(jobs.MAX_ATTEMPTS):
            at = now + STALE * 2 * attempt
            assert take(session, job, worker=f"w:{attempt}", now=at).taken == jobs.Taken.TAKEN
        gone = take(session, job, worker="last", now=now + STALE * 2 * jobs.MAX_ATTEMPTS)
        assert gone.taken == jobs.Taken.FINISHED
    row = job_row(app, job)
    assert row.status == JobStatus.FAILED and row.attempts == jobs.MAX_ATTEMPTS
    assert f"Given up after {jobs.MAX_ATTEMPTS} attempts" in row.error


def test_taking_the_next_job_commits_each_give_up_even_when_none_is_taken(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    _set(app, job, attempts=jobs.MAX_ATTEMPTS)
    with sessions(app)() as session:
        assert take_next(session, worker="a") is None
        # Seen from another session while this one is still open: committed.
        row = job_row(app, job)
        assert row.status == JobStatus.FAILED and "Given up" in row.error


def test_a_job_that_broke_is_queued_again_then_failed_with_the_reason(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    with sessions(app)() as session:
        take(session, job, worker="a")
        assert give_back(session, job, worker="a", error="OSError: disk") == JobStatus.QUEUED
        assert give_back(session, job, worker="a", error="again") is None  # not its own now
    assert job_row(app, job).status == JobStatus.QUEUED
    _set(app, job, attempts=jobs.MAX_ATTEMPTS - 1)
    with sessions(app)() as session:
        take(session, job, worker="b")
        assert give_back(session, job, worker="b", error="OSError: disk") == JobStatus.FAILED
    row = job_row(app, job)
    assert row.status == JobStatus.FAILED and row.error == "OSError: disk"


def test_the_task_gives_a_broken_job_back_without_its_work(
    app: Flask,
    hosted: FlaskCliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ext = app.extensions["leaderboard"]
    # The task runs here, on the app's own connections.
    fields = ("settings", "engine", "sessionmaker", "store", "clock", "dispatcher")
    res = Resources(**{name: ext[name] for name in fields})
    monkeypatch.setattr(runtime, "_built", (os.getpid(), res))
    job = queue(app, Request(samples=100))
    before = _analysed(app, job)
    monkeypatch.setattr(jobs, "compute", _touch_then(OSError("disk full")))
    assert run_job(job) == Outcome.RELEASED
    row = job_row(app, job)
    assert row.status == JobStatus.QUEUED and row.worker == "" and row.attempts == 1
    assert _analysed(app, job) == before


def test_the_sweep_sends_lost_jobs_again_and_leaves_live_ones(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    now = utcnow()
    # One waiting job per method: a second request of the same kind would return the first.
    fresh, lost, alive, silent = (
        queue(app, Request(method=method, samples=100))
        for method in ("randomization", "bootstrap", "t-test", "wilcoxon")
    )
    _set(app, lost, enqueued_at=now - STALE * (jobs.RESEND_AFTER_STALE_PERIODS + 1))
    _set(app, alive, status=JobStatus.RUNNING, heartbeat_at=now, worker="a")
    _set(app, silent, status=JobStatus.RUNNING, heartbeat_at=now - STALE * 2, worker="b")
    dispatcher.sent.clear()
    with opened(sessions(app)) as unit:
        sent = jobs.sweep(unit.session, now=now)
    assert sent == [lost, silent]
    assert dispatcher.sent == [(RUN_JOB, (lost,)), (RUN_JOB, (silent,))]
    assert fresh not in sent and alive not in sent
    assert job_row(app, lost).enqueued_at == now
