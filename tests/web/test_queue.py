"""Background work on Celery: jobs sent once their rows commit, run by real workers on real brokers.

A worker here is ``leaderboard worker`` in a process group of its own, on the embedded broker
(a SQLite file in the instance folder) or on a Redis server started by the test; the at-least-once
proof kills one with SIGKILL in the middle of an analysis.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from leaderboard.jobqueue import RUN_JOB, SEND_MAIL, enqueue
from leaderboard.models import Job, PeriodicRun
from leaderboard.services.jobs import analyses
from leaderboard.services.jobs.automatic import AUTOMATIC
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import JobStatus
from tests import redis_server
from tests.accounts import BASE, sign_up
from tests.conftest import login
from tests.dispatch import LocalDispatcher, use_broker
from tests.helpers.jobs import job_row, sessions, worker_env
from tests.helpers.sentiment import PATH, SENTIMENT, queue
from tests.runs import api_upload, token_for
from tests.workers import kill_tree, start_worker, stop_worker, wait_for


def periodic_runs(app: Flask) -> list[str]:
    """Return the names of the periodic jobs a worker claimed and finished."""
    with sessions(app)() as session:
        return sorted(
            session.scalars(select(PeriodicRun.name).where(PeriodicRun.finished_at.is_not(None)))
        )


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[redis_server.RedisServer]:
    """Run a Redis server of this test's own; skipped without one, except under CI=true."""
    try:
        server = redis_server.start(tmp_path / "redis")
    except RuntimeError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis could not start: {exc}")
        pytest.skip(f"Redis could not start: {exc}")
    yield server
    redis_server.stop(server)


def test_a_job_is_sent_only_once_its_row_is_committed(app: Flask) -> None:
    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    with sessions(app)() as session:
        enqueue(session, RUN_JOB, 7)
        session.rollback()
        enqueue(session, RUN_JOB, 8)
        assert dispatcher.sent == []  # not before the commit ...
        session.commit()
    # ... and never for the rolled-back one.
    assert dispatcher.sent == [(RUN_JOB, (8,))]


