"""Gold data: add or replace reference files, and re-score runs against them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from leaderboard.cli import common
from leaderboard.cli.common import GoldAddressCommand, with_appcontext
from leaderboard.services.common.errors import DomainError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from leaderboard.services.gold.core import RescoreReport
    from leaderboard.targets import Target


#: What ``--queue`` does, in both commands.
QUEUE_HELP = "Queue the re-scoring for `leaderboard worker` instead of doing it here."


@click.command("set-gold", cls=GoldAddressCommand)
@click.argument("task")
@click.argument("subtask")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--set", "set_slug", help="Evaluation set, or for multi-part sets the part (e.g. headlines)."
)
@click.option("--queue", "queued", is_flag=True, help=QUEUE_HELP)
@with_appcontext
def set_gold_cmd(
    task: str, subtask: str, file: str, set_slug: str | None, queued: bool, **address: str | None
) -> None:
    """Add or replace a gold file (or qrels variant) and re-score every run against it."""
    from leaderboard.services.gold.core import gold_target, store_gold
    from leaderboard.services.tasks.catalog import load_set, resolve
    from leaderboard.unit_of_work import unit_of

    path = Path(file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        common.fail(f"{path}: cannot be read ({exc.strerror or exc})")
    settings, store = common.settings(), common.store()
    with common.session() as session:
        try:
            target, role = gold_target(
                session,
                task,
                subtask,
                set_slug,
                {option: value for option, value in address.items() if value is not None},
            )
            with unit_of(session):
                gold_file = store_gold(
                    session, store, settings, target, role, data, path.name, actor=common.actor()
                )
            refreshed = resolve(session, task, subtask, target.eval_set.slug)
            gold = load_set(session, store, refreshed, settings.max_decompressed_bytes).gold
            click.echo(
                f"Stored {role} version {gold_file.version} of {task} {subtask} ({target.eval_set.slug}), SHA-256 {gold_file.sha256}."
            )
            for line in refreshed.family.describe_gold(gold, role):
                click.echo(f"    {line}")
            _rescore_or_queue(session, refreshed, queued, f"set-gold {role} v{gold_file.version}")
        except DomainError as exc:
            common.fail(exc.message)


def _rescore_or_queue(session: Session, target: Target, queued: bool, reason: str) -> None:
    """Re-score every run of the set here and report, or queue that for the workers."""
    from leaderboard.services.gold.core import rescore_set
    from leaderboard.services.jobs.analyses import request_job
    from leaderboard.states import JobPurpose
    from leaderboard.unit_of_work import unit_of

    if queued:
        with unit_of(session):
            job = request_job(session, target, JobPurpose.RESCORE, actor=common.actor())
        click.echo(f"Re-scoring queued (job {job.id}).")
        return
    with unit_of(session):
        report = rescore_set(
            session, common.store(), common.settings(), target, actor=common.actor(), reason=reason
        )
    _echo_rescore(report)


def _echo_rescore(report: RescoreReport) -> None:
    click.echo(f"Re-scored {report.rescored} run(s).")
    for run_id, messages in report.failed.items():
        click.echo(
            f"    run {run_id} could not be re-scored (its previous scores stay current): {' '.join(messages)}"
        )


@click.command("rescore")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: every set of the subtask).")
@click.option("--queue", "queued", is_flag=True, help=QUEUE_HELP)
@with_appcontext
def rescore_cmd(task: str, subtask: str, set_slug: str | None, queued: bool) -> None:
    """Re-score every run of the subtask against its current gold; old scores stay in history."""
    from leaderboard.services.tasks.catalog import resolve

    with common.session() as session:
        try:
            base = resolve(session, task, subtask, set_slug)
            slugs = [set_slug] if set_slug else [s.slug for s in base.subtask.eval_sets]
            for slug in slugs:
                target = resolve(session, task, subtask, slug)
                click.echo(f"{task} {subtask} ({slug}):")
                _rescore_or_queue(session, target, queued, "rescore")
        except DomainError as exc:
            common.fail(exc.message)


COMMANDS = (set_gold_cmd, rescore_cmd)
