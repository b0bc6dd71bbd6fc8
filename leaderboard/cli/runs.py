"""Runs from the organizers' side: historical imports and the standard baselines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from leaderboard.cli import common
from leaderboard.cli.common import ImportModesCommand, chosen_options, set_option, with_appcontext
from leaderboard.services.common.errors import DomainError, RunRejected
from leaderboard.tasks.families.base import RunPathError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from leaderboard.models import Run
    from leaderboard.tasks.families.base import Family


def _import_one(
    session: Session,
    task: str,
    subtask: str,
    set_slug: str | None,
    team_name: str,
    slot: str,
    name: str | None,
    description: str,
    path: Path,
    lenient: bool,
    modes: dict[str, bool],
) -> bool:
    """Import one file; print its report; return whether it was stored."""
    from leaderboard.services.runs.core import Submission, Upload, prepare_run
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import retried

    target = resolve(session, task, subtask, set_slug)
    try:
        inputs = target.family.inputs_from_path(
            path, target.context(common.settings().max_decompressed_bytes)
        )
    except RunPathError as exc:
        click.echo(f"REJECTED {team_name}/{path.name}: {exc}")
        return False
    sub = Submission(
        target=target,
        slot=slot,
        upload=Upload(inputs, {k: path.name for k in inputs}),
        name=name or "",
        description=description,
        via="cli",
        lenient=lenient,
        options=chosen_options(modes),
    )
    label = f"{team_name}/{path.name}"
    try:
        placement = prepare_run(
            session,
            common.store(),
            common.settings(),
            sub,
            user=None,
            team=team_name,
            now=common.now(),
        )
        run = retried(session, placement)
    except RunRejected as exc:
        return _rejected(label, exc)
    official = _official(run)
    click.echo(f"imported {label} as run {run.id}: {_scores_line(official)}")
    for t in run.report.get("tolerances", []):
        click.echo(f"    tolerated: {t}")
    for w in run.warnings:
        click.echo(f"    warning: {w}")
    _compare_with_score_file(target.family, path, official)
    return True


def _rejected(what: str, exc: RunRejected) -> bool:
    """Print why a run was refused, each problem on its own line; return False (not stored)."""
    click.echo(f"REJECTED {what}: {exc.message}")
    for issue in exc.issues:
        click.echo(f"    {issue.text}")
    return False


def _official(run: Run, visible: list[str] | None = None) -> dict[str, str]:
    # The organizer's command line reports the scores on every unit of the set.
    return {
        s.measure: s.official
        for s in run.scores
        if s.current and s.part == "all" and (visible is None or s.measure in visible)
    }


def _scores_line(official: dict[str, str]) -> str:
    return "  ".join(f"{m} {v}" for m, v in official.items())


def _compare_with_score_file(family: Family, path: Path, official: dict[str, str]) -> None:
    """Compare our values with the official scorer's output beside the run, if the family has one."""
    score_file = family.score_file(path)
    if score_file is None:
        return
    expected = score_file.scores
    if expected is None:
        click.echo(f"    {score_file.name}: {score_file.problem}")
        return
    diffs = [
        f"{m}: ours {official.get(m)} official {v}"
        for m, v in expected.items()
        if official.get(m) != v
    ]
    click.echo(
        f"    {score_file.name}: " + ("matches" if not diffs else "DIFFERS " + "; ".join(diffs))
    )


def _import_baseline(
    session: Session,
    task: str,
    subtask: str,
    set_slug: str | None,
    label: str,
    description: str,
    path: Path,
    lenient: bool,
) -> bool:
    """Import one run as a baseline row labelled ``label``; print its report; return if stored."""
    from leaderboard.services.runs.baselines import import_baseline
    from leaderboard.services.runs.core import Upload
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import retried

    settings = common.settings()
    target = resolve(session, task, subtask, set_slug)
    try:
        inputs = target.family.inputs_from_path(
            path, target.context(settings.max_decompressed_bytes)
        )
    except RunPathError as exc:
        click.echo(f"REJECTED baseline {label!r} ({path.name}): {exc}")
        return False
    try:
        placement = import_baseline(
            session,
            common.store(),
            settings,
            target,
            Upload(inputs, {k: path.name for k in inputs}),
            label=label,
            lenient=lenient,
            description=description,
            actor=common.actor(),
        )
        run = retried(session, placement)
    except RunRejected as exc:
        return _rejected(f"baseline {label!r} ({path.name})", exc)
    official = _official(run)
    click.echo(
        f"imported {path.name} as baseline {run.label!r} (run {run.id}): {_scores_line(official)}"
    )
    for w in run.warnings:
        click.echo(f"    warning: {w}")
    _compare_with_score_file(target.family, path, official)
    return True


