"""Operating the file store: copy every stored file to another store."""

from __future__ import annotations

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.storage import StorageError, copy_store, open_store


@click.group("storage")
def storage_group() -> None:
    """Look after the stored files (run files, gold versions, task data, snapshots)."""


@storage_group.command("migrate")
@click.option("--to", "to_url", required=True, help="The other store: file:///path or s3://…")
@with_appcontext
def migrate_cmd(to_url: str) -> None:
    """Copy every stored file to another store, checking each hash; nothing is deleted."""
    settings = common.settings()
    source = common.store()
    try:
        target = open_store(
            to_url, default_dir=settings.storage_dir, endpoint_url=settings.s3_endpoint_url
        )
        report = copy_store(source, target)
    except (ValueError, StorageError) as exc:
        common.fail(str(exc))
    for key in report.copied:
        click.echo(f"copied {key}")
    click.echo(
        f"Copied {len(report.copied)} file(s) ({report.bytes_copied / 1e6:.1f} MB) from "
        f"{source.url} to {target.url}; {len(report.skipped)} already there."
    )
    if report.corrupt:
        for where in report.corrupt:
            click.echo(f"Error: hash mismatch: {where} does not hash to its key.", err=True)
        common.fail(f"{len(report.corrupt)} file(s) do not match their hash; not copied.")


COMMANDS = (storage_group,)
