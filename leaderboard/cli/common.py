"""What every database command shares: its connections, a session, the store, failing."""

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


#: Where a command run by the console script keeps the connections it opened (``ctx.meta``).
_RESOURCES = "leaderboard.resources"


def with_appcontext(f: _Command) -> _Command:
    """Run the command with the process's connections: the Flask app's, or opened here.

    Run by ``flask leaderboard`` or a test's Flask runner, the command gets the application's
    context (Flask's decorator, loaded then). Run by the console script, it opens the database
    and the store the settings name, with no Flask at all: Flask alone would take longer to
    import than most commands take to run.
    """

    @click.pass_context
    def decorator(ctx: click.Context, /, *args: Any, **kwargs: Any) -> Any:
        if _run_by_flask(ctx):
            from flask.cli import with_appcontext as flask_with_appcontext

            return ctx.invoke(flask_with_appcontext(f), *args, **kwargs)
        from leaderboard.config import load_settings
        from leaderboard.resources import build

        resources = build(load_settings())
        ctx.call_on_close(resources.engine.dispose)
        ctx.meta[_RESOURCES] = resources.as_extension()
        return ctx.invoke(f, *args, **kwargs)

    return cast(_Command, update_wrapper(decorator, f))


def _run_by_flask(ctx: click.Context) -> bool:
    """Return whether a Flask application runs this command (or holds the context)."""
    flask = sys.modules.get("flask")
    if flask is None:  # nothing imported Flask, so no application of it runs this command
        return False
    from flask.cli import ScriptInfo

    return bool(flask.has_app_context()) or ctx.find_object(ScriptInfo) is not None


def actor() -> str:
    """Return the audit log's name of the person at the terminal."""
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # getpass fails without a login name (e.g. in containers)
        return "cli"


def _ext() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    if ctx is not None and _RESOURCES in ctx.meta:
        return cast(dict[str, Any], ctx.meta[_RESOURCES])
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
    """Run ``change`` in a unit of work and print its report; a refusal is an error (exit 1)."""
    from leaderboard.services.common.errors import DomainError
    from leaderboard.unit_of_work import unit_of

    with session() as db:
        try:
            # The report is built inside the session: the rows it names expire at its end.
            with unit_of(db):
                report = change(db)
        except DomainError as exc:
            fail(exc.message)
    click.echo(report)


def change_command(
    name: str,
    *params: Callable[[Callable[..., Any]], Callable[..., Any]],
    run: Callable[[Callable[[Session], str]], None] = report_change,
) -> Callable[[Callable[..., str]], click.Command]:
    """Make ``change(session, **values)`` the command ``name`` that ``run`` runs and reports.

    ``params`` are click's argument and option decorators, in the order the command lists
    them; ``run`` opens the session, turns refusals into errors and prints the report.
    """

    def decorate(change: Callable[..., str]) -> click.Command:
        def command(**values: Any) -> None:
            run(lambda s: change(s, **values))

        command.__doc__ = change.__doc__
        wrapped = with_appcontext(command)
        for param in reversed(params):
            wrapped = param(wrapped)
        return click.command(name)(wrapped)

    return decorate


class FamilyOptionsCommand(click.Command):
    """A command with options the hosted families declare, placed after the option ``after``.

    The options are read from the families when the command parses a command line that may
    use one (it has an option the command itself lacks) or shows its help, so that starting
    the command line, its top-level help and a command using none of them load no family
    but the one its task needs. The callback gets one keyword per option it was given.
    """

    def __init__(self, *args: Any, after: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._own = list(self.params)
        self._after = after
        self._own_names = {
            name
            for p in self._own
            if isinstance(p, click.Option)
            for name in (*p.opts, *p.secondary_opts)
        }
        self._with_families = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the command line, with the families' options if it may use any."""
        self._with_families = ctx.resilient_parsing or any(
            arg.startswith("--") and arg != "--" and arg.split("=", 1)[0] not in self._own_names
            for arg in args
        )
        return super().parse_args(ctx, args)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Return the command's parameters with the families' options in place."""
        at = [p.name for p in self._own].index(self._after) + 1
        added = self.family_options() if self._with_families else []
        self.params = [*self._own[:at], *added, *self._own[at:]]
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
