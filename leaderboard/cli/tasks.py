"""Tasks: the database with the bundled presets, and new tasks from definition files."""

from __future__ import annotations

from pathlib import Path

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.cli.references import (
    Refused,
    check_reference_files,
    fail_every,
    read_definition,
)


@click.command("init")
@with_appcontext
def init_cmd() -> None:
    """Create or upgrade the database and load the bundled task presets (safe to run twice).

    The instance folder is made its owner's only (0700, its files 0600), an older install's too.
    """
    from leaderboard.migrate import MigrationRefused, upgrade
    from leaderboard.private_files import make_private_dir, tighten
    from leaderboard.services.tasks.catalog import install_presets
    from leaderboard.storage import S3Store, StorageError
    from leaderboard.unit_of_work import unit_of

    settings = common.settings()
    make_private_dir(settings.instance_dir)
    store = common.store()
    if isinstance(store, S3Store):
        try:
            if store.ensure_bucket():
                click.echo(f"Created bucket {store.bucket}.")
        except StorageError as exc:
            common.fail(str(exc))
    else:
        settings.storage_dir.mkdir(parents=True, exist_ok=True)
    try:
        upgrade(settings.database_url)
    except MigrationRefused as exc:
        common.fail(str(exc))
    with common.session() as session, unit_of(session):
        slugs = install_presets(session, common.store(), actor=common.actor())
    from leaderboard.jobqueue.broker import prepare_embedded

    prepare_embedded(settings)
    corrected = tighten(settings.instance_dir)
    if corrected:
        click.echo(
            f"Instance folder {settings.instance_dir} made private (0700, files 0600): "
            f"{len(corrected)} path(s) corrected."
        )
    click.echo(f"Database ready; tasks: {', '.join(slugs)}")


@click.command("add-task")
@click.argument("definition", type=click.Path(exists=True, dir_okay=False))
@with_appcontext
def add_task_cmd(definition: str) -> None:
    """Host a new task (or update one) from a task definition file and its gold files."""
    from leaderboard.services.campaign.phases import closed_notice, closed_subtasks
    from leaderboard.services.tasks.catalog import install_definition
    from leaderboard.unit_of_work import unit_of

    limit = common.settings().max_decompressed_bytes
    try:
        d = read_definition(Path(definition))
        # Every reference file is parsed before anything is stored: a bad line refuses the task.
        check_reference_files(d, limit)
    except Refused as exc:
        fail_every(str(exc), Path(definition), limit)
    with common.session() as session:
        with unit_of(session):
            task = install_definition(session, common.store(), d, actor=common.actor())
        closed = [st.slug for st in closed_subtasks(session, task, common.now())]
    subtasks = ", ".join(f"{s.slug} ({', '.join(x.slug for x in s.sets)})" for s in d.subtasks)
    click.echo(f"Task {d.slug} is ready: subtasks {subtasks}.")
    # A new subtask takes no participant upload until a phase opens it: say so.
    for slug in closed:
        click.echo(closed_notice(d.slug, slug) + ".")


COMMANDS = (init_cmd, add_task_cmd)
