"""The ``leaderboard`` command line (also ``flask leaderboard``)."""

from __future__ import annotations

import getpass
import json
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import update_wrapper
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from leaderboard.clock import parse_instant
from leaderboard.config import Settings, load_settings
from leaderboard.formats.cqa_score import parse_all_scores
from leaderboard.formats.issues import Issue, shown, summarise
from leaderboard.services.errors import DomainError, NotFound, RunRejected
from leaderboard.storage import FileStore
from leaderboard.tables import exports
from leaderboard.tasks.definition import DefinitionError, TaskDefinition, preset_paths
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, RunPathError
from leaderboard.tasks.loading import load_definition_file

# Flask, SQLAlchemy and the services are imported by the commands that use them: `score` needs
# none of them, and loading them would take longer than scoring a large run.
if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from leaderboard.services.gold import RescoreReport

_Command = TypeVar("_Command", bound=Callable[..., Any])
#: accounts.ROLES and the listing formats, spelled out so that option parsing loads no service.
ROLES = ("organizer", "participant")
LISTING_FORMAT_NAMES = ("csv", "json", "latex", "md")
FORMATS = {
    "json": exports.to_json,
    "csv": exports.to_csv,
    "md": exports.to_markdown,
    "latex": exports.to_latex,
}
_RUN_FILE = re.compile(
    r"^subtask_(?P<subtask>[A-Za-z0-9]+)_(?P<slot>primary|contrastive1|contrastive2)\.txt$"
)


def with_appcontext(f: _Command) -> _Command:
    """Run the command inside the application context (Flask's decorator, loaded when run)."""

    @click.pass_context
    def decorator(ctx: click.Context, /, *args: Any, **kwargs: Any) -> Any:
        from flask.cli import with_appcontext as flask_with_appcontext

        return ctx.invoke(flask_with_appcontext(f), *args, **kwargs)

    return cast(_Command, update_wrapper(decorator, f))


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # getpass fails without a login name (e.g. in containers)
        return "cli"


def _ext() -> dict[str, Any]:
    from flask import current_app

    return current_app.extensions["leaderboard"]


@contextmanager
def _session() -> Iterator[Session]:
    session: Session = _ext()["sessionmaker"]()
    try:
        yield session
    finally:
        session.rollback()
        session.close()


def _store() -> FileStore:
    return _ext()["store"]


def _settings() -> Settings:
    return _ext()["settings"]


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


@click.group("leaderboard")
def leaderboard_group() -> None:
    """Run the shared-task leaderboard: tasks, accounts, runs, baselines and tables."""


@leaderboard_group.command("init")
@with_appcontext
def init_cmd() -> None:
    """Create or upgrade the database and load the bundled task presets (safe to run twice)."""
    from leaderboard.migrate import upgrade
    from leaderboard.services.catalog import install_presets

    settings = _settings()
    settings.instance_dir.mkdir(parents=True, exist_ok=True)
    settings.storage_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.database_url)
    with _session() as session:
        slugs = install_presets(session, _store(), actor=_actor())
    click.echo(f"Database ready; tasks: {', '.join(slugs)}")


def _find_definition(task: str, definition: str | None) -> TaskDefinition:
    if definition:
        return load_definition_file(Path(definition))
    for path in preset_paths():
        d = load_definition_file(path)
        if d.slug == task:
            return d
    raise NotFound(f"No bundled task {shown(task)}; give its definition file with --definition.")


def _issue_json(issues: list[Issue]) -> list[dict[str, object]]:
    return [i.as_dict() for i in issues]


