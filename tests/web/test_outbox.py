"""The mail outbox: a row with its cause, only its id queued, sent once, no secret left behind."""

from __future__ import annotations

import logging
import socket
import sqlite3
import threading
import time
from dataclasses import replace
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from leaderboard.clock import FixedClock
from leaderboard.jobqueue import SEND_MAIL
from leaderboard.models import OutboxMail, User, utcnow
from leaderboard.services.common import mail, outbox
from leaderboard.states import MailStatus
from leaderboard.unit_of_work import opened, unit_of
from leaderboard.worker import runtime
from leaderboard.worker.celery_app import worker_app
from leaderboard.worker.jobs import deliver_mail
from tests import dispatch
from tests.accounts import BASE, last_link, mailing, mails_to, sign_up, user_row
from tests.conftest import AppFactory
from tests.dispatch import LocalDispatcher, use_broker
from tests.helpers.jobs import worker_env
from tests.smtp import MailServer, link_in
from tests.workers import start_worker, stop_worker, wait_for

T0 = utcnow().replace(microsecond=0)
NEW = "dana@example.org"


@pytest.fixture
def site(make_app: AppFactory, server: MailServer) -> Flask:
    """An app mailing through the loopback server, with links under BASE and a fixed clock."""
    return make_app(clock=FixedClock(T0), **mailing(server))


