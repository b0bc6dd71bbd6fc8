"""Where runs stand: live ranks, a team's runs of a subtask, and the best score over time.

The live rank of a run is what the live table shows for it: its rank, or "as if N" for a late
or corrected run and for a run outside the ranked slots (placed as a late run of a ranked slot
would be, without displacing anyone). The progress of a set is each team's best official score
over time, drawn from the runs that count in the live ranking (the table's on-time ranked rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.models import Phase, Run, Team, User
from leaderboard.services.campaign.phases import current_phase, may_withdraw, remaining_quota
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.results.anonymity import Audience
from leaderboard.services.results.boards import TeamStatuses, laddered, official_of, team_statuses
from leaderboard.services.results.parts import default_part, set_part
from leaderboard.services.results.tables import (
    TableInputs,
    active_runs,
    live_table,
    render,
    table_inputs,
)
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import RunKind
from leaderboard.storage import Store
from leaderboard.tables.model import MISSING, MeasureSpec
from leaderboard.targets import Target

#: What precedes the rank of a run the live table ranks only "as if".
AS_IF = "as if"


def live_ranks(session: Session, store: Store, target: Target) -> dict[int, str]:
    """Return each active team run's live rank: "3", or "as if 3" for runs ranked only as if.

    Names do not change ranks, so one answer serves every audience. A run outside the ranked
    slots gets the rank the table's style would give it as a late run of the first ranked slot,
    which is ranked against the on-time runs without displacing them.
    """
    runs = active_runs(session, target)
    off_time = any(r.late or r.corrected for r in runs)
    # On the part the live table shows: ranks on all units would betray the private part.
    part = default_part(session, target)
    inputs = table_inputs(session, store, target, runs, include_late=off_time, part=part)
    ranks: dict[int, str] = {}
    outside: set[int] = set()
    for row in render(target, inputs).rows:
        if row.kind != "run" or row.run_id is None:
            continue
        if row.rank is None:
            outside.add(row.run_id)
        elif row.rank_marker:
            ranks[row.run_id] = f"{AS_IF} {row.rank}"
        else:
            ranks[row.run_id] = str(row.rank)
    if outside:
        slot = target.definition.runs.ranked_slots[0]
        entries = [
            replace(e, slot=slot, late=True) if e.run_id in outside else e for e in inputs.entries
        ]
        placed = render(
            target, TableInputs(entries, {**inputs.options, "include_late": True}, inputs.part)
        )
        for row in placed.rows:
            if row.run_id in outside and row.rank is not None:
                ranks[row.run_id] = f"{AS_IF} {row.rank}"
    return ranks


@dataclass(frozen=True)
class SubmissionRow:
    """One run of the team as its subtask page lists it."""

    run: Run
    #: The official measure's value as the table shows it; None while the scores are hidden.
    score: str | None
    #: Its label ("MAP"), or None while hidden.
    measure: str | None
    #: The live rank ("2", "as if 3"); None when hidden or not in the live table.
    rank: str | None
    hidden: bool
    withdrawable: bool


@dataclass(frozen=True)
class TeamSubmissions:
    """A team's runs in a subtask, newest first, and what it may still upload to the set shown."""

    team: Team
    rows: list[SubmissionRow]
    #: The phase open now on the set shown (None: uploads are closed).
    phase: Phase | None
    #: Runs left today and in the phase (None: no such quota).
    quota: dict[str, int | None]