@leaderboard_group.command("score")
@click.argument("task")
@click.argument("subtask")
@click.argument("run", type=click.Path(exists=True, dir_okay=True))
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option("--lenient", is_flag=True, help="Read the run as the task's official scorer did.")
@click.option("--resort", is_flag=True, help="Lenient mode: re-sort the run into gold order first.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print measures, warnings and issues as JSON."
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
    resort: bool,
    as_json: bool,
    definition: str | None,
) -> None:
    """Validate and score a run offline, with no database; exit 0 when scored, 1 when rejected."""
    settings = load_settings()
    try:
        d = _find_definition(task, definition)
    except (DomainError, DefinitionError) as exc:
        _fail(str(exc), 2)
        return
    sd = d.subtask(subtask)
    if sd is None:
        _fail(f"Task {shown(task)} has no subtask {shown(subtask)}.", 2)
        return
    setdef = sd.set(set_slug or sd.default_set)
    if setdef is None:
        _fail(f"Subtask {shown(subtask)} has no set {shown(set_slug)}.", 2)
        return
    family = get_family(d.family)
    ctx = Context(d, sd, setdef.slug, settings.max_decompressed_bytes)
    gold = family.load_gold({r: d.file_path(p).read_bytes() for r, p in setdef.files.items()}, ctx)
    try:
        inputs = family.inputs_from_path(Path(run), ctx)
    except RunPathError as exc:
        _fail(str(exc), 1)
        return
    evaluation = family.evaluate(inputs, gold, ctx, lenient=lenient, options={"resort": resort})
    verdict, results = evaluation.verdict, evaluation.results
    specs = family.measure_specs(ctx)
    if results is None:
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "measures": {},
                        "warnings": _issue_json(verdict.warnings),
                        "issues": _issue_json(
                            summarise(
                                verdict.errors,
                                len(verdict.errors),
                                unlisted=verdict.more_errors,
                            )
                        ),
                    },
                    ensure_ascii=False,
                )
            )
        else:
            for issue in summarise(verdict.errors, unlisted=verdict.more_errors):
                click.echo(f"error: {issue.message}")
            for w in verdict.warnings:
                click.echo(f"warning: {w.message}")
            click.echo("The run was rejected.")
        sys.exit(1)
    if as_json:
        out = {
            "measures": {s.key: results[s.key].raw * s.scale for s in specs if s.key in results},
            "official": {s.key: results[s.key].official for s in specs if s.key in results},
            "warnings": _issue_json(verdict.warnings),
            "issues": [],
            "tolerances": list(verdict.tolerances),
        }
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    for w in verdict.warnings:
        click.echo(f"warning: {w.message}")
    for t in verdict.tolerances:
        click.echo(f"tolerated: {t}")
    width = max(len(s.label) for s in specs)
    for s in specs:
        if s.key in results:
            r = results[s.key]
            display = format(float(r.official) * s.scale, f".{s.display_decimals}f")
            click.echo(f"{s.label:<{width}}  {display:>8}   ({r.official})")


@leaderboard_group.command("create-team")
@click.argument("name")
@with_appcontext
def create_team_cmd(name: str) -> None:
    """Create a team."""
    from leaderboard.services import accounts

    with _session() as session:
        try:
            team = accounts.create_team(session, name, actor=_actor())
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(f"Created team {team.name!r}.")


@leaderboard_group.command("create-user")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--team", help="The participant's team.")
@click.option("--password", help="Password (default: a random one, printed once).")
@with_appcontext
def create_user_cmd(email: str, role: str, team: str | None, password: str | None) -> None:
    """Create an organizer or a participant account."""
    from leaderboard.services import accounts

    generated = password is None
    password = password or secrets.token_urlsafe(12)
    with _session() as session:
        try:
            user = accounts.create_user(
                session, email, role=role, team=team, password=password, actor=_actor()
            )
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(f"Created {user.role} {user.email}" + (f" in team {team!r}." if team else "."))
        if generated:
            click.echo(f"Password: {password}")


@leaderboard_group.command("set-password")
@click.argument("email")
@click.password_option()
@with_appcontext
def set_password_cmd(email: str, password: str) -> None:
    """Set a user's password."""
    from leaderboard.services import accounts

    with _session() as session:
        try:
            accounts.set_password(session, email, password, actor=_actor())
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo("Password set; every session of the user has ended.")