def rows(app: Flask) -> list[OutboxMail]:
    """Return every outbox row, read afresh."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        found = list(session.scalars(select(OutboxMail).order_by(OutboxMail.id)))
        session.expunge_all()
        return found


def token_of(link: str) -> str:
    """Return the secret part of a mailed link's path."""
    return link.rsplit("/", 1)[1]


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Return what the server logged (not the test SMTP server, which logs what it receives)."""
    return "\n".join(
        record.getMessage() + (record.exc_text or "")
        for record in caplog.records
        if not record.name.startswith("mail.log")
    )


def put_mail(app: Flask, to: str = "to@example.org", deliver: bool = True) -> int:
    """Put one mail in the outbox and commit it, its id not sent anywhere; return its id."""
    message = mail.compose("lb@example.org", to, "Hi", f"{BASE}/password/reset/SECRET\n")
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        row = outbox.put(session, message, kind="reset", now=utcnow(), deliver=deliver, queue=False)
        session.commit()
        return row.id


def deliver(app: Flask, outbox_id: int) -> outbox.Delivery:
    """Deliver one outbox mail as a worker does, in a session of its own."""
    settings = app.extensions["leaderboard"]["settings"]
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return deliver_mail(session, outbox_id, mail.Transport.parse(settings.mail_url), utcnow())


def test_a_sign_up_queues_only_its_mails_id_and_leaves_no_token_behind(
    site: Flask, server: MailServer, caplog: pytest.LogCaptureFixture
) -> None:
    dispatcher: LocalDispatcher = site.extensions["leaderboard"]["dispatcher"]
    with caplog.at_level(logging.DEBUG):
        assert sign_up(site.test_client(), NEW).status_code == 200
        token = token_of(last_link(server.inbox, NEW))
        dispatch.flush()
    [row] = rows(site)
    assert dispatcher.sent == [(SEND_MAIL, (row.id,))]
    assert (row.kind, row.recipient, row.status) == ("verification", NEW, MailStatus.SENT)
    assert row.message is None and row.sent_at is not None and row.attempts == 1
    assert token not in logged(caplog) and "Confirm your e-mail address" not in logged(caplog)
    assert '"path":"/signup"' in logged(caplog)  # the request log was captured too


def test_the_mail_is_written_in_the_transaction_of_its_cause(
    site: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any, **__: Any) -> OutboxMail:
        raise RuntimeError("the outbox is full")

    monkeypatch.setattr(outbox, "put", broken)
    assert sign_up(site.test_client(), NEW).status_code == 500
    # No mail, no account: the two commit together or not at all.
    assert user_row(site, NEW) is None


def test_a_mail_queued_while_the_broker_is_down_is_sent_once_it_is_back(
    site: Flask,
    server: MailServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dispatcher: LocalDispatcher = site.extensions["leaderboard"]["dispatcher"]

    def down(task: str, args: tuple[Any, ...]) -> None:
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    with monkeypatch.context() as broker:
        broker.setattr(dispatcher, "send", down)
        with caplog.at_level(logging.DEBUG):
            assert sign_up(site.test_client(), NEW).status_code == 200
    [row] = rows(site)
    assert row.status == MailStatus.QUEUED and row.message is not None
    assert f"{SEND_MAIL}({row.id}) could not be queued" in logged(caplog)
    assert "Confirm your e-mail address" not in logged(caplog)
    assert mails_to(server.inbox, NEW) == []
    sessions = site.extensions["leaderboard"]["sessionmaker"]
    with opened(sessions) as unit:
        # Not yet counted lost: its message may still be on its way.
        assert outbox.resend_lost(unit.session, T0 + timedelta(minutes=1)) == []
        assert outbox.queued_mail_count(unit.session) == 1
        assert outbox.resend_lost(unit.session, T0 + timedelta(minutes=6)) == [row.id]
    token = token_of(last_link(server.inbox, NEW))
    dispatch.flush()
    with opened(sessions) as unit:
        assert outbox.resend_lost(unit.session, T0 + timedelta(minutes=20)) == []
        assert outbox.queued_mail_count(unit.session) == 0
    assert len(mails_to(server.inbox, NEW)) == 1
    [sent] = rows(site)
    assert sent.status == MailStatus.SENT and sent.message is None
    assert token not in logged(caplog)


def test_a_mail_is_claimed_and_committed_before_the_transport_is_reached(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = app.extensions["leaderboard"]["sessionmaker"]
    seen: list[tuple[MailStatus, int, bool]] = []

    def watched(transport: mail.Transport, message: EmailMessage) -> None:
        with sessions() as other:
            row = other.get(OutboxMail, outbox_id)
            assert row is not None
            seen.append((row.status, row.attempts, delivering.in_transaction()))

    monkeypatch.setattr(mail, "send", watched)
    outbox_id = put_mail(app)
    with sessions() as delivering:
        done = deliver_mail(delivering, outbox_id, mail.Transport("null"), utcnow())
    # Another session sees the claim; the delivering one holds no transaction while sending.
    assert seen == [(MailStatus.SENDING, 1, False)]
    assert done == outbox.Delivery(MailStatus.SENT)
    [row] = rows(app)
    assert (row.status, row.message) == (MailStatus.SENT, None)


def test_an_account_mail_rides_on_its_callers_transaction(app: Flask) -> None:
    from leaderboard.services.signup.notices import Outbox

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        queued = Outbox(mail.Transport("null"), "lb@example.org", "s", BASE, "LB", T0, session)
        queued.invitation(NEW, "The organizers")
        at_once = replace(queued, background=False, unsent=[])
        at_once.invitation("erin@example.org", "The organizers")
        assert queued.unsent == []
        assert [r.recipient for r in session.scalars(select(OutboxMail))] == [
            NEW,
            "erin@example.org",
        ]
        # Only the command line's mail waits to be sent by its caller, after the commit.
        assert at_once.unsent == [session.scalars(select(OutboxMail.id)).all()[1]]
        session.rollback()
    assert rows(app) == []  # neither mail committed itself


def test_two_deliveries_of_one_mail_send_it_once(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []

    def slow(transport: mail.Transport, message: EmailMessage) -> None:
        time.sleep(0.3)  # both deliveries have started before either finishes
        sent.append(str(message["To"]))

    monkeypatch.setattr(mail, "send", slow)
    outbox_id = put_mail(app)
    done: list[outbox.Delivery] = []
    threads = [
        threading.Thread(target=lambda: done.append(deliver(app, outbox_id))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sent == ["to@example.org"]
    assert sorted(str(d.status) for d in done) == ["None", "sent"]
    assert deliver(app, outbox_id) == outbox.Delivery(None)  # a late duplicate
    assert sent == ["to@example.org"]


def test_the_mail_task_retries_then_gives_up_and_keeps_no_text(
    app: Flask, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    celery = worker_app(app.extensions["leaderboard"]["settings"])
    celery.conf.task_always_eager = True
    # The task runs here, on this process's worker connections: closed when the test ends.
    monkeypatch.setattr(runtime, "_built", None)
    request.addfinalizer(lambda: runtime.resources().engine.dispose())
    tries: list[str] = []

    def flaky(transport: mail.Transport, message: EmailMessage) -> None:
        tries.append(str(message["To"]))
        if len(tries) < 3:
            raise mail.MailError("the server said 451, try later")

    monkeypatch.setattr(mail, "send", flaky)
    # Only an id travels: the task's argument.
    retried = put_mail(app)
    assert celery.tasks[SEND_MAIL].apply(args=[retried]).successful()
    assert tries == ["to@example.org"] * 3
    # One that never goes is given up after its retries, not tried forever, and cleared.
    never = put_mail(app)
    monkeypatch.setattr(mail, "send", lambda *_: (_ for _ in ()).throw(mail.MailError("down")))
    celery.tasks[SEND_MAIL].apply(args=[never])
    # A mail that must not go out (a hidden recipient) is queued like the others and dropped.
    tries.clear()
    monkeypatch.setattr(mail, "send", flaky)
    dropped = put_mail(app, deliver=False)
    assert celery.tasks[SEND_MAIL].apply(args=[dropped]).successful() and tries == []
    by_id = {row.id: row for row in rows(app)}
    assert (by_id[retried].status, by_id[retried].attempts) == (MailStatus.SENT, 3)
    assert by_id[never].status == MailStatus.FAILED
    assert by_id[never].attempts == outbox.RETRIES + 1 and by_id[never].last_error == "down"
    assert by_id[dropped].status == MailStatus.DROPPED and by_id[dropped].sent_at is None
    assert all(row.message is None for row in by_id.values())


def test_the_sweep_sends_again_only_the_mail_that_seems_lost(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded: list[tuple[str, tuple[Any, ...]]] = []
    dispatcher = app.extensions["leaderboard"]["dispatcher"]
    monkeypatch.setattr(dispatcher, "send", lambda task, args: recorded.append((task, args)))
    fresh, lost, stuck, done = (put_mail(app, f"u{i}@example.org") for i in range(4))
    now = utcnow()
    sessions = app.extensions["leaderboard"]["sessionmaker"]
    with sessions() as session:
        queued = {"status": MailStatus.QUEUED, "message": "x", "sent_at": None}
        session.execute(update(OutboxMail).values(**queued, queued_at=now))
        old = now - outbox.LOST_AFTER - timedelta(seconds=1)
        session.execute(update(OutboxMail).where(OutboxMail.id == lost).values(queued_at=old))
        dead = now - outbox.SENDING_LOST_AFTER - timedelta(seconds=1)
        session.execute(
            update(OutboxMail)
            .where(OutboxMail.id == stuck)
            .values(status=MailStatus.SENDING, queued_at=dead)
        )
        session.execute(
            update(OutboxMail).where(OutboxMail.id == done).values(status=MailStatus.SENT)
        )
        session.commit()
        with unit_of(session):
            assert outbox.resend_lost(session, now) == [lost, stuck]
        assert outbox.queued_mail_count(session) == 3
    # Only ids, once each, after the commit; the fresh one is left to its own message.
    assert recorded == [(SEND_MAIL, (lost,)), (SEND_MAIL, (stuck,))]
    assert fresh not in [args[0] for _, args in recorded]


def test_a_worker_on_the_embedded_broker_sends_a_lost_mail_once_and_keeps_no_message(
    make_app: AppFactory, server: MailServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(**mailing(server))
    use_broker(app)  # the embedded broker: a SQLite file in the instance folder
    ext = app.extensions["leaderboard"]
    queue_file = ext["settings"].instance_dir / "queue.sqlite3"
    # The broker is down when the first sign-up commits: its mail has no message anywhere.
    with monkeypatch.context() as broker:
        broker.setattr(
            ext["dispatcher"], "send", lambda *_: (_ for _ in ()).throw(ConnectionError("down"))
        )
        assert sign_up(app.test_client(), "erin@example.org").status_code == 200
    with ext["sessionmaker"]() as session:
        # As if it had waited long enough to count as lost.
        session.execute(update(OutboxMail).values(queued_at=utcnow() - timedelta(hours=1)))
        session.commit()
    assert sign_up(app.test_client(), NEW).status_code == 200
    with sqlite3.connect(queue_file) as conn:
        payloads = [p for (p,) in conn.execute("SELECT payload FROM kombu_message")]
    assert len(payloads) == 1 and "Confirm" not in payloads[0]
    log = tmp_path / "worker.log"
    env = worker_env(
        app,
        LEADERBOARD_MAIL_URL=f"smtp://{server.host}:{server.port}",
        LEADERBOARD_JOB_HEARTBEAT_SECONDS="1",  # a sweep every three seconds
    )
    worker = start_worker(env, log)
    try:
        new = server.inbox.wait_for(NEW, timeout=90)[0]
        lost = server.inbox.wait_for("erin@example.org", timeout=90)[0]
        wait_for(
            lambda: all(row.status == MailStatus.SENT for row in rows(app)),
            30,
            "both outbox rows marked sent",
            log,
        )
        time.sleep(7)  # two more sweeps: nothing is sent again
    finally:
        stop_worker(worker)
    assert len(server.inbox.to(NEW)) == 1 and len(server.inbox.to("erin@example.org")) == 1
    secrets = [token_of(link_in(new)), token_of(link_in(lost))]
    with sqlite3.connect(queue_file) as conn:
        assert conn.execute("SELECT count(*) FROM kombu_message").fetchone() == (0,)
    stored = b"".join(p.read_bytes() for p in queue_file.parent.glob("queue.sqlite3*"))
    worker_log = log.read_text(errors="replace")
    assert "sent again: mail(s)" in worker_log
    for secret in secrets:
        assert secret.encode() not in stored
        assert secret not in worker_log
    assert all(row.message is None for row in rows(app))
    with ext["sessionmaker"]() as session:
        assert session.scalar(select(User.id).where(User.email == NEW)) is not None


def test_init_deletes_the_messages_an_older_queue_kept_after_delivery(app: Flask) -> None:
    from leaderboard.jobqueue.broker import prepare_embedded

    settings = app.extensions["leaderboard"]["settings"]
    assert prepare_embedded(settings)
    queue_file = settings.instance_dir / "queue.sqlite3"
    with sqlite3.connect(queue_file) as conn:
        # As kombu's own transport left a delivered mail: taken, hidden, kept with its text.
        queue_id = conn.execute("SELECT id FROM kombu_queue WHERE name = 'mail'").fetchone()[0]
        for visible, payload in ((0, "old mail with /password/reset/SECRET"), (1, "waiting")):
            conn.execute(
                "INSERT INTO kombu_message (visible, timestamp, payload, version, queue_id)"
                " VALUES (?, CURRENT_TIMESTAMP, ?, 1, ?)",
                (visible, payload, queue_id),
            )
    assert prepare_embedded(settings)
    with sqlite3.connect(queue_file) as conn:
        kept = [p for (p,) in conn.execute("SELECT payload FROM kombu_message")]
    assert kept == ["waiting"]


def test_the_command_line_sends_at_once_and_leaves_an_undelivered_mail_to_the_workers(
    make_app: AppFactory, server: MailServer
) -> None:
    app = make_app(**mailing(server))
    sent = app.test_cli_runner().invoke(args=["leaderboard", "invite", "erin@example.org"])
    assert sent.exit_code == 0, sent.output
    assert len(server.inbox.wait_for("erin@example.org")) == 1
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    down = make_app(mail_url=f"smtp://127.0.0.1:{closed}", base_url=BASE)
    result = down.test_cli_runner().invoke(args=["leaderboard", "invite", NEW])
    assert result.exit_code == 1
    assert "the mail stays in the outbox: a worker tries again later" in result.output
    [row] = rows(down)
    assert (row.kind, row.recipient, row.status, row.attempts) == (
        "invitation",
        NEW,
        MailStatus.QUEUED,
        1,
    )
    assert row.message is not None and row.last_error
    assert [r.status for r in rows(app)] == [MailStatus.SENT]


def test_a_database_error_logged_with_its_traceback_names_no_mail(app: Flask) -> None:
    outbox_id = put_mail(app)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.add(
            OutboxMail(
                id=outbox_id,  # taken: the insert fails
                kind="reset",
                recipient="to@example.org",
                message="a mail with /password/reset/SECRET",
                created_at=utcnow(),
            )
        )
        with pytest.raises(IntegrityError, match="(?i)unique") as caught:
            session.flush()
    assert "SECRET" not in str(caught.value)


def test_an_unexpected_send_error_is_retried_and_keeps_only_its_kind(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(transport: mail.Transport, message: EmailMessage) -> None:
        raise RuntimeError(f"cannot send {message.get_content()}")

    monkeypatch.setattr(mail, "send", broken)
    outbox_id = put_mail(app)
    done = deliver(app, outbox_id)
    assert done.status == MailStatus.QUEUED and done.retry_in is not None
    [row] = rows(app)
    assert (row.status, row.attempts, row.last_error) == (MailStatus.QUEUED, 1, "RuntimeError")
