"""Analysis of a table's runs: paired significance and clusters."""

from __future__ import annotations

import json

import click

from leaderboard.cli import common
from leaderboard.cli.common import set_option, with_appcontext
from leaderboard.services.common.errors import DomainError
from leaderboard.states import JobPurpose

#: The significance methods and formats, spelled out so that option parsing loads no service.
METHOD_NAMES = ("randomization", "bootstrap", "t-test", "wilcoxon")
FORMAT_NAMES = ("json", "md", "csv", "latex")


@click.command("significance")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option("--measure", help="Measure key (default: the official measure).")
@click.option(
    "--method", type=click.Choice(METHOD_NAMES), default="randomization", show_default=True
)
@click.option("--samples", type=int, default=10_000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option(
    "--correction", type=click.Choice(("holm", "none")), default="holm", show_default=True
)
@click.option("--runs", type=click.Choice(("ranked", "all")), default="ranked", show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="json", show_default=True)
@with_appcontext
def significance_cmd(
    task: str,
    subtask: str,
    set_slug: str | None,
    measure: str | None,
    method: str,
    samples: int,
    seed: int,
    alpha: float,
    correction: str,
    runs: str,
    fmt: str,
) -> None:
    """Test every pair of the table's runs; store and print p-values, clusters and intervals."""
    from leaderboard.services.results.analyses import compute_now
    from leaderboard.services.results.significance import Request
    from leaderboard.services.results.tables import caption_of
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.tables import significance_exports as exports

    request = Request(measure, method, samples, seed, alpha, correction, runs)
    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            analysis = compute_now(session, common.store(), target, request, actor=common.actor())
            report = dict(analysis.report or {})
            # Tables name the task, subtask and set by their titles, not their slugs.
            titled = {**report, "caption": caption_of(target)}
        except DomainError as exc:
            common.fail(exc.message)
    renders = {
        "json": lambda r: json.dumps(r, ensure_ascii=False, indent=1) + "\n",
        "md": lambda _r: exports.to_markdown(titled),
        "csv": exports.to_csv,
        "latex": lambda _r: exports.to_latex(titled),
    }
    click.echo(renders[fmt](report), nl=False)


#: How the worker names each kind of job it reports.
JOB_NAMES = {
    JobPurpose.TABLE: "analysis",
    JobPurpose.FREEZE: "freeze",
    JobPurpose.VERIFY: "verification",
}


@click.command("worker")
@click.option("--once", is_flag=True, help="Compute what is queued now, then exit.")
@click.option("--poll", type=float, default=2.0, show_default=True, help="Seconds between looks.")
@with_appcontext
def worker_cmd(once: bool, poll: float) -> None:
    """Run the analyses, freezes and verifications organizers queue on the web, one at a time."""
    import time

    from leaderboard.services.results.analyses import claim_next, run_claimed, worker_name

    name = worker_name()
    while True:
        with common.session() as session:
            analysis = claim_next(session, worker=name, now=common.now())
            if analysis is not None:
                done = run_claimed(
                    session, common.store(), common.settings(), analysis, clock=common.now
                )
                click.echo(
                    f"{JOB_NAMES[done.purpose]} {done.id}: {done.status}"
                    + (f" ({done.error})" if done.error else "")
                )
                continue
        if once:
            return
        time.sleep(poll)


COMMANDS = (significance_cmd, worker_cmd)
