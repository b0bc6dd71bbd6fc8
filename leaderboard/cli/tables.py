"""Tables for the overview paper: the ranking table and the listing of runs."""

from __future__ import annotations

import click

from leaderboard.cli import common
from leaderboard.cli.common import set_option, with_appcontext
from leaderboard.services.common.errors import DomainError, NotFound
from leaderboard.tables import exports

#: The listing formats, spelled out so that option parsing loads no service.
LISTING_FORMAT_NAMES = ("csv", "json", "latex", "md")
FORMATS = {
    "json": exports.to_json,
    "csv": exports.to_csv,
    "md": exports.to_markdown,
    "latex": exports.to_latex,
}


@click.command("table")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="md", show_default=True
)
@click.option(
    "--official", is_flag=True, help="Print the frozen official table, exactly as frozen."
)
@click.option(
    "--version",
    type=int,
    help="With --official: print this frozen version (default: the newest, the official one).",
)
@click.option(
    "--part",
    type=click.Choice(["public", "private", "all"]),
    help="A split set's live table on this part (default: public until the private part is "
    "released, then the official part).",
)
@with_appcontext
def table_cmd(
    task: str,
    subtask: str,
    set_slug: str | None,
    fmt: str,
    official: bool,
    version: int | None,
    part: str | None,
) -> None:
    """Print the ranking table: live (late and corrected runs marked), or the frozen official one."""
    from leaderboard.services.tasks.catalog import resolve

    if version is not None and not official:
        common.fail("--version names a frozen version: it goes with --official.")
    if part is not None and official:
        common.fail("--part chooses a live table's part: the official table has its own.")

    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            if official:
                # Imported here: the freeze brings the analysis stack the live table needs not.
                from leaderboard.services.freeze.core import frozen_of, frozen_version

                snapshot = (
                    frozen_of(session, target)
                    if version is None
                    else frozen_version(session, target, version).snapshot
                )
                if snapshot is None:
                    raise NotFound(
                        f"{task} {subtask} ({target.eval_set.slug}) has no frozen official table yet."
                    )
                text = snapshot.renders["tex" if fmt == "latex" else fmt]
            else:
                from leaderboard.services.results.anonymity import ALL_NAMES
                from leaderboard.services.results.parts import chosen_part
                from leaderboard.services.results.tables import live_table

                # The command line is the organizers': every team by name and every part.
                chosen = chosen_part(session, target, part, organizer=True)
                table = live_table(session, common.store(), target, ALL_NAMES, part=chosen)
                text = FORMATS[fmt](table)
        except DomainError as exc:
            common.fail(exc.message)
        click.echo(text, nl=not text.endswith("\n"))


@click.command("runs")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option(
    "--format", "fmt", type=click.Choice(LISTING_FORMAT_NAMES), default="md", show_default=True
)
@with_appcontext
def runs_cmd(task: str, subtask: str, set_slug: str | None, fmt: str) -> None:
    """Print the per-team run listing with the systems' descriptions (for the paper)."""
    from leaderboard.services.results.listing import LISTING_FORMATS, run_listing
    from leaderboard.services.tasks.catalog import resolve

    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
        except DomainError as exc:
            common.fail(exc.message)
        click.echo(LISTING_FORMATS[fmt](run_listing(session, target)), nl=False)


COMMANDS = (table_cmd, runs_cmd)
