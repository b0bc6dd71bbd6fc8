"""Insert a row unless its key exists, in one statement on SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session


def insert_missing(session: Session, model: Any, key: str, values: dict[str, Any]) -> None:
    """Insert ``values`` into ``model``'s table unless a row with the same ``key`` exists."""
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(insert(model).values(values).on_conflict_do_nothing(index_elements=[key]))
