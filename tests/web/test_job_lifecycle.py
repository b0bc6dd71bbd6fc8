"""The life of a job row under at-least-once delivery: taken, kept alive, handed on, given up."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import update

from leaderboard.jobqueue import RUN_JOB
from leaderboard.models import Job, utcnow
from leaderboard.services.jobs import core as jobs
from leaderboard.services.results.significance import Request
from leaderboard.states import JobStatus
from leaderboard.unit_of_work import opened
from tests.dispatch import LocalDispatcher
from tests.helpers.jobs import job_row, sessions
from tests.helpers.sentiment import queue

STALE = jobs.STALE_AFTER


def _set(app: Flask, job: int, **values: Any) -> None:
    with sessions(app)() as session:
        session.execute(update(Job).where(Job.id == job).values(**values))
        session.commit()


def test_a_live_workers_job_is_busy_and_a_silent_ones_is_taken_over(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    now = utcnow()
    with sessions(app)() as session:
        first = jobs.claim(session, job, worker="a:1/x", now=now)
        assert first.taken == jobs.Taken.TAKEN and first.job is not None
        assert first.job.attempts == 1 and first.job.heartbeat_at == now
        # Its worker beats: another delivery finds it busy, even long after it started.
        later = now + STALE * 4
        assert jobs.beat(session, job, worker="a:1/x", now=later - timedelta(seconds=1))
        assert jobs.claim(session, job, worker="b:2/y", now=later).taken == jobs.Taken.BUSY
        # Silent for three heartbeats: the next delivery takes it over.
        silent = later + STALE
        second = jobs.claim(session, job, worker="b:2/y", now=silent)
        assert second.taken == jobs.Taken.TAKEN and second.job is not None
        assert second.job.attempts == 2 and second.job.worker == "b:2/y"
        # The first worker's beats no longer count: the job is not its own.
        assert not jobs.beat(session, job, worker="a:1/x", now=silent)


def test_only_the_current_claimant_stores_a_result(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    ext = app.extensions["leaderboard"]
    job = queue(app, Request(samples=100))
    now = utcnow()
    with sessions(app)() as session:
        stale = jobs.claim(session, job, worker="a:1/x", now=now - STALE * 2).job
        assert stale is not None
    with sessions(app)() as other:
        taken = jobs.claim(other, job, worker="b:2/y", now=now).job
        assert taken is not None
    # The first worker finishes late: its result is dropped whole.
    with sessions(app)() as session:
        stale = session.get(Job, job)
        assert stale is not None
        stale.worker = "a:1/x"  # as that worker's own copy of the row says
        session.expunge(stale)
        late = jobs.run_claimed(session, ext["store"], ext["settings"], stale)
        assert late.status == JobStatus.RUNNING and late.worker == "b:2/y"
    with sessions(app)() as session:
        row = session.get(Job, job)
        assert row is not None
        done = jobs.run_claimed(session, ext["store"], ext["settings"], row)
        assert done.status == JobStatus.DONE and done.worker == "b:2/y"


def test_a_job_whose_workers_keep_dying_is_given_up(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    now = utcnow()
    with sessions(app)() as session:
        for attempt in range(jobs.MAX_ATTEMPTS):
            at = now + STALE * 2 * attempt
            assert jobs.claim(session, job, worker=f"w:{attempt}", now=at).taken == jobs.Taken.TAKEN
        gone = jobs.claim(session, job, worker="last", now=now + STALE * 2 * jobs.MAX_ATTEMPTS)
        assert gone.taken == jobs.Taken.FINISHED
    row = job_row(app, job)
    assert row.status == JobStatus.FAILED and row.attempts == jobs.MAX_ATTEMPTS
    assert f"Given up after {jobs.MAX_ATTEMPTS} attempts" in row.error


def test_a_job_that_broke_is_queued_again_then_failed_with_the_reason(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=100))
    with sessions(app)() as session:
        jobs.claim(session, job, worker="a")
        assert jobs.release(session, job, worker="a", error="OSError: disk") == JobStatus.QUEUED
        assert jobs.release(session, job, worker="a", error="again") is None  # not its own now
    assert job_row(app, job).status == JobStatus.QUEUED
    _set(app, job, attempts=jobs.MAX_ATTEMPTS - 1)
    with sessions(app)() as session:
        jobs.claim(session, job, worker="b")
        assert jobs.release(session, job, worker="b", error="OSError: disk") == JobStatus.FAILED
    row = job_row(app, job)
    assert row.status == JobStatus.FAILED and row.error == "OSError: disk"


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