def _check_baseline_usage(
    paths: tuple[str, ...],
    team: str | None,
    slot: str | None,
    name: str | None,
    modes: dict[str, bool],
) -> None:
    """Raise a usage error for options that make no sense with --baseline."""
    if team or slot or name:
        raise click.UsageError("--baseline stores a row with no team: drop --team, --slot, --name.")
    if len(paths) != 1:
        raise click.UsageError(f"--baseline takes one run FILE, not {len(paths)}.")
    chosen = [mode for mode, on in modes.items() if on]
    if chosen:
        raise click.UsageError(f"--{chosen[0]} is for team runs; a baseline is read as it is.")


@click.command("import-runs", cls=ImportModesCommand)
@click.argument("task")
@click.argument("subtask")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--team", help="Team of a single run file (created if missing).")
@click.option("--slot", help="Slot of a single run file, e.g. primary.")
@click.option("--name", help="Run name (default: the slot).")
@click.option("--baseline", help="Store the one FILE as a baseline row with this label (no team).")
@click.option("--description", default="", help="System description.")
@set_option
@click.option("--lenient", is_flag=True, help="Accept what the official scorer tolerated.")
@with_appcontext
def import_runs_cmd(
    task: str,
    subtask: str,
    paths: tuple[str, ...],
    team: str | None,
    slot: str | None,
    name: str | None,
    baseline: str | None,
    description: str,
    set_slug: str | None,
    lenient: bool,
    **modes: bool,
) -> None:
    """Import runs as an organizer: one FILE with --team/--slot or --baseline, or folders.

    Folders are read as the task's family lays them out; in SemEval-2016 style a folder holds
    ``<TEAM>/subtask_<X>_<primary|contrastive1|contrastive2>.txt`` (the team is the folder name;
    ``README.txt`` becomes the description), or is itself one team's folder. A ``.score`` file
    beside a run is compared with our values.
    """
    from leaderboard.services.tasks.catalog import resolve

    if baseline is not None:
        _check_baseline_usage(paths, team, slot, name, modes)
        with common.session() as session:
            try:
                stored = _import_baseline(
                    session, task, subtask, set_slug, baseline, description, Path(paths[0]),
                    lenient,
                )  # fmt: skip
            except DomainError as exc:
                common.fail(exc.message)
        if not stored:
            sys.exit(1)
        return
    failures = 0
    with common.session() as session:
        try:
            for raw in paths:
                path = Path(raw)
                if path.is_file() or (team and slot):
                    if not team or not slot:
                        raise click.UsageError("a single run file needs --team and --slot")
                    failures += not _import_one(
                        session, task, subtask, set_slug, team, slot, name, description,
                        path, lenient, modes,
                    )  # fmt: skip
                    continue
                target = resolve(session, task, subtask, set_slug)
                ctx = target.context(common.settings().max_decompressed_bytes)
                try:
                    found = target.family.runs_in_folder(path, ctx)
                except RunPathError as exc:
                    common.fail(str(exc))
                for fr in found:
                    desc = description if fr.description is None else fr.description
                    failures += not _import_one(
                        session, task, subtask, set_slug, team or fr.team, fr.slot, None, desc,
                        fr.path, lenient, modes,
                    )  # fmt: skip
        except DomainError as exc:
            common.fail(exc.message)
    if failures:
        click.echo(f"{failures} run(s) were rejected.")
        sys.exit(1)


@click.command("add-baselines")
@click.argument("task")
@click.argument("subtask")
@set_option
@with_appcontext
def add_baselines_cmd(task: str, subtask: str, set_slug: str | None) -> None:
    """Compute and store the subtask's standard baselines from the gold data."""
    from leaderboard.services.runs.baselines import add_baselines
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import retried, unit_of

    with common.session() as session:
        try:
            # Each baseline committed once placed; the record of the action last.
            with unit_of(session):
                target = resolve(session, task, subtask, set_slug)
                placements = add_baselines(
                    session, common.store(), common.settings(), target, actor=common.actor()
                )
                runs = [retried(session, placement) for placement in placements]
        except DomainError as exc:
            common.fail(exc.message)
        for run in runs:
            click.echo(f"{run.label}: " + _scores_line(_official(run, run.report["shown"])))


COMMANDS = (import_runs_cmd, add_baselines_cmd)
