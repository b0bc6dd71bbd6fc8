"""Per-query diagnostics of a run: its value per query against the median and best of the
ranked runs, with who may see them."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.db import get_row
from leaderboard.models import Run, Score, User
from leaderboard.scoring.diagnostics import QueryComparison
from leaderboard.services.campaign.phases import hidden_phase, phases_of
from leaderboard.services.common.errors import InvalidInput, NotFound
from leaderboard.services.results.anonymity import PUBLIC, Audience
from leaderboard.services.results.boards import laddered
from leaderboard.services.results.parts import set_part, split_of
from leaderboard.services.results.query_summaries import (
    comparison,
    in_table_scale,
    per_query_values,
    summarized_revision,
)
from leaderboard.services.results.tables import run_label
from leaderboard.services.tasks.catalog import load_set, resolve
from leaderboard.states import RunStatus
from leaderboard.storage import Store
from leaderboard.tables.model import MeasureSpec, official_key
from leaderboard.targets import Target


@dataclass(frozen=True)
class RunDiagnostics:
    """A run's per-query comparison on one measure, and how many runs the medians cover."""

    run: Run
    target: Target
    measure: str
    label: str
    lower_is_better: bool
    rows: list[QueryComparison]
    runs_compared: int
    #: What the values are per, as the task's family names it ("query", "item", ...).
    unit: str = "query"
    units: str = "queries"
    #: Whether the set's summary of the measure is stored yet (the worker computes it).
    summarized: bool = True
    #: Whether it is of the set's current scores (False: being updated for the newest runs).
    current: bool = True
    #: The task's official measure as the table labels it, and this run's value of it as shown
    #: ("" when not scored): named first, also where its per-unit values are another measure's.
    official_label: str = ""
    official_value: str = ""
    #: Whether ``measure`` is the official one (else the official one is not a mean per unit).
    is_official: bool = True


@dataclass(frozen=True)
class DiagnosticsAccess:
    """A run whose diagnostics page a reader may open; ``hidden``: its values are not shown."""

    run: Run
    #: The reader's own run in a phase that hides the set's scores: the page says so instead.
    hidden: bool = False
    #: Hidden because the set's board is a Ladder, which shows released values only.
    ladder: bool = False


def diagnostics_access(session: Session, user: User | None, run_id: int) -> DiagnosticsAccess:
    """Return whether ``user`` may open a run's diagnostics page, and see its values; else NotFound.

    Organizers see every run's, replaced ones included; a team sees its own replaced runs'
    (nobody else knows of them). While a phase hides the set's scores a team opens its own
    runs' page, which says the values are hidden (they are scores), and nobody else opens any.
    Once visible, a team sees its own runs', and anyone every run's if the phase makes
    diagnostics public.
    """
    run = get_row(session, Run, run_id)
    if run is None:
        raise NotFound(f"No run {run_id}.")
    if user is not None and user.is_organizer:
        return DiagnosticsAccess(run)
    # A hidden task's runs are gone with it.
    if run.subtask.task.hidden:
        raise NotFound(f"No run {run_id}.")
    own = user is not None and run.team_id is not None and user.team_id == run.team_id
    # A replaced run keeps its values; only those who see the run itself (its team) learn of it.
    if run.status == RunStatus.REPLACED and not own:
        raise NotFound(f"No run {run_id}.")
    # A Ladder board shows released values only: a run's values per unit are probes too.
    ladder = laddered(session, run)
    if hidden_phase(session, run.eval_set) is not None or ladder:
        if own:
            return DiagnosticsAccess(run, hidden=True, ladder=ladder)
        raise NotFound(f"No run {run_id}.")
    public = any(
        p.public_diagnostics
        for p in phases_of(session, run.subtask)
        if p.eval_set_id == run.eval_set_id
    )
    if not (own or public):
        raise NotFound(f"No run {run_id}.")
    return DiagnosticsAccess(run)


def target_of(session: Session, run: Run) -> Target:
    """Return the target (task, subtask, set) a run was scored on."""
    subtask = run.subtask
    return resolve(session, subtask.task.slug, subtask.slug, run.eval_set.slug)


def shown_name(session: Session, run: Run, audience: Audience) -> tuple[str, str]:
    """Return a run's name as this audience sees it, whatever its state, and its family's unit."""
    target = target_of(session, run)
    return run_label(session, target, run, audience), target.family.unit


def diagnosable_run(session: Session, user: User | None, run_id: int) -> Run:
    """Return a run whose diagnostics ``user`` may see, values included; NotFound for any other."""
    access = diagnostics_access(session, user, run_id)
    if access.hidden:
        raise NotFound(f"No run {run_id}.")
    return access.run


def run_diagnostics(
    session: Session,
    store: Store,
    run: Run,
    measure: str | None = None,
    audience: Audience = PUBLIC,
) -> RunDiagnostics:
    """Return the run's per-query values on a measure, against the set's stored summary.

    The measure asked for, else the official one, else the first with per-query values; the
    rows are empty while the worker has not summarized the set yet.
    """
    target = target_of(session, run)
    specs = {s.key: s for s in target.family.measure_specs(target.context())}
    if measure is not None and measure not in specs:
        raise InvalidInput(f"This task has no measure {measure!r}.")
    candidates = [measure] if measure else [official_key(list(specs.values())), *specs]
    part = set_part(session, run.eval_set)
    split = None if split_of(target) is None else load_set(session, store, target).split
    for key in candidates:
        values = per_query_values(session, [run.id], key, part, split).get(run.id)
        if values is not None:
            break
    else:
        raise InvalidInput("None of this run's measures is a mean over queries.")
    lower = specs[key].lower_is_better
    stored = comparison(session, run, key, values, lower)
    official = specs[official_key(list(specs.values()))]
    # Summarized with no row for the measure: no ranked run has its values (baselines only).
    revision = summarized_revision(session, run.eval_set_id)
    return RunDiagnostics(
        run,
        target,
        key,
        run_label(session, target, run, audience),
        lower,
        in_table_scale(stored.rows, specs[key].scale) if stored else [],
        stored.runs if stored else 0,
        target.family.unit,
        target.family.unit_plural,
        summarized=stored is not None or revision is not None,
        current=stored.current if stored is not None else revision == run.eval_set.revision,
        official_label=official.label,
        official_value=_shown_value(session, run, official),
        is_official=key == official.key,
    )


def _shown_value(session: Session, run: Run, spec: MeasureSpec) -> str:
    """Return a run's current value of a measure as the table shows it, or "" without one."""
    value = session.scalar(
        select(Score.value).where(
            Score.run_id == run.id,
            Score.measure == spec.key,
            Score.part == set_part(session, run.eval_set),
            Score.current.is_(True),
        )
    )
    return "" if value is None else format(value * spec.scale, f".{spec.display_decimals}f")