@leaderboard_group.command("disable-user")
@click.argument("email")
@with_appcontext
def disable_user_cmd(email: str) -> None:
    """Disable an account: it cannot log in, its sessions end and its API tokens stop working."""
    from leaderboard.services import accounts

    with _session() as session:
        try:
            accounts.disable_user(session, email, actor=_actor())
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(f"Disabled {email.strip().lower()}; every session of the user has ended.")


@leaderboard_group.command("enable-user")
@click.argument("email")
@with_appcontext
def enable_user_cmd(email: str) -> None:
    """Let a disabled account log in again (its old sessions stay ended)."""
    from leaderboard.services import accounts

    with _session() as session:
        try:
            accounts.enable_user(session, email, actor=_actor())
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(f"Enabled {email.strip().lower()}.")


@leaderboard_group.command("token")
@click.argument("email")
@click.option("--revoke", is_flag=True, help="Revoke every token of this user instead.")
@with_appcontext
def token_cmd(email: str, revoke: bool) -> None:
    """Print a new API token for a user (or revoke all of the user's tokens)."""
    from leaderboard.services import accounts

    with _session() as session:
        try:
            if revoke:
                n = accounts.revoke_tokens(session, email, actor=_actor())
                click.echo(f"Revoked {n} token(s).")
            else:
                click.echo(accounts.issue_token(session, email, actor=_actor()))
        except DomainError as exc:
            _fail(exc.message)


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
    resort: bool,
) -> bool:
    """Import one file; print its report; return whether it was stored."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.runs import Submission, Upload, submit_run

    target = resolve(session, task, subtask, set_slug)
    try:
        inputs = target.family.inputs_from_path(
            path, target.context(_settings().max_decompressed_bytes)
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
        options={"resort": resort},
    )
    label = f"{team_name}/{path.name}"
    try:
        run = submit_run(session, _store(), _settings(), sub, user=None, team=team_name, now=_now())
    except RunRejected as exc:
        click.echo(f"REJECTED {label}: {exc.message}")
        for issue in exc.issues:
            click.echo(f"    {issue.message}")
        return False
    official = {s.measure: s.official for s in run.scores if s.current}
    line = "  ".join(f"{m} {v}" for m, v in official.items())
    click.echo(f"imported {label} as run {run.id}: {line}")
    for t in run.report.get("tolerances", []):
        click.echo(f"    tolerated: {t}")
    for w in run.warnings:
        click.echo(f"    warning: {w}")
    score_file = path.with_name(path.name + ".score")
    if score_file.is_file():
        expected = parse_all_scores(score_file.read_text(errors="replace"))
        if expected is None:
            click.echo(f"    {score_file.name}: no ALL SCORES line")
        else:
            diffs = [
                f"{m}: ours {official.get(m)} official {v}"
                for m, v in expected.items()
                if official.get(m) != v
            ]
            click.echo(
                f"    {score_file.name}: "
                + ("matches" if not diffs else "DIFFERS " + "; ".join(diffs))
            )
    return True


@leaderboard_group.command("import-runs")
@click.argument("task")
@click.argument("subtask")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--team", help="Team of a single run file (created if missing).")
@click.option("--slot", help="Slot of a single run file, e.g. primary.")
@click.option("--name", help="Run name (default: the slot).")
@click.option("--description", default="", help="System description.")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option("--lenient", is_flag=True, help="Accept what the official scorer tolerated.")
@click.option("--resort", is_flag=True, help="With --lenient: re-sort into gold order first.")
@with_appcontext
def import_runs_cmd(
    task: str,
    subtask: str,
    paths: tuple[str, ...],
    team: str | None,
    slot: str | None,
    name: str | None,
    description: str,
    set_slug: str | None,
    lenient: bool,
    resort: bool,
) -> None:
    """Import runs as an organizer: one FILE with --team/--slot, or folders laid out as in 2016.

    A folder holds ``<TEAM>/subtask_<X>_<primary|contrastive1|contrastive2>.txt`` (the team is the
    folder name; ``README.txt`` becomes the description), or is itself one team's folder. A
    ``.score`` file beside a run is compared with our values.
    """
    failures = 0
    with _session() as session:
        try:
            for raw in paths:
                path = Path(raw)
                if path.is_file() or (team and slot):
                    if not team or not slot:
                        _fail("a single run file needs --team and --slot", 2)
                    assert team is not None and slot is not None
                    failures += not _import_one(
                        session,
                        task,
                        subtask,
                        set_slug,
                        team,
                        slot,
                        name,
                        description,
                        path,
                        lenient,
                        resort,
                    )
                    continue
                team_dirs = (
                    [path]
                    if any(_RUN_FILE.match(p.name) for p in path.iterdir())
                    else sorted(p for p in path.iterdir() if p.is_dir())
                )
                for tdir in team_dirs:
                    readme = tdir / "README.txt"
                    desc = (
                        readme.read_text(errors="replace")[:5000]
                        if readme.is_file()
                        else description
                    )
                    for f in sorted(tdir.iterdir()):
                        m = _RUN_FILE.match(f.name)
                        if m is None or m["subtask"] != subtask:
                            continue
                        failures += not _import_one(
                            session,
                            task,
                            subtask,
                            set_slug,
                            team or tdir.name,
                            m["slot"],
                            None,
                            desc,
                            f,
                            lenient,
                            resort,
                        )
        except DomainError as exc:
            _fail(exc.message)
    if failures:
        click.echo(f"{failures} run(s) were rejected.")
        sys.exit(1)


@leaderboard_group.command("add-baselines")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@with_appcontext
def add_baselines_cmd(task: str, subtask: str, set_slug: str | None) -> None:
    """Compute and store the subtask's standard baselines from the gold data."""
    from leaderboard.services.baselines import add_baselines
    from leaderboard.services.catalog import resolve

    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            runs = add_baselines(session, _store(), _settings(), target, actor=_actor())
        except DomainError as exc:
            _fail(exc.message)
            return
        for run in runs:
            official = {
                s.measure: s.official
                for s in run.scores
                if s.current and s.measure in run.report["shown"]
            }
            click.echo(f"{run.label}: " + "  ".join(f"{m} {v}" for m, v in official.items()))


