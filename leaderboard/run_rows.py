"""Write an upload's run and score rows: the hot path's few statements, in one place.

An upload inserts one run row and its score rows in a deadline burst, so these skip the ORM's
flush: plain INSERTs whose rows then join the session as if a query had loaded them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import ColumnDefault, Table, bindparam, insert
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import MANYTOONE, Session, make_transient_to_detached
from sqlalchemy.orm.instrumentation import manager_of_class

from leaderboard.models import Run, Score, utcnow

_SCORES = cast(Table, Score.__table__)


def insert_as_loaded(session: Session, row: Any) -> None:
    """Insert a new row in one table statement and make it a row of the session, as if loaded.

    Cheaper than the ORM's flush of one object: columns left unset get their defaults here
    (so that reading them needs no query) and many-to-one objects given give their keys.
    """
    mapper = sa_inspect(type(row))
    values = row.__dict__
    for relation in mapper.relationships:
        if relation.direction is MANYTOONE and relation.key in values:
            target = values[relation.key]
            for local, remote in relation.local_remote_pairs:
                setattr(row, local.key, None if target is None else getattr(target, remote.key))
    table = cast(Table, mapper.local_table)
    params = {}
    for column in table.columns:
        if column.primary_key:
            continue
        if column.key not in values:
            default = column.default
            value = None
            if isinstance(default, ColumnDefault):
                value = default.arg(None) if default.is_callable else default.arg
            setattr(row, column.key, value)
        params[column.key] = values[column.key]
    statement = _INSERTS.get(table)
    if statement is None:
        statement = _INSERTS[table] = insert(table).returning(*table.primary_key.columns)
    row.id = session.execute(statement, params).scalar_one()
    make_transient_to_detached(row)
    session.add(row)


_INSERTS: dict[Table, Any] = {}
_SCORE_CLASS = manager_of_class(Score)


def add_scores(session: Session, run: Run, scores: Sequence[Mapping[str, Any]]) -> list[Score]:
    """Insert a run's score rows in one round trip; return them as rows of the session.

    The rows are built from the values just written (with the ids the INSERT returned), as a
    query would load them, so that the run's response reads its scores without another query.
    """
    if not scores:
        return []
    now = utcnow()
    rows = [{**values, "run_id": run.id, "current": True, "created_at": now} for values in scores]
    ids = insert_returning_ids(session, _SCORES, rows)
    out = []
    for ident, values in zip(ids, rows, strict=True):
        # Filled in as a load fills a row (no attribute events for values already stored).
        score = _SCORE_CLASS.new_instance()
        score.__dict__.update(values, id=ident)
        make_transient_to_detached(score)
        session.add(score)
        out.append(score)
    return out


#: Per (table, inserted columns): the INSERT's SQL text and each column's bind processor.
_MANY_INSERTS: dict[tuple[str, str], tuple[str, list[tuple[str, Any]]]] = {}


def _defaults(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Python-side defaults of the columns a row leaves out (primary key aside)."""
    out = {}
    for column in table.columns:
        default = column.default
        if column.primary_key or column.key in row or not isinstance(default, ColumnDefault):
            continue
        out[column.key] = default.arg(None) if default.is_callable else default.arg
    return out


def insert_returning_ids(session: Session, table: Table, rows: list[dict[str, Any]]) -> list[int]:
    """Insert rows (all with the same keys) in one round trip; return their ids in row order.

    On PostgreSQL the rows go through psycopg's ``executemany`` (one prepared statement of one
    row's parameters, pipelined) rather than one statement of every row's parameters, which is
    too long for psycopg's statement cache and is converted and planned afresh each time.
    Values pass through the columns' own bind processors, so rows are stored exactly as
    SQLAlchemy stores them.
    """
    bind = session.connection()
    dialect = bind.dialect
    # A column left out that has a default gets it here, as the ORM would give it: psycopg's
    # path below sends the compiled statement's parameters only, and that names such columns.
    defaults = _defaults(table, rows[0])
    if defaults:
        rows = [{**defaults, **row} for row in rows]
    keys = list(rows[0])
    if dialect.name != "postgresql" or dialect.driver != "psycopg":
        statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
        return list(session.execute(statement, rows).scalars().all())
    cache_key = (table.name, ",".join(keys))
    cached = _MANY_INSERTS.get(cache_key)
    if cached is None:
        statement = insert(table).values({k: bindparam(k) for k in keys}).returning(table.c.id)
        processors = [(k, table.c[k].type.bind_processor(dialect)) for k in keys]
        cached = _MANY_INSERTS[cache_key] = (
            str(statement.compile(dialect=dialect)),
            processors,
        )
    sql, processors = cached
    params = [
        {k: (row[k] if process is None else process(row[k])) for k, process in processors}
        for row in rows
    ]
    cursor = bind.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        # Listeners (statement counters, tracing) see it as SQLAlchemy's own executemany.
        bind.dispatch.before_cursor_execute(bind, cursor, sql, params, None, True)
        cursor.executemany(sql, params, returning=True)
        bind.dispatch.after_cursor_execute(bind, cursor, sql, params, None, True)
        ids = []
        while True:
            ids.append(cursor.fetchone()[0])
            if not cursor.nextset():
                break
    finally:
        cursor.close()
    return ids
