"""The embedded broker: kombu's SQLAlchemy transport, keeping no message once it is taken.

Kombu's own transport marks a taken message invisible and keeps it for ever, so the queue file
grew with every task ever sent. Here a taken message is deleted in the transaction that takes
it; one taken but not acknowledged is still given back, as kombu always did, by putting it
again (its unacknowledged copy is held by the worker, not in the table).
"""

from __future__ import annotations

from queue import Empty
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, sqlalchemy
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads
from sqlalchemy import text

#: The scheme prefix that selects this transport (``sqla+`` selects kombu's own).
SCHEME = "lbsqla"
#: Seconds between polls of the table when it is empty.
POLL_SECONDS = 0.2


class Channel(sqlalchemy.Channel):
    """A channel that deletes each message it takes."""

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        obj = self._get_or_create(queue)
        session = self.session
        if session.bind.name == "sqlite":
            session.execute(text("BEGIN IMMEDIATE TRANSACTION"))
        try:
            message = (
                session.query(self.message_cls)
                .with_for_update()
                .filter(self.message_cls.queue_id == obj.id)
                .filter(self.message_cls.visible != False)  # noqa: E712 (a column, not a bool)
                .order_by(self.message_cls.sent_at, self.message_cls.id)
                .limit(1)
                .first()
            )
            if message is None:
                raise Empty()
            payload = loads(bytes_to_str(message.payload))
            session.delete(message)
            return payload
        finally:
            session.commit()


class Transport(sqlalchemy.Transport):
    """Kombu's SQLAlchemy transport with the deleting channel, polled five times a second."""

    Channel = Channel
    # Kombu's default of a second between polls takes one message a second from a backlog, so
    # a chart a reader waits for would wait behind it.
    polling_interval = POLL_SECONDS


def register() -> None:
    """Make ``lbsqla+<database URL>`` name this transport."""
    TRANSPORT_ALIASES[SCHEME] = f"{__name__}:Transport"


def broker_url(url: str) -> str:
    """Return a ``sqla+`` broker URL as one of this transport (others unchanged)."""
    return f"{SCHEME}+{url.removeprefix('sqla+')}" if url.startswith("sqla+") else url


def purge_taken(database_url: str) -> int:
    """Delete the messages kombu's own transport kept after taking them; return how many.

    For queue files written before this transport (a running worker holds none of them: it
    holds its unacknowledged messages in memory).
    """
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.pool import NullPool

    engine = create_engine(database_url, poolclass=NullPool)
    try:
        if not inspect(engine).has_table("kombu_message"):
            return 0
        with engine.begin() as conn:
            done = conn.execute(
                text("DELETE FROM kombu_message WHERE visible = :hidden"), {"hidden": False}
            )
            return int(done.rowcount or 0)
    finally:
        engine.dispose()
