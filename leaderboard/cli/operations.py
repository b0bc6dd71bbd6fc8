"""Operating the server: backups."""

from __future__ import annotations

from pathlib import Path

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.services.common.errors import DomainError


@click.command("backup")
@click.argument("dest", type=click.Path(file_okay=False))
@with_appcontext
def backup_cmd(dest: str) -> None:
    """Copy the database (SQLite online backup or pg_dump) and the stored files into DEST."""
    from leaderboard.services.common.backup import backup

    with common.session() as session:
        try:
            report = backup(
                session, common.store(), common.settings().database_url, Path(dest), common.now()
            )
        except DomainError as exc:
            common.fail(exc.message)
    click.echo(
        f"Backed up the database to {report.database_file} and {report.files_copied} stored files "
        f"({report.bytes_copied / 1e6:.1f} MB) to {dest}."
    )


COMMANDS = (backup_cmd,)
