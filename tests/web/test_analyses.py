"""Stored analyses: queued by an organizer, claimed and computed by the worker, outdated by runs."""

from __future__ import annotations

import threading
from datetime import timedelta

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from leaderboard.models import Job, utcnow
from leaderboard.services.jobs import analyses
from leaderboard.services.jobs import core as jobs
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.worker.jobs import take_next
from tests.helpers.jobs import sessions
from tests.helpers.sentiment import PATH, SENTIMENT, queue
from tests.runs import api_upload, token_for


def test_the_worker_computes_a_queued_analysis_which_a_new_run_outdates(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    first = queue(app, Request(samples=500))
    # Asking again while it waits returns the same job.
    assert queue(app, Request(samples=500)) == first
    with sessions(app)() as session:
        target = resolve(session, "example-sentiment", "A")
        state = analyses.status(session, target)
        assert state.analysis is None and state.pending
    result = hosted.invoke(args=["leaderboard", "worker", "--once"])
    assert result.exit_code == 0, result.output
    assert f"analysis {first}: done" in result.output
    with sessions(app)() as session:
        target = resolve(session, "example-sentiment", "A")
        state = analyses.status(session, target)
        assert state.analysis is not None and state.current and not state.pending
        report = state.analysis.report
        assert report is not None
        assert report["measure"] == "macro-F1" and len(report["runs"]) == 5
        assert [label for group in report["clusters"] for label in group] == report["runs"]
        low, high = report["intervals"][str(report["run_ids"][0])]["macro-F1"]
        assert low <= high
    # A new run advances the set's revision: the stored analysis is now out of date.
    resp = api_upload(
        app.test_client(),
        token_for(app, "alice@example.org"),
        (SENTIMENT / "run-valid.tsv").read_bytes(),
        path=PATH,
        slot="contrastive1",
    )
    assert resp.status_code == 201
    with sessions(app)() as session:
        target = resolve(session, "example-sentiment", "A")
        state = analyses.status(session, target)
        assert state.analysis is not None and not state.current


def test_a_refused_analysis_is_stored_as_failed_with_its_reason(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(method="t-test"))
    result = hosted.invoke(args=["leaderboard", "worker", "--once"])
    assert f"analysis {job}: failed" in result.output
    with sessions(app)() as session:
        row = session.get(Job, job)
        assert row is not None and row.status == "failed"
        assert "is not their mean" in row.error


def test_a_job_whose_worker_was_lost_is_claimed_again(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    job = queue(app, Request(samples=200))
    with sessions(app)() as session:
        claimed = take_next(session, worker="lost:1")
        assert claimed is not None and claimed.id == job
        # Claimed and running: nobody else takes it ...
        assert take_next(session, worker="other:2") is None
        # ... until it has run longer than a worker may.
        later = utcnow() + jobs.STALE_AFTER + timedelta(seconds=1)
        again = take_next(session, worker="other:2", now=later)
        assert again is not None and again.id == job and again.worker == "other:2"


def test_racing_workers_claim_each_job_once(app: Flask, hosted: FlaskCliRunner) -> None:
    queued = {queue(app, Request(samples=100, seed=s)) for s in range(3)}
    claims: list[int] = []
    barrier = threading.Barrier(6)

    def claim(n: int) -> None:
        with sessions(app)() as session:
            barrier.wait()
            found = take_next(session, worker=f"w:{n}")
            if found is not None:
                claims.append(found.id)

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claims) == sorted(queued)
    with sessions(app)() as session:
        rows = session.scalars(select(Job)).all()
        assert {r.status for r in rows} == {"running"}