def team_submissions(
    session: Session,
    team: Team,
    target: Target,
    viewer: User,
    now: datetime,
    ranks: Callable[[Target], dict[int, str]],
    store: Store,
) -> TeamSubmissions:
    """Return the team's runs in the target's subtask (every set) and its remaining quota.

    Scores and ranks are given only where the viewer may see the set's results; ``ranks``
    returns a set's live ranks (the caller caches them by the set's revision). On a Ladder
    board a run shows the Ladder's verdict, never its own score.
    """
    runs = list(
        session.scalars(
            select(Run)
            .where(
                Run.team_id == team.id,
                Run.subtask_id == target.subtask.id,
                Run.kind == RunKind.RUN,
            )
            .options(selectinload(Run.scores), selectinload(Run.eval_set))
            .order_by(Run.created_at.desc(), Run.id.desc())
        )
    )
    targets: dict[int, Target] = {target.eval_set.id: target}
    shown_ranks: dict[int, dict[int, str] | None] = {}
    # A team's Ladder is replayed once per set for all its runs listed.
    ladder_of: dict[int, TeamStatuses | None] = {}
    rows = []
    for run in runs:
        set_id = run.eval_set_id
        if set_id not in targets:
            targets[set_id] = resolve(
                session, target.task.slug, target.subtask.slug, run.eval_set.slug
            )
        if set_id not in shown_ranks:
            visible = hiding_phase(session, run.eval_set, viewer) is None
            shown_ranks[set_id] = ranks(targets[set_id]) if visible else None
        set_ranks = shown_ranks[set_id]
        score = measure = None
        if set_ranks is not None:
            spec = official_of(targets[set_id])
            measure = spec.label
            score = _display(run, spec, set_part(session, run.eval_set))
            if laddered(session, run) and run.kind == RunKind.RUN and run.team_id is not None:
                if set_id not in ladder_of:
                    ladder_of[set_id] = team_statuses(session, store, targets[set_id], run.team_id)
                statuses = ladder_of[set_id]
                score = "" if statuses is None else f"Ladder: {statuses.of(run).text}"
        rows.append(
            SubmissionRow(
                run=run,
                score=score,
                measure=measure,
                rank=set_ranks.get(run.id) if set_ranks is not None else None,
                hidden=set_ranks is None,
                withdrawable=may_withdraw(session, run, now),
            )
        )
    phase = current_phase(session, target.subtask, now, target.eval_set)
    return TeamSubmissions(team, rows, phase, remaining_quota(session, phase, team, now))


def _display(run: Run, spec: MeasureSpec, part: str) -> str:
    """Return a run's current value of a measure as the table shows it ("—" if it has none)."""
    score = run.current_score(spec.key, part)
    if score is None or not score.official:
        return MISSING
    return format(float(score.official) * spec.scale, f".{spec.display_decimals}f")


def progress(session: Session, store: Store, target: Target, audience: Audience) -> dict[str, Any]:
    """Return each team's best official score so far at each of its runs that count, over time.

    The runs that count are those the live table ranks on time (a late or corrected run never
    displaces on-time runs, and replaced runs are no longer in the table); teams are named as
    the live table names them to ``audience``. Values are in the table's scale, unrounded.
    """
    table = live_table(session, store, target, audience, analysed=False)
    spec = official_of(target)
    counted = [
        (row.run_id, row.team or "", cell.value)
        for row in table.rows
        if row.kind == "run"
        and row.run_id is not None
        and row.rank is not None
        and not row.rank_marker
        and (cell := row.cells.get(spec.key)) is not None
    ]
    times: dict[int, datetime] = {}
    if counted:
        found = session.execute(
            select(Run.id, Run.created_at).where(Run.id.in_([c[0] for c in counted]))
        ).all()
        times = {int(run_id): at for run_id, at in found}
    by_team: dict[str, list[tuple[datetime, int, float]]] = {}
    for run_id, team, value in counted:
        by_team.setdefault(team, []).append((times[run_id], run_id, value))
    lines: list[tuple[str, list[list[Any]], float]] = []
    for team, points in by_team.items():
        ordered = sorted(points)
        bests = best_so_far([value for _at, _id, value in ordered], spec.lower_is_better)
        series = [
            [_iso(at), value, best] for (at, _id, value), best in zip(ordered, bests, strict=True)
        ]
        lines.append((team, series, bests[-1]))
    # Best final score first (ties by name), as a legend reads best.
    sign = 1 if spec.lower_is_better else -1
    lines.sort(key=lambda t: (sign * t[2], t[0].casefold(), t[0]))
    teams = [{"team": team, "points": series} for team, series, _best in lines]
    return {
        "measure": spec.label,
        "lower_is_better": spec.lower_is_better,
        "set": target.eval_set.title,
        "teams": teams,
    }


def best_so_far(values: list[float], lower_is_better: bool) -> list[float]:
    """Return the best of the values up to each one, in the measure's direction."""
    better = min if lower_is_better else max
    out: list[float] = []
    for value in values:
        out.append(value if not out else better(out[-1], value))
    return out


def _iso(at: datetime) -> str:
    """Return a UTC time in ISO 8601 with a Z."""
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")
