"""The ``leaderboard`` command line (also ``flask leaderboard`` through app.py and wsgi.py).

One module per job; ``common`` holds what the database commands share. Nothing here imports
Flask, SQLAlchemy or the services at start-up: ``score`` needs none of them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from leaderboard.cli import (
    accounts,
    analysis,
    campaign,
    data,
    gold,
    invitations,
    offline,
    operations,
    remote,
    runs,
    storage,
    tables,
    tasks,
    teams,
)

if TYPE_CHECKING:
    from flask import Flask


@click.group("leaderboard")
def leaderboard_group() -> None:
    """Run the shared-task leaderboard: tasks, accounts, runs, baselines and tables."""


for _module in (
    accounts,
    analysis,
    campaign,
    data,
    gold,
    invitations,
    operations,
    runs,
    storage,
    tables,
    tasks,
    teams,
):
    for _command in _module.COMMANDS:
        leaderboard_group.add_command(_command)
leaderboard_group.add_command(offline.score_cmd)
leaderboard_group.add_command(remote.remote_group)


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


def main() -> None:
    """Entry point of the ``leaderboard`` console script."""
    args = sys.argv[1:]
    if args[:1] in (["score"], ["remote"]) or not args or "--help" in args:
        # Offline scoring, the API client and help need no database: skip building the application.
        _keep_freed_memory()
        leaderboard_group.main(prog_name="leaderboard")
        return
    from leaderboard.web import create_bare_app

    app = create_bare_app()
    with app.app_context():
        leaderboard_group.main(prog_name="leaderboard")
