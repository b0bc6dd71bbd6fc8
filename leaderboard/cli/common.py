"""What every database command shares: the application context, a session, the store, failing."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import update_wrapper
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from leaderboard.config import Settings
from leaderboard.storage import FileStore

# Flask, SQLAlchemy and the services are imported by the commands that use them: `score` needs
# none of them, and loading them would take longer than scoring a large run.
if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_Command = TypeVar("_Command", bound=Callable[..., Any])


def with_appcontext(f: _Command) -> _Command:
    """Run the command inside the application context (Flask's decorator, loaded when run)."""

    @click.pass_context
    def decorator(ctx: click.Context, /, *args: Any, **kwargs: Any) -> Any:
        from flask.cli import with_appcontext as flask_with_appcontext

        return ctx.invoke(flask_with_appcontext(f), *args, **kwargs)

    return cast(_Command, update_wrapper(decorator, f))


def actor() -> str:
    """Return the audit log's name of the person at the terminal."""
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # getpass fails without a login name (e.g. in containers)
        return "cli"


def _ext() -> dict[str, Any]:
    from flask import current_app

    return current_app.extensions["leaderboard"]


@contextmanager
def session() -> Iterator[Session]:
    """Yield a database session that is rolled back and closed however the command ends."""
    s: Session = _ext()["sessionmaker"]()
    try:
        yield s
    finally:
        s.rollback()
        s.close()


def store() -> FileStore:
    """Return the application's file store."""
    return _ext()["store"]


def settings() -> Settings:
    """Return the application's settings."""
    return _ext()["settings"]


def now() -> datetime:
    """Return the application's clock's time."""
    return _ext()["clock"].now()


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: message`` on stderr and exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


#: The option every command that reads one evaluation set takes.
set_option = click.option(
    "--set", "set_slug", help="Evaluation set (default: the subtask's default set)."
)


def report_change(change: Callable[[Session], str]) -> None:
    """Run ``change`` in a session and print its report; a refusal is an error (exit 1)."""
    from leaderboard.services.errors import DomainError

    with session() as db:
        try:
            # The report is built inside the session: the rows it names expire at its end.
            report = change(db)
        except DomainError as exc:
            fail(exc.message)
    click.echo(report)
