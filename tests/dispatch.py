"""The queue of in-process test apps: mail goes out on a thread, job rows wait for the CLI.

The real worker is Celery (tests/web/test_queue.py and the several-host test run it on real
brokers); an app under Flask's test client has none, so its dispatcher delivers each queued
outbox mail through the outbox's own delivery on a thread, as a worker would, and leaves the
job rows to ``leaderboard worker --once``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

from flask import Flask

from leaderboard.config import Settings
from leaderboard.db import make_engine, make_sessionmaker
from leaderboard.jobqueue import SEND_MAIL
from leaderboard.models import OutboxMail, utcnow
from leaderboard.services.common import mail, outbox
from leaderboard.states import MailStatus
from leaderboard.worker.jobs import deliver_mail

_threads: list[threading.Thread] = []
_lock = threading.Lock()


class LocalDispatcher:
    """Record every task sent; deliver mail on a thread through the worker's task body."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sent: list[tuple[str, tuple[Any, ...]]] = []
        #: The text of each mail whose id was sent, read from the outbox before its delivery.
        self.mails: list[str] = []
        # Its own sessions, as a worker has (no engine connects before its first mail).
        self._engine = make_engine(settings.database_url)
        self._sessions = make_sessionmaker(self._engine)

    def close(self) -> None:
        """Close the connections of the deliveries (once every mail is delivered)."""
        flush()
        self._engine.dispose()

    def send(self, task: str, args: tuple[Any, ...]) -> None:
        """Record the task; start delivering it if it is a mail."""
        self.sent.append((task, args))
        if task == SEND_MAIL:
            with self._sessions() as session:
                row = session.get(OutboxMail, args[0])
                if row is not None and row.message is not None:
                    self.mails.append(row.message)
            thread = threading.Thread(target=self._deliver, args=args, name="mail")
            with _lock:
                _threads[:] = [t for t in _threads if t.is_alive()]
                _threads.append(thread)
            thread.start()

    def _deliver(self, outbox_id: int) -> None:
        transport = mail.Transport.parse(self.settings.mail_url)
        with self._sessions() as session:
            done = deliver_mail(session, outbox_id, transport, utcnow())
            if done.status == MailStatus.QUEUED:
                # A worker would retry; a test reads the failure in the log.
                reason = outbox.last_error(session, outbox_id)
                mail.log.error("mail %s not sent: %s", outbox_id, reason)


def flush(timeout: float = 30.0) -> None:
    """Wait until every mail queued so far has been delivered (or failed)."""
    with _lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(timeout)


def use_broker(app: Flask, queue_url: str = "") -> None:
    """Make a test app hand its work to a real broker (``""``: the embedded one), as served."""
    from leaderboard.jobqueue import DISPATCHER
    from leaderboard.jobqueue.broker import CeleryDispatcher

    ext = app.extensions["leaderboard"]
    dispatcher = CeleryDispatcher(replace(ext["settings"], queue_url=queue_url))
    ext["dispatcher"] = dispatcher
    ext["sessionmaker"].kw["info"][DISPATCHER] = dispatcher


def summarize_changed(app: Flask) -> int:
    """Summarize every set whose scores changed, as a worker does unasked; return how many."""
    from leaderboard.services.results.query_summaries import stale_sets
    from leaderboard.worker.jobs import summarize_set

    ext = app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        changed = stale_sets(session)
        for set_id, _revision in changed:
            summarize_set(session, ext["store"], set_id)
    return len(changed)


def draw_asked(app: Flask) -> int:
    """Draw every chart a page asked for and found not drawn, as a worker would; return how many."""
    from leaderboard.jobqueue import DRAW_CHART
    from leaderboard.services.results.chart_files import draw_chart
    from leaderboard.unit_of_work import unit_of

    ext = app.extensions["leaderboard"]
    dispatcher = ext["dispatcher"]
    # Through JSON, as the broker carries them: the worker must key what the page keyed.
    asked = [json.loads(json.dumps(a)) for t, a in dispatcher.sent if t == DRAW_CHART]
    dispatcher.sent[:] = [(t, a) for t, a in dispatcher.sent if t != DRAW_CHART]
    with ext["sessionmaker"]() as session:
        for kind, fmt, data in asked:
            with unit_of(session):
                draw_chart(session, ext["store"], kind, fmt, data)
    return len(asked)


def work_off(app: Flask) -> int:
    """Do in this process what a worker does unasked or when sent: summaries, then charts."""
    return summarize_changed(app) + draw_asked(app)