@leaderboard_group.command("set-gold")
@click.argument("task")
@click.argument("subtask")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--set", "set_slug", help="Evaluation set, or for multi-part sets the part (e.g. headlines)."
)
@click.option("--variant", help="Qrels variant, e.g. lenient or manual.")
@with_appcontext
def set_gold_cmd(
    task: str, subtask: str, file: str, set_slug: str | None, variant: str | None
) -> None:
    """Add or replace a gold file (or qrels variant) and re-score every run against it."""
    from leaderboard.services.catalog import load_gold, resolve
    from leaderboard.services.gold import gold_target, set_gold

    path = Path(file)
    with _session() as session:
        try:
            target, role = gold_target(session, task, subtask, set_slug, variant)
            gold_file, report = set_gold(
                session,
                _store(),
                _settings(),
                target,
                role,
                path.read_bytes(),
                path.name,
                actor=_actor(),
            )
            refreshed = resolve(session, task, subtask, target.eval_set.slug)
            gold, _files = load_gold(
                session, _store(), refreshed, _settings().max_decompressed_bytes
            )
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(
            f"Stored {role} version {gold_file.version} of {task} {subtask} ({target.eval_set.slug}), SHA-256 {gold_file.sha256}."
        )
        for line in refreshed.family.describe_gold(gold, role):
            click.echo(f"    {line}")
        _echo_rescore(report)


def _echo_rescore(report: RescoreReport) -> None:
    click.echo(f"Re-scored {report.rescored} run(s).")
    for run_id, messages in report.failed.items():
        click.echo(
            f"    run {run_id} could not be re-scored (its previous scores stay current): {' '.join(messages)}"
        )