def test_asking_for_an_analysis_sends_its_row_to_the_workers(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    job = queue(app, Request(samples=100))
    assert (RUN_JOB, (job,)) in dispatcher.sent
    row = job_row(app, job)
    assert row.status == JobStatus.QUEUED and row.enqueued_at is not None and row.attempts == 0
    # Asking again while it waits neither adds a row nor sends it twice.
    assert queue(app, Request(samples=100)) == job
    assert dispatcher.sent.count((RUN_JOB, (job,))) == 1


def test_a_worker_runs_jobs_and_mail_from_the_embedded_broker(
    app: Flask,
    hosted: FlaskCliRunner,
    tmp_path: Path,
) -> None:
    use_broker(app)  # the embedded broker: a SQLite file in the instance folder
    ext = app.extensions["leaderboard"]
    ext["settings"] = replace(ext["settings"], base_url=BASE)
    job = queue(app, Request(samples=300))
    # A sign-up's mail is queued by the web answer, not sent by it.
    resp = sign_up(app.test_client(), "dana@example.org")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    broker = app.extensions["leaderboard"]["settings"].instance_dir / "queue.sqlite3"
    with sqlite3.connect(broker) as conn:
        waiting = conn.execute("SELECT payload FROM kombu_message WHERE visible = 1").fetchall()
    tasks = sorted(json.loads(payload)["headers"]["task"] for (payload,) in waiting)
    assert tasks == [RUN_JOB, SEND_MAIL]

    log = tmp_path / "worker.log"
    # No flag, as `make run` starts it: the periodic jobs run on it all the same.
    worker = start_worker(worker_env(app), log)
    try:
        done = wait_for(
            lambda: (row := job_row(app, job)).status == JobStatus.DONE and row,
            90,
            "the queued analysis done by the worker",
            log,
        )
        # The finished analysis' charts are drawn by the worker too (pages only read them).
        public = app.test_client()
        for chart in ("measure.svg", "matrix.pdf"):
            wait_for(
                lambda c=chart: (
                    public.get(f"/tasks/example-sentiment/A/analysis/{c}").status_code == 200
                ),
                60,
                f"the analysis' {chart} drawn by the worker",
                log,
            )
        # Unasked, the worker summarizes the set the uploads changed, with each run's chart.
        alice = app.test_client()
        login(alice, "alice@example.org", "correct horse battery")
        page = wait_for(
            lambda: "chart-pending" not in (html := alice.get("/runs/1/queries").get_data(
                as_text=True)) and "summary-pending" not in html and html,
            60,
            "the set's summaries and run 1's chart stored by the worker",
            log,
        )  # fmt: skip
        assert 'id="query-table"' in page
        # A chart nobody drew yet is asked of the worker through the broker, then served.
        first = alice.get("/runs/1/queries.pdf")
        assert first.status_code == 404 and "being drawn" in first.get_data(as_text=True)
        pdf = wait_for(
            lambda: (resp := alice.get("/runs/1/queries.pdf")).status_code == 200 and resp.data,
            60,
            "run 1's PDF chart drawn by the worker when asked",
            log,
        )
        assert pdf.startswith(b"%PDF")
        mailed = wait_for(
            lambda: "To: dana@example.org" in log.read_text(errors="replace"),
            60,
            "the sign-up mail on the worker's console",
            log,
        )
        periodic = wait_for(
            lambda: len(names := periodic_runs(app)) == 3 and names,
            60,
            "the periodic jobs claimed and run by the worker",
            log,
        )
        # A new run on the visible set: its periodic look queues the analysis, unasked.
        upload = api_upload(
            app.test_client(),
            token_for(app, "bob@example.org"),
            (SENTIMENT / "run-valid.tsv").read_bytes(),
            path=PATH,
            slot="contrastive1",
        )
        assert upload.status_code == 201
        unasked = wait_for(
            lambda: automatic_done(app),
            90,
            "the automatic analysis of the new scores done by the worker",
            log,
        )
    finally:
        stop_worker(worker)
    assert mailed and "Confirm your e-mail address" in log.read_text(errors="replace")
    assert periodic == ["analyse", "check-campaign", "sweep"]
    instance = app.extensions["leaderboard"]["settings"].instance_dir
    assert not list(instance.glob("celerybeat-schedule*")), "Celery beat ran"
    assert done.attempts == 1 and done.report is not None
    assert done.report["samples"] == 300
    assert unasked.report is not None and unasked.report["samples"] == 10_000


def automatic_done(app: Flask) -> Job | None:
    """Return the automatic analysis of the example's current scores once it is done."""
    with sessions(app)() as session:
        target = resolve(session, "example-sentiment", "A")
        found = session.scalar(
            select(Job).where(
                Job.eval_set_id == target.eval_set.id,
                Job.requested_by == AUTOMATIC,
                Job.revision == target.eval_set.revision,
                Job.status == JobStatus.DONE,
            )
        )
    return job_row(app, found.id) if found is not None else None


def test_a_worker_killed_mid_analysis_loses_nothing_on_redis(
    app: Flask,
    hosted: FlaskCliRunner,
    tmp_path: Path,
    redis: redis_server.RedisServer,
) -> None:
    use_broker(app, redis.url)
    # One heartbeat a second: the killed worker's job is taken over three seconds after.
    env = worker_env(app, LEADERBOARD_QUEUE_URL=redis.url, LEADERBOARD_JOB_HEARTBEAT_SECONDS="1")
    request = Request(method="bootstrap", samples=1_000_000, seed=11)
    job = queue(app, request)
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_worker(env, first_log)
    try:
        running = wait_for(
            lambda: (row := job_row(app, job)).status == JobStatus.RUNNING and row,
            90,
            "the analysis taken by the first worker",
            first_log,
        )
    finally:
        kill_tree(first)  # SIGKILL, pool and all
    # Killed in the middle: taken once, not finished.
    killed = job_row(app, job)
    assert killed.status == JobStatus.RUNNING and killed.attempts == 1
    assert killed.worker == running.worker

    second = start_worker(env, second_log)
    try:
        done = wait_for(
            lambda: (row := job_row(app, job)).status in (JobStatus.DONE, JobStatus.FAILED) and row,
            120,
            "the analysis finished by the second worker",
            second_log,
        )
    finally:
        stop_worker(second)
    assert done.status == JobStatus.DONE, done.error
    assert done.attempts == 2 and done.worker != running.worker
    # The same report as computed without any kill.
    with sessions(app)() as session:
        target = resolve(session, "example-sentiment", "A")
        expected = analyses.compute(
            session, app.extensions["leaderboard"]["store"], target, request
        )
    assert done.report == json.loads(json.dumps(expected))
    with sessions(app)() as session:
        rows = session.scalars(select(Job).where(Job.eval_set_id == done.eval_set_id))
        assert [r.id for r in rows] == [job]  # one row, updated by whichever worker ran it
