"""The campaign's course: phases and deadlines, freezing the official ranking, verifying it."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

import click

from leaderboard.cli import common
from leaderboard.cli.common import set_option, with_appcontext
from leaderboard.clock import parse_instant
from leaderboard.services.common.errors import DomainError
from leaderboard.states import BoardKind, DiagnosticsAudience, NameMode, Shown, Switch


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except (ValueError, OverflowError) as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


@click.command("phase")
@click.argument("task")
@click.argument("subtask")
@click.argument("name")
@click.option(
    "--set",
    "set_slug",
    help="Evaluation set the phase scores (default: the subtask's default set).",
)
@click.option("--start", help="Start, ISO 8601 with a zone, e.g. 2016-01-10T00:00:00Z.")
@click.option("--end", help="Deadline, ISO 8601 with a zone, e.g. 2016-01-31T23:59:00-12:00.")
@click.option(
    "--late/--no-late", default=None, help="Accept late runs after the deadline (marked late)."
)
@click.option(
    "--corrections/--no-corrections",
    default=None,
    help="Accept corrected runs after the deadline (marked corrected).",
)
@click.option(
    "--results",
    type=click.Choice([m.value for m in Shown]),
    help="Hide results until released, or release them.",
)
@click.option(
    "--names",
    type=click.Choice([m.value for m in NameMode]),
    help="Show teams in public tables as Team 1, Team 2, ... (anonymous), or reveal them.",
)
@click.option(
    "--diagnostics",
    type=click.Choice([m.value for m in DiagnosticsAudience]),
    help="Who sees each run's per-query values once results are visible: its team, or anyone.",
)
@click.option(
    "--private",
    type=click.Choice([m.value for m in Shown]),
    help="A split set's private part: hidden (participants and the public see scores on the "
    "public part only; the default) or visible (released: the table shows every part).",
)
@click.option(
    "--board",
    type=click.Choice([m.value for m in BoardKind]),
    help="The live board: slots (each ranked slot's run, the default), best (each team's best "
    "run so far) or ladder (each team's value released by the Ladder only on a real gain).",
)
@click.option(
    "--ladder-alpha",
    type=float,
    help="The Ladder's one-sided bootstrap level for measures that are not means (default 0.05).",
)
@click.option(
    "--analysis",
    type=click.Choice([m.value for m in Switch]),
    help="on (the default): the worker analyses the set's table whenever its scores change while "
    "results are visible (clusters and rank intervals on the public board); off: only when an "
    "organizer asks. Off on any phase of a set turns it off for the set.",
)
@click.option(
    "--release-at",
    help="ISO 8601 time with a zone: hidden results become visible then (the worker releases "
    "them and mails the teams).",
)
@click.option("--daily-quota", type=int, help="Runs per team per UTC day (0: no quota).")
@click.option("--total-quota", type=int, help="Runs per team in the phase (0: no quota).")
@click.option(
    "--delete",
    is_flag=True,
    help="Delete the phase (its runs stay, in no phase); refused while task data files are attached.",
)
@with_appcontext
def phase_cmd(task: str, subtask: str, name: str, delete: bool, **options: Any) -> None:
    """Create, update or delete a phase; times are stored in UTC and shown with their zone."""
    from leaderboard.services.campaign.phases import (
        PhaseChange,
        delete_phase,
        show_time,
        upsert_phase,
    )
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import unit_of

    # The options are named as PhaseChange's fields; none given (None) leaves a setting as it is.
    if delete:
        if any(value is not None for value in options.values()):
            common.fail("--delete takes no other option: it deletes the phase as it is.")
        with common.session() as session:
            try:
                target = resolve(session, task, subtask)
                with unit_of(session):
                    delete_phase(
                        session, target.subtask, task, name, actor=common.actor(), now=common.now()
                    )
            except DomainError as exc:
                common.fail(exc.message)
        click.echo(f"Deleted phase {name.strip()} of {task} {subtask}; its runs stay, in no phase.")
        return

    for key in ("start", "end", "release_at"):
        options[key] = _parse_time(options[key], "--" + key.replace("_", "-"))
    change = PhaseChange(**options)
    zone = common.settings().display_timezone
    with common.session() as session:
        try:
            target = resolve(session, task, subtask, change.set_slug)
            with unit_of(session):
                phase = upsert_phase(
                    session, target, name, change, actor=common.actor(), now=common.now()
                )
        except DomainError as exc:
            common.fail(exc.message)
        window = " to ".join(
            show_time(t, zone) if t else "open" for t in (phase.starts_at, phase.ends_at)
        )
        click.echo(
            f"Phase {phase.name} of {task} {subtask} on the {phase.eval_set.slug} set: {window}; "
            f"late runs {'accepted' if phase.late_allowed else 'refused'}; "
            f"corrections {'accepted' if phase.corrections_allowed else 'refused'}; "
            f"results {'hidden' if phase.results_hidden else 'visible'}; "
            f"quota {phase.daily_quota or 'none'} per day, {phase.total_quota or 'none'} in total; "
            f"team names {phase.names}; per-query diagnostics for "
            f"{'everyone' if phase.public_diagnostics else 'its own team only'}"
            f"; private part {'visible' if phase.private_visible else 'hidden'}"
            f"; board {phase.board}"
            + (f" (alpha {phase.ladder_alpha:g})" if phase.board == "ladder" else "")
            + f"; automatic analysis {'on' if phase.auto_analysis else 'off'}"
            + (
                f"; results released at {show_time(phase.release_at, zone)}"
                if phase.release_at and phase.results_hidden
                else ""
            )
            + "."
        )


@click.command("freeze")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option(
    "--before-deadline",
    is_flag=True,
    help="Freeze although a deadline of the set is still ahead (on-time runs after it are left "
    "out); the audit log records it.",
)
@click.option(
    "--supersede",
    is_flag=True,
    help="Replace the frozen official ranking by a new frozen version; the old one is kept, "
    "verifiable and shown as superseded (needs --reason).",
)
@click.option("--reason", help="Why the frozen ranking is superseded (shown with the old version).")
@with_appcontext
def freeze_cmd(
    task: str,
    subtask: str,
    set_slug: str | None,
    before_deadline: bool,
    supersede: bool,
    reason: str | None,
) -> None:
    """Freeze the official ranking: an immutable snapshot with the hashes to verify it.

    A freeze is permanent; a premature one is replaced with --supersede --reason TEXT: a new
    frozen version becomes the official ranking, the old one stays, verifiable.
    """
    if supersede and reason is None:
        common.fail("--supersede needs --reason TEXT: why the frozen ranking is replaced.")
    if reason is not None and not supersede:
        common.fail("--reason goes with --supersede (a first freeze needs no reason).")
    from leaderboard.services.freeze.analysis import describe_analysis
    from leaderboard.services.freeze.core import DeadlineAhead, freeze
    from leaderboard.services.results.chart_data import report_charts
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import unit_of
    from leaderboard.worker.jobs import draw_all

    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            with unit_of(session):
                snapshot = freeze(
                    session,
                    common.store(),
                    common.settings(),
                    target,
                    actor=common.actor(),
                    now=common.now(),
                    before_deadline=before_deadline,
                    supersede=reason if supersede else None,
                )
        except DeadlineAhead as exc:
            common.fail(f"{exc.message} To freeze before it, add --before-deadline.")
        except DomainError as exc:
            common.fail(exc.message)
        frozen = snapshot.manifest.get("analysis")
        if frozen is not None and "pairs" in frozen:
            # Frozen at once, drawn at once: the official view's charts are only read.
            charts = report_charts(session, common.store(), target, frozen, live=False)
            draw_all(session, common.store(), charts)
        click.echo(
            f"Frozen {task} {subtask} ({target.eval_set.slug}) at {snapshot.frozen_at.isoformat()}: "
            f"{len(snapshot.manifest['runs'])} rows; snapshot SHA-256 {snapshot.manifest_sha256}."
        )
        old = snapshot.manifest.get("supersedes")
        if old is not None:
            click.echo(
                f"Version {snapshot.version} is now the official ranking; version {old['version']} "
                f"is kept, verifiable, and shown as superseded: {old['reason']}"
            )
        else:
            click.echo(
                "This is permanent: the official ranking can only be replaced by superseding it "
                "(--supersede --reason TEXT), which keeps this version and shows it as superseded."
            )
        click.echo(describe_analysis(snapshot.manifest.get("analysis")))


@click.command("verify")
@click.argument("task")
@click.argument("subtask")
@set_option
@click.option(
    "--version",
    "version",
    type=int,
    help="Verify only this frozen version (default: every version, superseded ones too).",
)
@with_appcontext
def verify_cmd(task: str, subtask: str, set_slug: str | None, version: int | None) -> None:
    """Re-score the frozen runs from the stored files and gold; exit 1 on any difference."""
    from leaderboard.services.freeze.core import frozen_version, verify, verify_all
    from leaderboard.services.tasks.catalog import resolve

    with common.session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            if version is None:
                checked = verify_all(session, common.store(), common.settings(), target)
            else:
                one = frozen_version(session, target, version)
                checked = [
                    (one, verify(session, common.store(), common.settings(), target, one.snapshot))
                ]
        except DomainError as exc:
            common.fail(exc.message)
        several = len(checked) > 1 or version is not None
        failed = 0
        for frozen, report in checked:
            snap = frozen.snapshot
            name = f"Version {snap.version} (frozen at {snap.frozen_at.isoformat()})"
            if frozen.superseded is not None:
                name += (
                    f", superseded on {frozen.superseded.superseded_at:%Y-%m-%d}: "
                    f"{frozen.superseded.reason}"
                )
            for line in report.differences:
                click.echo(f"DIFFERENCE: {f'version {snap.version}: ' if several else ''}{line}")
            if not report.ok:
                failed += 1
                click.echo(
                    f"{name + ': the' if several else 'The'} frozen table of {task} {subtask} could "
                    f"NOT be confirmed ({len(report.differences)} differences)."
                )
                continue
            click.echo(
                f"{name + ': v' if several else 'V'}erified: {report.checked_runs} frozen rows "
                "re-score to the snapshot; its analysis recomputes to the same p-values, clusters "
                "and intervals; hashes match."
            )
    if failed:
        sys.exit(1)


COMMANDS = (phase_cmd, freeze_cmd, verify_cmd)
