"""Hide, show or delete a hosted task."""

from __future__ import annotations

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.services.common.errors import DomainError


@click.command("task")
@click.argument("task")
@click.option("--hide", is_flag=True, help="Hide it from everyone but organizers.")
@click.option("--show", is_flag=True, help="Show a hidden task again.")
@click.option("--delete", is_flag=True, help="Delete a task that has no runs (for good).")
@with_appcontext
def task_cmd(task: str, hide: bool, show: bool, delete: bool) -> None:
    """Hide a task (404 for all but organizers, uploads refused, nothing deleted), show or delete it."""
    from leaderboard.services.tasks.deletion import delete_task
    from leaderboard.services.tasks.hiding import set_hidden
    from leaderboard.unit_of_work import unit_of

    chosen = [name for name, on in (("hide", hide), ("show", show), ("delete", delete)) if on]
    if len(chosen) != 1:
        common.fail("Say what to do with the task: one of --hide, --show or --delete.")
    action = chosen[0]
    with common.session() as session:
        try:
            if action == "delete":
                with unit_of(session):
                    delete_task(session, task, actor=common.actor(), now=common.now())
                click.echo(
                    f"Deleted task {task}: its subtasks, sets, phases and data file rows; the "
                    "audit log keeps its lines. `leaderboard init` will not install it again."
                )
                return
            hidden = action == "hide"
            with unit_of(session):
                changed = set_hidden(session, task, hidden, actor=common.actor(), now=common.now())
        except DomainError as exc:
            common.fail(exc.message)
    if not changed:
        click.echo(f"Task {task} was already {'hidden' if hidden else 'shown'}.")
    elif hidden:
        click.echo(
            f"Task {task} is hidden: its pages, tables and data answer 404 to everyone but "
            "organizers, and uploads are refused; nothing was deleted "
            f"(leaderboard task {task} --show shows it again)."
        )
    else:
        click.echo(f"Task {task} is shown again to everyone.")


COMMANDS = (task_cmd,)