@leaderboard_group.command("rescore")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: every set of the subtask).")
@with_appcontext
def rescore_cmd(task: str, subtask: str, set_slug: str | None) -> None:
    """Re-score every run of the subtask against its current gold; old scores stay in history."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.gold import rescore_set

    with _session() as session:
        try:
            base = resolve(session, task, subtask, set_slug)
            slugs = [set_slug] if set_slug else [s.slug for s in base.subtask.eval_sets]
            for slug in slugs:
                target = resolve(session, task, subtask, slug)
                click.echo(f"{task} {subtask} ({slug}):")
                _echo_rescore(rescore_set(session, _store(), _settings(), target, actor=_actor()))
        except DomainError as exc:
            _fail(exc.message)


@leaderboard_group.command("add-task")
@click.argument("definition", type=click.Path(exists=True, dir_okay=False))
@with_appcontext
def add_task_cmd(definition: str) -> None:
    """Host a new task (or update one) from a task definition file and its gold files."""
    from leaderboard.services.catalog import install_definition

    try:
        d = load_definition_file(Path(definition))
    except DefinitionError as exc:
        _fail(f"the task definition was refused: {exc}", 2)
        return
    with _session() as session:
        install_definition(session, _store(), d, actor=_actor())
    subtasks = ", ".join(f"{s.slug} ({', '.join(x.slug for x in s.sets)})" for s in d.subtasks)
    click.echo(f"Task {d.slug} is ready: subtasks {subtasks}.")


@leaderboard_group.command("table")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="md", show_default=True
)
@click.option(
    "--official", is_flag=True, help="Print the frozen official table, exactly as frozen."
)
@with_appcontext
def table_cmd(task: str, subtask: str, set_slug: str | None, fmt: str, official: bool) -> None:
    """Print the ranking table: live (late and corrected runs marked), or the frozen official one."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.freeze import frozen_of
    from leaderboard.services.tables import live_table

    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            if official:
                snapshot = frozen_of(session, target)
                if snapshot is None:
                    raise NotFound(
                        f"{task} {subtask} ({target.eval_set.slug}) has no frozen official table yet."
                    )
                text = snapshot.renders["tex" if fmt == "latex" else fmt]
            else:
                text = FORMATS[fmt](live_table(session, _store(), target))
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(text, nl=not text.endswith("\n"))


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


@leaderboard_group.command("phase")
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
    type=click.Choice(["hidden", "visible"]),
    help="Hide results until released, or release them.",
)
@click.option("--daily-quota", type=int, help="Runs per team per UTC day (0: no quota).")
@click.option("--total-quota", type=int, help="Runs per team in the phase (0: no quota).")
@with_appcontext
def phase_cmd(
    task: str,
    subtask: str,
    name: str,
    set_slug: str | None,
    start: str | None,
    end: str | None,
    late: bool | None,
    corrections: bool | None,
    results: str | None,
    daily_quota: int | None,
    total_quota: int | None,
) -> None:
    """Create or update a phase; times are stored in UTC and shown with their zone."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.phases import PhaseChange, show_time, upsert_phase

    change = PhaseChange(
        set_slug=set_slug,
        start=_parse_time(start, "--start"),
        end=_parse_time(end, "--end"),
        late=late,
        corrections=corrections,
        results=results,
        daily_quota=daily_quota,
        total_quota=total_quota,
    )
    zone = _settings().display_timezone
    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            phase = upsert_phase(session, target, name, change, actor=_actor(), now=_now())
        except DomainError as exc:
            _fail(exc.message)
            return
        window = " to ".join(
            show_time(t, zone) if t else "open" for t in (phase.starts_at, phase.ends_at)
        )
        click.echo(
            f"Phase {phase.name} of {task} {subtask} on the {phase.eval_set.slug} set: {window}; "
            f"late runs {'accepted' if phase.late_allowed else 'refused'}; "
            f"corrections {'accepted' if phase.corrections_allowed else 'refused'}; "
            f"results {'hidden' if phase.results_hidden else 'visible'}; "
            f"quota {phase.daily_quota or 'none'} per day, {phase.total_quota or 'none'} in total."
        )


@leaderboard_group.command("freeze")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@with_appcontext
def freeze_cmd(task: str, subtask: str, set_slug: str | None) -> None:
    """Freeze the official ranking: an immutable snapshot with the hashes to verify it."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.freeze import freeze

    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            snapshot = freeze(session, _store(), _settings(), target, actor=_actor(), now=_now())
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(
            f"Frozen {task} {subtask} ({target.eval_set.slug}) at {snapshot.frozen_at.isoformat()}: "
            f"{len(snapshot.manifest['runs'])} rows; snapshot SHA-256 {snapshot.manifest_sha256}."
        )


