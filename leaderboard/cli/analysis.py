"""Analysis of a table's runs: paired significance and clusters."""

from __future__ import annotations

import json

import click

from leaderboard.cli import common
from leaderboard.cli.common import set_option, with_appcontext
from leaderboard.services.errors import DomainError

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
    """Test every pair of the table's runs for a significant difference; print p-values and clusters."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.significance import Request, significance
    from leaderboard.tables import significance_exports as exports

    request = Request(measure, method, samples, seed, alpha, correction, runs)
    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            report = significance(session, common.store(), target, request)
        except DomainError as exc:
            common.fail(exc.message)
    renders = {
        "json": lambda r: json.dumps(r, ensure_ascii=False, indent=1) + "\n",
        "md": exports.to_markdown,
        "csv": exports.to_csv,
        "latex": exports.to_latex,
    }
    click.echo(renders[fmt](report), nl=False)


COMMANDS = (significance_cmd,)
