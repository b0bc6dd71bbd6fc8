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
from leaderboard.storage import Store

# Flask, SQLAlchemy and the services are imported by the commands that use them: `score` needs
# none of them, and loading them would take longer than scoring a large run.
if TYPE_CHECKING:
    from sqlalchemy.orm import Session
    from sqlalchemy.orm import sessionmaker as sessionmaker_

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


def sessionmaker() -> sessionmaker_[Session]:
    """Return the application's session factory (for threads that need sessions of their own)."""
    return _ext()["sessionmaker"]


def store() -> Store:
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
    from leaderboard.services.common.errors import DomainError

    with session() as db:
        try:
            # The report is built inside the session: the rows it names expire at its end.
            report = change(db)
        except DomainError as exc:
            fail(exc.message)
    click.echo(report)


class FamilyOptionsCommand(click.Command):
    """A command with options the hosted families declare, placed after the option ``after``.

    The options are read from the families when the command parses its arguments or shows its
    help, so that starting the command line and its top-level help load no family. The
    callback gets one keyword per option.
    """

    def __init__(self, *args: Any, after: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._own = list(self.params)
        self._after = after

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Return the command's parameters with the families' options in place."""
        at = [p.name for p in self._own].index(self._after) + 1
        self.params = [*self._own[:at], *self.family_options(), *self._own[at:]]
        return super().get_params(ctx)

    def family_options(self) -> list[click.Parameter]:
        """Return the options the families add (none here)."""
        return []


class ImportModesCommand(FamilyOptionsCommand):
    """A command with one flag per import mode the families declare (``--<mode>``).

    The flags follow ``--lenient``; their help is each mode's ``help``, or its ``score_help``
    when ``mode_help`` says so.
    """

    def __init__(self, *args: Any, mode_help: str = "help", **kwargs: Any) -> None:
        super().__init__(*args, after="lenient", **kwargs)
        self._mode_help = mode_help

    def family_options(self) -> list[click.Parameter]:
        """Return a flag per distinct import mode of the hosted families."""
        from leaderboard.tasks.families import all_families

        flags: dict[str, click.Parameter] = {}
        for family in all_families():
            for mode in family.import_options:
                text = (mode.score_help if self._mode_help == "score_help" else "") or mode.help
                flags.setdefault(
                    mode.name, click.Option([f"--{mode.name}"], is_flag=True, help=text)
                )
        return list(flags.values())


class GoldAddressCommand(FamilyOptionsCommand):
    """A command with the options naming gold slots the families declare (``--variant``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, after="set_slug", **kwargs)

    def family_options(self) -> list[click.Parameter]:
        """Return an option per distinct gold address option of the hosted families."""
        from leaderboard.tasks.families import all_families

        found: dict[str, click.Parameter] = {}
        for family in all_families():
            for option in family.gold_address_options:
                found.setdefault(option.name, click.Option([f"--{option.name}"], help=option.help))
        return list(found.values())


def chosen_options(modes: dict[str, bool]) -> dict[str, bool]:
    """Return the import options of a command's mode flags, as the families read them."""
    return {name: bool(on) for name, on in modes.items()}
