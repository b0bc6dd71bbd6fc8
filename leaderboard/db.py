"""Create engines and sessions; SQLite and PostgreSQL behave the same through this module."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.util import identity_key

from leaderboard.private_files import create_private_file, sqlite_file
from leaderboard.unit_of_work import unit_of, watch


def make_engine(url: str) -> Engine:
    """Return an engine with connection checks on checkout and SQLite tuned for concurrent writers.

    A database error's message names no parameter: they hold mails (links), hashes, addresses,
    and such a message is logged with the error's traceback.
    """
    if url.startswith("sqlite"):
        path = sqlite_file(url)
        if path is not None:
            # Created by SQLite, it would take the umask's mode (its WAL files copy the file's).
            create_private_file(path)
        engine = create_engine(
            url, pool_pre_ping=True, hide_parameters=True, connect_args={"timeout": 30}
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            # WAL lets readers proceed during an upload; foreign keys are off by default in SQLite.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(
        url, pool_pre_ping=True, hide_parameters=True, pool_size=5, max_overflow=10
    )


def make_sessionmaker(engine: Engine, info: dict[str, Any] | None = None) -> sessionmaker[Session]:
    """Return the session factory used by the web app and the CLI; ``info`` goes to each session."""
    factory = sessionmaker(bind=engine, expire_on_commit=False, info=info or {})
    watch(factory)
    return factory


@contextmanager
def transaction(session: Session) -> Iterator[Session]:
    """Commit the block's work when it ends; roll all of it back if it raises, and re-raise."""
    with unit_of(session):
        yield session


def insert_missing(
    session: Session, model: Any, key: str | Sequence[str], values: dict[str, Any]
) -> bool:
    """Insert ``values`` unless a row with the same ``key`` exists; return whether it went in.

    One statement on SQLite and PostgreSQL alike: a concurrent insert of the same key is no
    error (PostgreSQL waits for its transaction, then inserts nothing if it committed).
    RETURNING tells whether the row went in: psycopg reports no row count for such an INSERT.
    """
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    columns = [key] if isinstance(key, str) else list(key)
    statement = (
        insert(model)
        .values(values)
        .on_conflict_do_nothing(index_elements=columns)
        .returning(getattr(model, columns[0]))
    )
    return session.execute(statement).first() is not None


Row = TypeVar("Row")

#: Ids are 32-bit integer keys; a larger one from a URL names no row (and SQLite cannot even
#: compare one past 2**63).
_MAX_ID = 2**31


def in_key_range(ident: int) -> bool:
    """Return whether a row can have this id."""
    return 0 < ident < _MAX_ID


def get_row(
    session: Session, model: type[Row], ident: int, *, populate_existing: bool = False
) -> Row | None:
    """Return the row with this primary key, or None, also for ids no row can have."""
    if not in_key_range(ident):
        return None
    return session.get(model, ident, populate_existing=populate_existing)


def expire_loaded(
    session: Session, model: type[Any], ident: int, attributes: Iterable[str] | None = None
) -> None:
    """Make a row the session already holds reload, after a table-level statement changed it."""
    loaded = session.identity_map.get(identity_key(model, ident))
    if loaded is not None:
        session.expire(loaded, attributes)
