"""The ``leaderboard`` command line (also ``flask leaderboard`` through app.py and wsgi.py).

One module per job, imported when one of its commands runs; ``common`` holds what the database
commands share. Nothing here imports Flask, SQLAlchemy or the services at start-up: ``score``
needs none of them, and the console script's database commands need no Flask at all.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from flask import Flask

#: The module of each command, by name. A command loads its own module alone: `table` needs
#: neither the offline scorer's definitions nor the API client, and every module it skips is
#: start-up time saved. Help and completion, which list them all, load them all.
COMMAND_MODULES = {
    "create-team": "accounts",
    "create-user": "accounts",
    "set-password": "accounts",
    "disable-user": "accounts",
    "enable-user": "accounts",
    "token": "accounts",
    "settings": "accounts",
    "significance": "analysis",
    "meta-eval": "analysis",
    "worker": "analysis",
    "phase": "campaign",
    "freeze": "campaign",
    "verify": "campaign",
    "data": "data",
    "set-gold": "gold",
    "rescore": "gold",
    "invite": "invitations",
    "resend-verification": "invitations",
    "score": "offline",
    "backup": "operations",
    "remote": "remote",
    "import-runs": "runs",
    "add-baselines": "runs",
    "storage": "storage",
    "table": "tables",
    "runs": "tables",
    "init": "tasks",
    "add-task": "tasks",
    "task": "task_state",
    "teams": "teams",
    "rename-team": "teams",
    "merge-teams": "teams",
    "withdraw-team": "teams",
    "approve-team": "teams",
    "add-member": "teams",
}


def load_command(name: str) -> click.Command:
    """Import the module of the command ``name`` and return the command."""
    module = importlib.import_module(f"leaderboard.cli.{COMMAND_MODULES[name]}")
    commands: Sequence[click.Command] = module.COMMANDS
    return next(c for c in commands if c.name == name)


class LazyGroup(click.Group):
    """A group whose commands are imported when one is run or listed, not when the group is."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return every command's name, sorted as click lists them."""
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Return the command ``cmd_name``, importing its module on first use; None if unknown."""
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self.add_command(load_command(cmd_name))
        return self.commands.get(cmd_name)


@click.group("leaderboard", cls=LazyGroup)
def leaderboard_group() -> None:
    """Run the shared-task leaderboard: tasks, accounts, runs, baselines and tables."""


def register(app: Flask) -> Flask:
    """Add ``flask leaderboard …`` to an application's command line; return the application."""
    app.cli.add_command(leaderboard_group)
    return app


def _keep_freed_memory() -> None:
    """Let glibc's malloc keep and reuse freed memory in this short-lived process.

    Scoring a large run allocates and frees many arrays of tens of MB; by default each is
    mapped afresh and returned to the system, and faulting its pages in again costs more
    system time than the arithmetic on them. Elsewhere (another libc) this does nothing.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-2, 64 << 20)  # M_TOP_PAD: grow and shrink the heap 64 MB at a time
    except (OSError, AttributeError):
        pass


#: The commands whose numpy work is large matrix products (significance samples), which
#: OpenBLAS's threads may speed up; the worker is long-lived and starts them once.
BLAS_THREADED = frozenset({"significance", "worker"})


def main() -> None:
    """Entry point of the ``leaderboard`` console script."""
    if sys.argv[1:2] == ["score"]:
        _keep_freed_memory()
    if not BLAS_THREADED.intersection(sys.argv[1:2]):
        # Starting OpenBLAS's thread pool when numpy loads costs about 0.1 s of CPU, more than
        # a one-shot command's vector arithmetic gains from it (an explicit setting wins).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # No Flask application is built: a database command opens the database and the store
    # itself (common.with_resources), and help, score and remote open nothing.
    leaderboard_group.main(prog_name="leaderboard")
