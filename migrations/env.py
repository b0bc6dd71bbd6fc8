"""Alembic environment: the models' metadata and the configured database URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from leaderboard.config import load_settings
from leaderboard.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or load_settings().database_url


def run_migrations_offline() -> None:
    """Emit SQL without a connection."""
    context.configure(
        url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Apply migrations over a connection."""
    engine = create_engine(_url())
    try:
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                render_as_batch=connection.dialect.name == "sqlite",
                compare_type=True,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()  # also when a migration refuses: no connection is left open


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
