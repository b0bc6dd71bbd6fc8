"""Task data for participants: attach files to a subtask's phase, list and remove them."""

from __future__ import annotations

from pathlib import Path

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.services.common.errors import DomainError


@click.group("data")
def data_group() -> None:
    """Files participants download from a subtask's page: inputs, trial data, baseline code."""


@data_group.command("add")
@click.argument("task")
@click.argument("subtask")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--phase", "phase_name", required=True, help="Phase whose participants get it.")
@click.option("--title", default="", help="Title shown to participants (default: file name).")
@with_appcontext
def add_cmd(task: str, subtask: str, file: str, phase_name: str, title: str) -> None:
    """Attach a file to a phase; a file equal to a gold file of the task is refused."""
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.services.tasks.data import add_data_file
    from leaderboard.unit_of_work import unit_of

    path = Path(file)
    with common.session() as session:
        try:
            target = resolve(session, task, subtask)
            with path.open("rb") as stream, unit_of(session):
                data = add_data_file(
                    session,
                    common.store(),
                    target.subtask,
                    phase_name,
                    stream,
                    path.name,
                    title=title,
                    actor=common.actor(),
                    now=common.now(),
                )
        except OSError as exc:
            common.fail(f"{path}: cannot be read ({exc.strerror or exc})")
        except DomainError as exc:
            common.fail(exc.message)
        click.echo(
            f"Added data file {data.id} ({data.filename}, {data.size} bytes, SHA-256 "
            f"{data.sha256}) to phase {phase_name} of {task} {subtask}."
        )


@data_group.command("list")
@click.argument("task")
@click.argument("subtask")
@with_appcontext
def list_cmd(task: str, subtask: str) -> None:
    """List a subtask's data files: id, phase, file name, size and title."""
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.services.tasks.data import data_files

    with common.session() as session:
        try:
            target = resolve(session, task, subtask)
        except DomainError as exc:
            common.fail(exc.message)
        for f in data_files(session, target.subtask):
            click.echo(f"{f.id}\t{f.phase.name}\t{f.filename}\t{f.size}\t{f.title}")


@data_group.command("delete")
@click.argument("task")
@click.argument("subtask")
@click.argument("file_id", type=int)
@with_appcontext
def delete_cmd(task: str, subtask: str, file_id: int) -> None:
    """Remove a data file from its phase."""
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.services.tasks.data import delete_data_file
    from leaderboard.unit_of_work import unit_of

    with common.session() as session:
        try:
            target = resolve(session, task, subtask)
            with unit_of(session):
                gone = delete_data_file(
                    session, target.subtask, file_id, actor=common.actor(), now=common.now()
                )
        except DomainError as exc:
            common.fail(exc.message)
        click.echo(f"Deleted data file {file_id} ({gone.filename}) of {task} {subtask}.")


COMMANDS = (data_group,)