@leaderboard_group.command("verify")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@with_appcontext
def verify_cmd(task: str, subtask: str, set_slug: str | None) -> None:
    """Re-score the frozen runs from the stored files and gold; exit 1 on any difference."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.freeze import verify

    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
            report = verify(session, _store(), _settings(), target)
        except DomainError as exc:
            _fail(exc.message)
            return
    for line in report.differences:
        click.echo(f"DIFFERENCE: {line}")
    if not report.ok:
        click.echo(
            f"The frozen table of {task} {subtask} could NOT be confirmed ({len(report.differences)} differences)."
        )
        sys.exit(1)
    click.echo(
        f"Verified: {report.checked_runs} frozen rows re-score to the snapshot; hashes match."
    )


@leaderboard_group.command("runs")
@click.argument("task")
@click.argument("subtask")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option(
    "--format", "fmt", type=click.Choice(LISTING_FORMAT_NAMES), default="md", show_default=True
)
@with_appcontext
def runs_cmd(task: str, subtask: str, set_slug: str | None, fmt: str) -> None:
    """Print the per-team run listing with the systems' descriptions (for the paper)."""
    from leaderboard.services.catalog import resolve
    from leaderboard.services.listing import LISTING_FORMATS, run_listing

    with _session() as session:
        try:
            target = resolve(session, task, subtask, set_slug)
        except DomainError as exc:
            _fail(exc.message)
            return
        click.echo(LISTING_FORMATS[fmt](run_listing(session, target)), nl=False)


@leaderboard_group.command("backup")
@click.argument("dest", type=click.Path(file_okay=False))
@with_appcontext
def backup_cmd(dest: str) -> None:
    """Copy the database (SQLite online backup or pg_dump) and the stored files into DEST."""
    from leaderboard.services.backup import backup

    with _session() as session:
        try:
            report = backup(session, _store(), _settings().database_url, Path(dest), _now())
        except DomainError as exc:
            _fail(exc.message)
            return
    click.echo(
        f"Backed up the database to {report.database_file} and {report.files_copied} stored files "
        f"({report.bytes_copied / 1e6:.1f} MB) to {dest}."
    )


def _now() -> datetime:
    return _ext()["clock"].now()


def _keep_freed_memory() -> None:
    """Let glibc's malloc keep and reuse freed memory in this short-lived process.

    Scoring a large run allocates and frees many arrays of tens of MB; by default each is
    mapped afresh and returned to the system, and faulting its pages in again costs more
    system time than the arithmetic on them. Elsewhere (another libc) this does nothing.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-2, 64 << 20)  # M_TOP_PAD: grow and shrink the heap 64 MB at a time
    except (OSError, AttributeError):
        pass


def main() -> None:
    """Entry point of the ``leaderboard`` console script."""
    if sys.argv[1:2] == ["score"]:
        # Offline scoring needs no database: skip building the application.
        _keep_freed_memory()
        leaderboard_group.main(prog_name="leaderboard")
        return
    from leaderboard.web import create_app

    app = create_app()
    with app.app_context():
        leaderboard_group.main(prog_name="leaderboard")
