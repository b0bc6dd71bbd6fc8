"""Run Alembic migrations programmatically (the only way the schema is created or changed)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from leaderboard.config import REPO_ROOT


class MigrationRefused(Exception):
    """A migration found data it cannot carry over; the message names it and what to do."""


def alembic_config(database_url: str) -> Config:
    """Return an Alembic configuration for this project and database."""
    cfg = Config(str(REPO_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def upgrade(database_url: str) -> None:
    """Upgrade the database to the newest revision."""
    command.upgrade(alembic_config(database_url), "head")
