"""The workers' health: /healthz (public JSON, counts only) and the organizer dashboard's warning."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.models import (
    EvalSet,
    Job,
    OutboxMail,
    WorkerSeen,
    utcnow,
)
from leaderboard.states import MailStatus
from tests.conftest import AppFactory, login
from tests.runs import hide_results_until, make_organizer

T3 = "semeval2016-task3"
#: The campaign's clock: a rehearsal's time, far from the system time workers record.
CAMPAIGN_NOW = datetime(2016, 3, 1, 12, 0, tzinfo=UTC)
DUE = datetime(2016, 3, 1, 9, 30, tzinfo=UTC)
WORKER = "worker-host:4242"
START = "start `leaderboard worker`"


@pytest.fixture
def rehearsal(make_app: AppFactory) -> Flask:
    """Return an app whose campaign clock stands at CAMPAIGN_NOW, with an organizer."""
    app = make_app(clock=FixedClock(CAMPAIGN_NOW))
    make_organizer(app, "org@example.org")
    return app


def sessions(app: Flask):  # type: ignore[no-untyped-def]
    return app.extensions["leaderboard"]["sessionmaker"]


def worker_seen(app: Flask, ago: timedelta) -> datetime:
    """Record a worker last seen ``ago`` before now (system time); return that time."""
    at = (utcnow() - ago).replace(microsecond=0)
    with sessions(app)() as session:
        session.add(WorkerSeen(name=WORKER, host="worker-host", pid=4242, queues="jobs,mail",
                               started_at=at, seen_at=at))  # fmt: skip
        session.commit()
    return at


def queued_jobs(app: Flask, n: int) -> None:
    """Add ``n`` queued analyses of the first preset set."""
    with sessions(app)() as session:
        set_id = session.scalar(select(EvalSet.id).order_by(EvalSet.id).limit(1))
        for seed in range(n):
            session.add(
                Job(eval_set_id=set_id, revision=1, measure="MAP", method="bootstrap",
                         samples=100, seed=seed, alpha=0.05, correction="none", runs="primary",
                         requested_by="org@example.org")
            )  # fmt: skip
        session.commit()


def queued_mail(app: Flask, n: int, *, sent: int = 0) -> None:
    """Add ``n`` undelivered outbox mails and ``sent`` delivered ones (not waiting)."""
    with sessions(app)() as session:
        for i in range(n + sent):
            delivered = i >= n
            session.add(
                OutboxMail(kind="verify", recipient=f"p{i}@example.org",
                           message=None if delivered else "Subject: x\n\nbody",
                           deliver=True,
                           status=MailStatus.SENT if delivered else MailStatus.QUEUED,
                           attempts=0, last_error="", created_at=utcnow(), queued_at=utcnow())
            )  # fmt: skip
        session.commit()


def test_healthz_without_any_worker_is_degraded_yet_200(rehearsal: Flask) -> None:
    resp = rehearsal.test_client().get("/healthz")
    assert resp.status_code == 200
    assert resp.get_json() == {
        "status": "degraded",
        "database": "ok",
        "worker": {"last_seen": None, "stale": True},
        "waiting": {"jobs": 0, "releases": 0, "mail": 0},
        "warnings": [
            "No worker has been seen yet, so scheduled releases, deadline notices, mail and "
            f"analyses will wait (none waits now); {START}."
        ],
    }


def test_healthz_with_a_worker_seen_four_minutes_ago_is_ok(rehearsal: Flask) -> None:
    seen = worker_seen(rehearsal, timedelta(minutes=4))
    queued_jobs(rehearsal, 1)
    resp = rehearsal.test_client().get("/healthz")
    assert resp.status_code == 200
    assert resp.get_json() == {
        "status": "ok",
        "database": "ok",
        "worker": {"last_seen": seen.strftime("%Y-%m-%dT%H:%M:%SZ"), "stale": False},
        "waiting": {"jobs": 1, "releases": 0, "mail": 0},
        "warnings": [],
    }


def test_healthz_with_a_silent_worker_warns_naming_what_waits_by_count(rehearsal: Flask) -> None:
    seen = worker_seen(rehearsal, timedelta(minutes=12))
    queued_jobs(rehearsal, 2)
    queued_mail(rehearsal, 3, sent=1)
    hide_results_until(rehearsal, T3, "A", DUE)
    # Not due yet by the campaign's clock: not counted.
    hide_results_until(rehearsal, T3, "B", CAMPAIGN_NOW + timedelta(minutes=1))
    resp = rehearsal.test_client().get("/healthz")
    assert resp.status_code == 200  # the load balancer keeps a host whose workers are gone
    body = resp.get_json()
    assert body == {
        "status": "degraded",
        "database": "ok",
        "worker": {"last_seen": seen.strftime("%Y-%m-%dT%H:%M:%SZ"), "stale": True},
        "waiting": {"jobs": 2, "releases": 1, "mail": 3},
        "warnings": [
            f"No worker has been seen for 12 minutes (last at {seen:%Y-%m-%d %H:%M} UTC): "
            f"3 mails, 1 scheduled release and 2 jobs wait for one; {START}."
        ],
    }
    # Public: no task, phase, host or worker name.
    text = resp.get_data(as_text=True)
    for secret in (T3, "post-evaluation", "worker-host", WORKER):
        assert secret not in text


def test_the_dashboard_says_when_a_worker_was_last_seen(rehearsal: Flask) -> None:
    seen = worker_seen(rehearsal, timedelta(seconds=30))
    hide_results_until(rehearsal, T3, "A", DUE)
    client = rehearsal.test_client()
    login(client, "org@example.org", "organizer password")
    page = client.get("/organizer/").get_data(as_text=True)
    shown = re.search(
        f'Worker last seen <time datetime="{seen:%Y-%m-%dT%H:%M:%SZ}">'
        f"{seen:%Y-%m-%d %H:%M:%S} UTC</time> \\(([0-9]+) seconds ago\\): <code>{WORKER}</code>, "
        "queues jobs,mail.",
        page,
    )
    assert shown is not None, page
    # Recorded 30 s (and a fraction) before the request; the page took a few seconds at most.
    assert 30 <= int(shown.group(1)) < 60
    assert 'id="worker-warning"' not in page


def test_the_dashboard_warns_naming_each_due_release_when_no_worker_was_seen(
    rehearsal: Flask,
) -> None:
    seen = worker_seen(rehearsal, timedelta(hours=3))
    queued_jobs(rehearsal, 1)
    hide_results_until(rehearsal, T3, "A", DUE)
    hide_results_until(rehearsal, T3, "C", DUE + timedelta(hours=1))
    client = rehearsal.test_client()
    login(client, "org@example.org", "organizer password")
    page = client.get("/organizer/").get_data(as_text=True)
    assert (
        '<p class="notice warning" id="worker-warning" role="alert">'
        f"No worker has been seen for 3 hours (last at {seen:%Y-%m-%d %H:%M} UTC): "
        "2 scheduled releases (semeval2016-task3/A post-evaluation, due 2016-03-01 09:30 UTC; "
        "semeval2016-task3/C post-evaluation, due 2016-03-01 10:30 UTC) and 1 job wait for one; "
        "start <code>leaderboard worker</code>" in page
    )


def test_the_dashboard_warns_when_no_worker_was_ever_seen(rehearsal: Flask) -> None:
    client = rehearsal.test_client()
    login(client, "org@example.org", "organizer password")
    page = client.get("/organizer/").get_data(as_text=True)
    assert "No worker has been seen yet.</p>" in page
    assert (
        'id="worker-warning" role="alert">No worker has been seen yet, so scheduled releases, '
        "deadline notices, mail and analyses will wait (none waits now); start "
        "<code>leaderboard worker</code>" in page
    )


def test_the_dashboard_names_a_worker_once_run_as_such(rehearsal: Flask) -> None:
    result = rehearsal.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert result.exit_code == 0, result.output
    client = rehearsal.test_client()
    login(client, "org@example.org", "organizer password")
    page = client.get("/organizer/").get_data(as_text=True)
    assert re.search(
        r"ago\): <code>[^<]+:[0-9]+</code>, <code>leaderboard worker --once</code>.", page
    )
    assert 'id="worker-warning"' not in page
