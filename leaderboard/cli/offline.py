"""``leaderboard score``: validate and score a run offline, with no database and no Flask."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from leaderboard.cli.common import ImportModesCommand, chosen_options, fail
from leaderboard.cli.references import Refused, fail_every, load_set_split, read_definition
from leaderboard.config import load_settings
from leaderboard.formats.issues import Issue, quoted, summarise
from leaderboard.tables.model import MISSING, MeasureSpec
from leaderboard.tasks.definition import TaskDefinition, preset_paths
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Evaluation, RunPathError


def _find_definition(task: str, definition: str | None) -> TaskDefinition:
    """Return the definition given, or the bundled one of ``task``; raise Refused if none."""
    if definition:
        return read_definition(Path(definition))
    for path in preset_paths():
        d = read_definition(path)
        if d.slug == task:
            return d
    raise Refused(f"No bundled task {quoted(task)}; give its definition file with --definition.")


def _issue_json(issues: list[Issue]) -> list[dict[str, object]]:
    return [i.as_dict() for i in issues]


def _shown(raw: float | None, scale: float) -> float | None:
    """Return a stored value in the table's scale; None (undefined) stays None."""
    return None if raw is None else raw * scale


def score_json(
    evaluation: Evaluation, specs: list[MeasureSpec], *, per_query: bool = False
) -> dict[str, Any]:
    """Return the ``--json`` report of an evaluation; with ``per_query``, the per-query values.

    Values are in the scale of the table (as in "measures"); only measures that are means of
    per-query values have them. A split set's run has its values on each part under the key
    parts (public, private), in the same scale.
    """
    verdict, results = evaluation.verdict, evaluation.results
    out: dict[str, Any]
    if results is None:
        errors = summarise(verdict.errors, len(verdict.errors), unlisted=verdict.more_errors)
        out = {
            "measures": {},
            "warnings": _issue_json(verdict.warnings),
            "issues": _issue_json(errors),
        }
    else:
        shown_specs = [s for s in specs if s.key in results]
        undefined = [
            {"line": None, "message": f"{s.label} is undefined for this run: {r.reason}"}
            for s in shown_specs
            if (r := results[s.key]).raw is None
        ]
        out = {
            "measures": {s.key: _shown(results[s.key].raw, s.scale) for s in shown_specs},
            "official": {s.key: results[s.key].official or None for s in shown_specs},
            "warnings": _issue_json(verdict.warnings) + undefined,
            "notes": {s.key: results[s.key].note for s in shown_specs if results[s.key].note},
            "issues": [],
            "tolerances": list(verdict.tolerances),
        }
        if evaluation.by_part:
            # The split's parts (public, private): a set's, not a family's option.
            out["by_part"] = {
                part: {
                    s.key: _shown(scored[s.key].raw, s.scale)
                    for s in shown_specs
                    if s.key in scored
                }
                for part, scored in evaluation.by_part.items()
            }
    if per_query:
        out["per_query"] = {
            s.key: {q: v * s.scale for q, v in values.items()}
            for s in specs
            if results is not None
            and s.key in results
            and (values := results[s.key].per_query) is not None
        }
    return out


@click.command("score", cls=ImportModesCommand, mode_help="score_help")
@click.argument("task")
@click.argument("subtask")
@click.argument("run", type=click.Path(exists=True, dir_okay=True))
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option("--lenient", is_flag=True, help="Read the run as the task's official scorer did.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print measures, warnings and issues as JSON."
)
@click.option(
    "--per-query",
    is_flag=True,
    help="With --json: add each measure's value per query, where the measure is a mean of them.",
)
@click.option(
    "--definition",
    type=click.Path(exists=True),
    help="Task definition file (for non-bundled tasks).",
)
def score_cmd(
    task: str,
    subtask: str,
    run: str,
    set_slug: str | None,
    lenient: bool,
    as_json: bool,
    per_query: bool,
    definition: str | None,
    **modes: bool,
) -> None:
    """Validate and score a run offline, with no database; exit 0 when scored, 1 when rejected."""
    if per_query and not as_json:
        raise click.UsageError("--per-query adds to the JSON report: give --json too.")
    settings = load_settings()
    try:
        d = _find_definition(task, definition)
    except Refused as exc:
        if definition:
            fail_every(str(exc), Path(definition), settings.max_decompressed_bytes)
        fail(str(exc))
    try:
        sd = d.subtask(subtask)
        if sd is None:
            raise Refused(f"Task {quoted(task)} has no subtask {quoted(subtask)}.")
        setdef = sd.set(set_slug or sd.default_set)
        if setdef is None:
            raise Refused(f"Subtask {quoted(subtask)} has no set {quoted(set_slug)}.")
        gold, split = load_set_split(d, sd, setdef, settings.max_decompressed_bytes)
        if gold is None:
            raise Refused(
                f"Subtask {quoted(subtask)} ({setdef.slug}) has no gold file to score with."
            )
    except Refused as exc:
        fail(str(exc))
    family = get_family(d.family)
    ctx = Context(d, sd, setdef.slug, settings.max_decompressed_bytes)
    try:
        inputs = family.inputs_from_path(Path(run), ctx)
    except RunPathError as exc:
        fail(str(exc), 1)
    try:
        # A split set is scored on each part too, as an upload is (the one pipeline).
        evaluation = family.evaluate(
            inputs,
            gold,
            ctx,
            lenient=lenient,
            options=chosen_options(modes),
            part_golds=None if split is None else split.golds,
        )
    finally:
        for stream in inputs.values():
            stream.close()
    verdict, results = evaluation.verdict, evaluation.results
    specs = family.measure_specs(ctx)
    if as_json:
        report = score_json(evaluation, specs, per_query=per_query)
        click.echo(json.dumps(report, ensure_ascii=False))
        sys.exit(0 if results is not None else 1)
    if results is None:
        for issue in summarise(verdict.errors, unlisted=verdict.more_errors):
            click.echo(f"error: {issue.text}")
        for w in verdict.warnings:
            click.echo(f"warning: {w.text}")
        click.echo("The run was rejected.")
        sys.exit(1)
    for w in verdict.warnings:
        click.echo(f"warning: {w.text}")
    for t in verdict.tolerances:
        click.echo(f"tolerated: {t}")
    width = max(len(s.label) for s in specs)
    for s in specs:
        if s.key in results:
            r = results[s.key]
            if r.raw is None:
                click.echo(f"{s.label:<{width}}  {MISSING:>8}   (undefined: {r.reason})")
                continue
            display = format(float(r.official) * s.scale, f".{s.display_decimals}f")
            click.echo(f"{s.label:<{width}}  {display:>8}   ({r.official})")
    for part, scored in evaluation.by_part.items():
        click.echo(f"{part} part:")
        for s in specs:
            if s.key in scored:
                raw = scored[s.key].raw
                shown = MISSING if raw is None else format(raw * s.scale, f".{s.display_decimals}f")
                click.echo(f"  {s.label:<{width}}  {shown:>8}")


COMMANDS = (score_cmd,)
