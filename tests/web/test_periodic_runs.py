"""Periodic work claimed in the database: each period runs once, on whichever workers run.

The claims race on the test's database (SQLite, or PostgreSQL with LEADERBOARD_TEST_DATABASE_URL);
a real ``leaderboard worker`` with no flag makes a scheduled release.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flask import Flask
from sqlalchemy import func, select

from leaderboard.models import AuditEvent, PeriodicRun, Phase, Subtask, Task, WorkerSeen, utcnow
from leaderboard.services.operations import periodic
from leaderboard.unit_of_work import opened
from tests.helpers.jobs import worker_env
from tests.runs import hide_results_until
from tests.workers import start_worker, stop_worker, wait_for

T3 = "semeval2016-task3"
EVERY = timedelta(seconds=60)
AT = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
RACERS = 8


def sessions(app: Flask):  # type: ignore[no-untyped-def]
    return app.extensions["leaderboard"]["sessionmaker"]


def race(app: Flask, now: datetime) -> list[str]:
    """Let RACERS workers, each on its own connection, claim "check" at ``now`` at once."""
    start = threading.Barrier(RACERS)
    won: list[str] = []
    errors: list[BaseException] = []

    def claim(worker: str) -> None:
        try:
            with opened(sessions(app)) as unit:
                start.wait(10)
                if periodic.claim(unit.session, "check", every=EVERY, worker=worker, now=now):
                    won.append(worker)
        except BaseException as exc:  # reported below, with the winners
            errors.append(exc)

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    return won


def schedule_row(app: Flask) -> PeriodicRun:
    with sessions(app)() as session:
        row = session.get(PeriodicRun, "check")
        assert row is not None
        session.expunge(row)
        return row


def test_of_workers_racing_for_a_period_one_runs_it(app: Flask) -> None:
    first = race(app, AT)
    assert len(first) == 1
    row = schedule_row(app)
    assert (row.claimed_by, row.due_at, row.runs) == (first[0], AT + EVERY, 1)
    # Within the period nobody runs it again ...
    assert race(app, AT + timedelta(seconds=59)) == []
    # ... and the next period is run once more.
    assert len(race(app, AT + EVERY)) == 1
    assert schedule_row(app).runs == 2


def test_a_clock_moved_back_runs_the_job_again_rather_than_waiting(app: Flask) -> None:
    assert len(race(app, AT)) == 1
    assert len(race(app, AT - timedelta(days=1))) == 1
    assert schedule_row(app).due_at == AT - timedelta(days=1) + EVERY


def test_a_worker_that_read_the_clock_a_little_earlier_does_not_claim_again(app: Flask) -> None:
    # Two workers read the clock in one order and reach the database in the other.
    assert len(race(app, AT)) == 1
    assert race(app, AT - timedelta(seconds=2)) == []
    assert race(app, AT - EVERY) == []
    assert schedule_row(app).due_at == AT + EVERY


def test_the_end_of_a_run_is_recorded_only_for_its_claimant(app: Flask) -> None:
    with opened(sessions(app)) as unit:
        assert periodic.claim(unit.session, "check", every=EVERY, worker="a", now=AT)
        periodic.finished(unit.session, "check", worker="b", now=AT + timedelta(seconds=1))
    assert schedule_row(app).finished_at is None
    with opened(sessions(app)) as unit:
        periodic.finished(unit.session, "check", worker="a", now=AT + timedelta(seconds=2))
    assert schedule_row(app).finished_at == AT + timedelta(seconds=2)


def test_worker_once_is_a_worker_seen_and_takes_beat_as_a_harmless_alias(app: Flask) -> None:
    before = utcnow() - timedelta(seconds=1)
    result = app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once", "--beat"])
    assert result.exit_code == 0, result.output
    with sessions(app)() as session:
        seen = session.scalars(select(WorkerSeen)).all()
    assert [(w.queues, w.seen_at >= before) for w in seen] == [("once", True)]
    health = app.test_client().get("/healthz").get_json()
    assert (health["status"], health["worker"]["stale"]) == ("ok", False)


def released(app: Flask, name: str) -> bool:
    with sessions(app)() as session:
        return not session.scalar(
            select(Phase.results_hidden)
            .join(Subtask)
            .join(Task)
            .where(Task.slug == T3, Subtask.slug == "A", Phase.name == name)
        )


def seen(app: Flask) -> int:
    """Return how many workers were ever seen."""
    with sessions(app)() as session:
        return int(session.scalar(select(func.count()).select_from(WorkerSeen)) or 0)


def test_a_worker_with_no_flag_makes_a_scheduled_release_once(app: Flask, tmp_path: Path) -> None:
    name = hide_results_until(app, T3, "A", utcnow() - timedelta(minutes=1))
    log = tmp_path / "worker.log"
    began = utcnow()
    # Two workers, as many hosts would run; neither has --beat.
    workers = [start_worker(worker_env(app), log) for _ in range(2)]
    try:
        wait_for(lambda: released(app, name), 90, "the scheduled release made by a worker", log)
        wait_for(lambda: seen(app) == 2, 90, "both workers seen", log)
        with sessions(app)() as session:
            runs = {r.name: r for r in session.scalars(select(PeriodicRun))}
        elapsed = utcnow() - began
    finally:
        for worker in workers:
            stop_worker(worker)
    assert set(runs) == {"check-campaign", "sweep", "analyse"}
    # Both looked every 5 s; one ran each minute's check.
    assert 1 <= runs["check-campaign"].runs <= 1 + elapsed // EVERY
    with sessions(app)() as session:
        releases = session.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.action == "release-results")
        )
    assert releases == 1
