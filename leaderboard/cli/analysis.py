"""Analysis of a table's runs: paired significance and clusters, meta-evaluation of the set."""

from __future__ import annotations

import json

import click

from leaderboard.cli import common
from leaderboard.cli.common import set_option, with_appcontext
from leaderboard.services.common.errors import DomainError

#: The significance methods and formats, spelled out so that option parsing loads no service.
METHOD_NAMES = ("randomization", "bootstrap", "t-test", "wilcoxon")
FORMAT_NAMES = ("json", "md", "csv", "latex")
#: The most half-splits meta-eval takes (the service's MAX_SPLITS), spelled out likewise.
MAX_SPLITS = 100_000


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
    from leaderboard.services.jobs.analyses import compute_now
    from leaderboard.services.results.chart_data import report_charts
    from leaderboard.services.results.query_summaries import is_stale
    from leaderboard.services.results.significance import Request
    from leaderboard.services.results.tables import caption_of
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.tables import significance_exports as exports
    from leaderboard.unit_of_work import unit_of
    from leaderboard.worker.jobs import draw_all, summarize_set

    request = Request(measure, method, samples, seed, alpha, correction, runs)
    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            with unit_of(session):
                analysis = compute_now(
                    session, common.store(), target, request, actor=common.actor()
                )
            report = dict(analysis.report or {})
            # Computed at once, so drawn at once: pages only read stored charts.
            draw_all(
                session,
                common.store(),
                report_charts(session, common.store(), target, report, live=True),
            )
            if is_stale(session, target.eval_set):
                summarize_set(session, common.store(), target.eval_set.id)
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


@click.command("meta-eval")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option("--measure", help="Measure key (default: the official measure).")
@click.option(
    "--splits",
    type=click.IntRange(1, MAX_SPLITS),
    default=200,
    show_default=True,
    help="Random half-splits of the units.",
)
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(("json", "md")), default="json", show_default=True
)
@with_appcontext
def meta_eval_cmd(
    task: str,
    subtask: str,
    set_slug: str | None,
    measure: str | None,
    splits: int,
    seed: int,
    fmt: str,
) -> None:
    """Say what the set tells apart: pairs significant, halves' Kendall tau and top agreement."""
    from leaderboard.services.results.meta_evaluation import (
        UnknownMeasure,
        meta_evaluation,
        to_markdown,
    )
    from leaderboard.services.results.tables import caption_of
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.tables.model import official_key

    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            report = meta_evaluation(
                session, common.store(), target, measure, splits=splits, seed=seed
            )
            caption = caption_of(target)
            key = measure or official_key(target.family.measure_specs(target.context()))
        except UnknownMeasure as exc:
            common.fail(exc.message, 2)  # a bad option value, as click's own are
        except DomainError as exc:
            common.fail(exc.message)
    if report["pairs_significant"] is None:
        same = (f" --set {set_slug}" if set_slug else "") + (f" --measure {key}" if measure else "")
        # On standard error: the JSON on standard output stays what scripts read.
        click.echo(
            f"No analysis of the set's current scores on {key} yet: pairs_significant and "
            f"adjacent_significant are null (`leaderboard significance {task} {subtask}{same}` "
            "computes one).",
            err=True,
        )
    if fmt == "md":
        click.echo(to_markdown(report, caption, key), nl=False)
    else:
        click.echo(json.dumps(report, ensure_ascii=False, indent=1))


@click.command("worker")
@click.option(
    "--once",
    is_flag=True,
    help="Run the jobs queued now, then the automatic analyses and summaries due, in this "
    "process (no broker needed), then exit.",
)
@click.option(
    "--beat",
    is_flag=True,
    help="Ignored: every worker runs the periodic jobs, each period once (kept for scripts).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Jobs run at once, each in a process of its own.",
)
@click.option(
    "--queues",
    default="jobs,mail",
    show_default=True,
    help="The queues to serve: jobs (analyses, freezes, verifications), mail.",
)
@click.option("--loglevel", default="info", show_default=True, help="Celery's log level.")
@click.option("--poll", type=float, default=2.0, hidden=True, help="Ignored (kept for scripts).")
@with_appcontext
def worker_cmd(
    once: bool, beat: bool, concurrency: int, queues: str, loglevel: str, poll: float
) -> None:
    """Run the background work: analyses, freezes, verifications, summaries, charts and mail.

    Every worker also runs the periodic jobs (scheduled releases, deadline notices, the sweep of
    lost jobs), each period on one worker only: no flag is needed.
    """
    if not once:
        from leaderboard.worker.celery_app import start

        start(common.settings(), queues=queues, concurrency=concurrency, loglevel=loglevel)
        return
    from leaderboard.services.jobs.core import CHARTED, claim_name, stale_after
    from leaderboard.services.results.chart_data import job_charts
    from leaderboard.services.results.query_summaries import stale_sets
    from leaderboard.states import JobStatus
    from leaderboard.unit_of_work import unit_of
    from leaderboard.worker.jobs import (
        campaign_check,
        draw_all,
        outcome_line,
        queue_analyses,
        run_taken,
        summarize_set,
        take_next,
    )
    from leaderboard.worker.periodic import record_seen, remove_expired_uploads

    # A worker too, for the health check; it runs the campaign check now, unclaimed: the
    # operator asked, and releases and notices are each made once however often it runs.
    with common.session() as session:
        record_seen(session, "once")
        unit_of(session).commit()
        # What a worker's periodic thread does every minute: scheduled releases, then notices.
        campaign = campaign_check(session, common.now())
    if any(campaign.values()):
        click.echo(
            f"campaign: {campaign['released']} release(s); "
            f"{campaign['release_mails'] + campaign['deadline_mails']} notification(s) queued",
            err=True,  # standard output stays the jobs' lines, which scripts read
        )
    config = common.settings()
    remove_expired_uploads(config)
    stale = stale_after(config)
    while True:
        with common.session() as session:
            job = take_next(session, worker=claim_name(), stale=stale)
            if job is None:
                # Then the visible sets whose scores changed: their automatic analyses, run as
                # jobs in this loop (once each: a set analysed is no longer due) ...
                if queue_analyses(session, common.now()):
                    continue
                # ... and their per-query summaries and charts.
                for set_id, _revision in stale_sets(session):
                    summarize_set(session, common.store(), set_id)
                return
            done = run_taken(
                session,
                job,
                sessions=common.sessionmaker(),
                store=common.store(),
                settings=config,
                clock=common.now,
            )
            if done.status == JobStatus.DONE and done.purpose in CHARTED:
                # What a worker's next task would do: the charts, drawn here too.
                draw_all(session, common.store(), job_charts(session, common.store(), done.id))
            click.echo(outcome_line(done))


COMMANDS = (significance_cmd, meta_eval_cmd, worker_cmd)
