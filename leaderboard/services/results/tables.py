"""Build ranking tables of a subtask and set from the stored runs and scores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import exists, func, or_, select
from sqlalchemy.orm import Session, selectinload

from leaderboard.models import Run, Team
from leaderboard.services.results.anonymity import PUBLIC, Audience, masked_names
from leaderboard.services.results.boards import best_runs, board_of, ladders, official_of
from leaderboard.services.results.parts import default_part, private_released, split_of
from leaderboard.services.results.table_analysis import with_analysis
from leaderboard.services.tasks.catalog import load_set
from leaderboard.states import RunKind, RunStatus
from leaderboard.storage import Store
from leaderboard.tables.model import Entry, Table, Value, ranks_of, with_shakeup
from leaderboard.tables.styles import build_table, entry_label
from leaderboard.targets import Target
from leaderboard.tasks.definition import subtask_heading
from leaderboard.tasks.families.base import Family


@dataclass(frozen=True)
class TableInputs:
    """What a table is built from: its entries and the style options."""

    entries: list[Entry]
    options: dict[str, Any]
    #: The part of the set the values are on ("all" unless the set is split).
    part: str = "all"
    #: The measure columns shown, when not every measure is (a Ladder board's official one).
    only: tuple[str, ...] | None = None


#: The footnote of a table on one part of a split set.
PART_NOTES = {
    "public": "Scores on the public part of the test set only; the private part is not shown "
    "until the organizers release it.",
    "private": "Scores on the private part of the test set (units never scored publicly before "
    "the release).",
}


#: Runs of a withdrawn team leave every live table (frozen snapshots keep what they showed).
NOT_WITHDRAWN = or_(
    Run.team_id.is_(None),
    ~exists().where(Team.id == Run.team_id, Team.withdrawn_at.is_not(None)),
)


def _runs(session: Session, target: Target, *conditions: Any) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(
                Run.subtask_id == target.subtask.id,
                Run.eval_set_id == target.eval_set.id,
                NOT_WITHDRAWN,
                *conditions,
            )
            .options(selectinload(Run.scores), selectinload(Run.team))
            .order_by(Run.id)
        )
    )


def has_active_runs(session: Session, target: Target) -> bool:
    """Return whether the target's set has any active run or baseline."""
    return bool(
        session.scalar(
            select(
                exists().where(
                    Run.eval_set_id == target.eval_set.id,
                    Run.status == RunStatus.ACTIVE,
                    NOT_WITHDRAWN,
                )
            )
        )
    )


def active_runs(session: Session, target: Target) -> list[Run]:
    """Return the active runs and baselines of a target's set, with teams and scores loaded."""
    return _runs(session, target, Run.status == RunStatus.ACTIVE)


def official_runs(session: Session, target: Target) -> list[Run]:
    """Return what the official ranking ranks: each slot's last on-time run, and the baselines.

    A late or corrected run never displaces the on-time run it replaced in the official table.
    """
    latest: dict[tuple[int | None, str], Run] = {}
    for run in _runs(session, target):
        if run.kind == RunKind.BASELINE:
            if run.status == RunStatus.ACTIVE:
                latest[(None, run.slot)] = run
            continue
        if run.late or run.corrected:
            continue
        key = (run.team_id, run.slot)
        if key not in latest or (run.created_at, run.id) > (latest[key].created_at, latest[key].id):
            latest[key] = run
    # A slot whose last on-time run was withdrawn is empty: the run it replaced stays out too.
    kept = (r for r in latest.values() if r.status != RunStatus.WITHDRAWN)
    return sorted(kept, key=lambda r: r.id)


def submitted_counts(session: Session, target: Target) -> dict[int, int]:
    """Return how many runs each team uploaded to the target's set, by team id, in one query.

    Every run counts whatever its status (replaced and withdrawn too: "best of N" is disclosed);
    a refused upload never became a run. The set is the phase's board, so a team's runs on it
    count whichever phase (or none, when imported) they were uploaded in.
    """
    rows = session.execute(
        select(Run.team_id, func.count(Run.id))
        .where(
            Run.subtask_id == target.subtask.id,
            Run.eval_set_id == target.eval_set.id,
            Run.kind == RunKind.RUN,
            Run.team_id.is_not(None),
        )
        .group_by(Run.team_id)
    )
    return {team_id: count for team_id, count in rows}


def _note(family: Family | None, flags: list[str]) -> str | None:
    """Return the markers of a score's flags the family notes, or None."""
    notes = family.flag_notes if family is not None else {}
    markers = [notes[f].marker for f in flags if f in notes]
    return "".join(markers) or None


def entry_for(
    run: Run,
    measures: tuple[str, ...],
    masked: str | None = None,
    *,
    family: Family | None = None,
    part: str = "all",
    submitted: int | None = None,
) -> Entry:
    """Turn a stored run into a table entry (baselines keep only their shown measures).

    ``masked`` is the team's anonymous name: the row then shows it, and its slot in place of
    the run's name and label, which could name the team. The family says which score flags
    and run notes mark the row (none without a family); ``submitted`` is the team's upload
    count on the set.
    """
    visible = run.visible_measures(measures)
    # An undefined value (None) is left out: its cell shows "—" and it is never ranked.
    values = {
        s.measure: Value(raw=s.value, official=s.official, note=_note(family, s.flags))
        for s in run.scores
        if s.current and s.part == part and s.measure in visible and s.value is not None
    }
    return Entry(
        kind="baseline" if run.kind == RunKind.BASELINE else "run",
        team=masked or (run.team.name if run.team is not None else None),
        run=run.slot if masked else str(run.report.get("run_tag", run.name)),
        slot=run.slot if run.kind == RunKind.RUN else None,
        values=values,
        late=run.late,
        corrected=run.corrected,
        label=None if masked else run.label,
        baseline_order=int(run.report.get("order", 0)),
        markers=tuple(n.marker for n in family.run_notes(run.report)) if family else (),
        run_id=run.id,
        submitted=submitted if run.kind == RunKind.RUN else None,
    )


def run_label(
    session: Session, target: Target, run: Run, audience: Audience, table: Table | None = None
) -> str:
    """Return how a reader sees a run named: its row's label, or as a row would name it.

    Every page, chart and export that names a run outside a table row goes through here, so a
    run that left the live table (withdrawn by its team, or its team withdrawn) is named by the
    anonymity rule like any other: "Team 2-primary" while its team is anonymous to the reader.
    """
    if table is not None:
        row = next((r for r in table.rows if r.run_id == run.id), None)
        if row is not None:
            return row.label
    masked = masked_names(session, target, audience).get(run.team_id or 0)
    return entry_label(
        target.family.table_style(target.definition),
        entry_for(run, (), masked, family=target.family),
    )


UNDEFINED_NOTE = (
    "— no value: the measure is undefined for the run (e.g. a correlation or kappa of a "
    "constant prediction); it is not ranked on that measure."
)


def _undefined_note(runs: list[Run], columns: tuple[str, ...], part: str) -> str:
    """Return the footnote for measures stored without a value, naming them, or ""."""
    names = sorted(
        {
            s.measure
            for r in runs
            for s in r.scores
            if s.current and s.part == part and s.value is None and s.measure in columns
        }
    )
    if not names:
        return ""
    return f"{UNDEFINED_NOTE} Undefined here: {', '.join(names)}."


def _measure_notes(runs: list[Run], columns: tuple[str, ...], part: str) -> list[str]:
    """Return one footnote per measure and distinct note of its scores (e.g. a signature)."""
    notes = {
        (s.measure, s.note)
        for r in runs
        for s in r.scores
        if s.current and s.part == part and s.note and s.measure in columns
    }
    order = {key: i for i, key in enumerate(columns)}
    return [f"{m}: {note}" for m, note in sorted(notes, key=lambda mn: (order[mn[0]], mn[1]))]


def table_inputs(
    session: Session,
    store: Store,
    target: Target,
    runs: list[Run],
    *,
    include_late: bool,
    masked: Mapping[int, str] | None = None,
    part: str = "all",
) -> TableInputs:
    """Return the entries and style options of a table over ``runs``, on one part of the set.

    ``masked`` maps the ids of teams shown anonymously to their shown names.
    """
    masked = masked or {}
    columns = tuple(m.key for m in target.family.measure_specs(target.context()))
    family = target.family
    counts = submitted_counts(session, target)
    entries = [
        entry_for(
            r,
            columns,
            masked.get(r.team_id or 0),
            family=family,
            part=part,
            submitted=counts.get(r.team_id or 0),
        )
        for r in runs
    ]
    # A run's own notes, keyed by the label the table gives a team's run.
    row_notes = {
        f"{masked.get(r.team.id) or r.team.name}-{r.slot}": notes
        for r in runs
        if r.team is not None
        and (notes := [[n.marker, n.text] for n in family.run_notes(r.report)])
    }
    footnotes = list(target.subtask_def.footnotes)
    note = target.subtask_def.options.get("baseline_note")
    if note and any(e.kind == "baseline" for e in entries):
        footnotes.append(f"† {note}")
    undefined = _undefined_note(runs, columns, part)
    if undefined:
        footnotes.append(undefined)
    footnotes.extend(_measure_notes(runs, columns, part))
    if part != "all":
        footnotes.append(PART_NOTES[part])
    options: dict[str, Any] = {
        "footnotes": footnotes,
        "note_texts": family.marker_texts(),
        "row_notes": row_notes,
        "include_late": include_late,
        "caption": caption_of(target),
        **target.family.style_options(target.context()),
        **target.definition.table,
    }
    if target.loaded and family.table_reads_gold():
        options.update(family.table_options(load_set(session, store, target).gold))
    return TableInputs(entries, options, part)


def caption_of(target: Target) -> str:
    """Return a table's caption: the task's title, the subtask's heading and the set's title."""
    heading = subtask_heading(target.subtask.slug, target.subtask_def.title)
    return f"{target.definition.title or target.task.slug} — {heading} — {target.eval_set.title}"


def render(
    target: Target, inputs: TableInputs, *, official: bool = False, frozen_at: str | None = None
) -> Table:
    """Build the table in the task's style."""
    measures = target.family.measure_specs(target.context())
    if inputs.only is not None:
        measures = [m for m in measures if m.key in inputs.only]
    table = build_table(
        target.family.table_style(target.definition),
        task=target.task.slug,
        subtask=target.subtask.slug,
        set=target.eval_set.slug,
        entries=inputs.entries,
        measures=measures,
        official=official,
        frozen_at=frozen_at,
        options=inputs.options,
    )
    return table if inputs.part == "all" else replace(table, part=inputs.part)


def live_table(
    session: Session,
    store: Store,
    target: Target,
    audience: Audience = PUBLIC,
    *,
    analysed: bool = True,
    part: str | None = None,
) -> Table:
    """Build the live table: every active run, late and corrected ones marked and ranked "as if".

    Team names are those the audience may see (anonymous phases hide the others'). With
    ``analysed``, the set's current analysis adds clusters and intervals. A split set's table is
    on ``part``, by default the part every reader sees (public until the private is released).
    """
    part = part or default_part(session, target)
    board = board_of(session, target)
    runs = active_runs(session, target)
    released: dict[int, float] = {}
    if board.kind == "best":
        baselines = [r for r in runs if r.kind == RunKind.BASELINE]
        runs = sorted(best_runs(session, target, part) + baselines, key=lambda r: r.id)
    elif board.kind == "ladder":
        baselines = [r for r in runs if r.kind == RunKind.BASELINE]
        state = ladders(session, store, target, replace(board, part=part))
        released = {
            s.best.id: s.released for s in state.values() if s.best and s.released is not None
        }
        chosen = [s.best for s in state.values() if s.best is not None]
        runs = sorted(chosen + baselines, key=lambda r: r.id)
    # It is a post-deadline view only once a late or corrected run exists.
    off_time = any(r.late or r.corrected for r in runs)
    masked = masked_names(session, target, audience)
    inputs = table_inputs(
        session, store, target, runs, include_late=off_time, masked=masked, part=part
    )
    if board.kind == "ladder":
        inputs = laddered(target, inputs, released)
    elif board.kind == "best":
        inputs.options["footnotes"].append(BEST_NOTE)
    table = render(target, inputs)
    if board.kind != "slots":
        table = replace(table, board=board.kind)
    if part != "public" and split_of(target) is not None and private_released(session, target):
        # Once the private part is out, each row says where it stood on the public board.
        public = live_table(session, store, target, audience, analysed=False, part="public")
        table = with_shakeup(table, ranks_of(public))
    # The stored analysis is of the classic table every reader sees by default.
    if analysed and board.kind == "slots" and part == default_part(session, target):
        return with_analysis(session, target, table)
    return table


#: The footnote of a "best" board.
BEST_NOTE = (
    "Each team's best run so far on the official measure, among every run it uploaded to this "
    "set (Runs: how many)."
)
#: The footnote of a Ladder board.
LADDER_NOTE = (
    "Ladder board: each team's value is released only when a run beats the team's previous "
    "one by more than noise (Blum & Hardt 2015), rounded as released; other runs are not shown."
)


def laddered(target: Target, inputs: TableInputs, released: Mapping[int, float]) -> TableInputs:
    """Return a table's inputs showing each team's released value on the official measure only."""
    key = official_of(target).key
    entries = []
    for entry in inputs.entries:
        if entry.kind == "run" and entry.run_id is not None and entry.run_id in released:
            value = released[entry.run_id]
            entry = replace(entry, values={key: Value(raw=value, official=repr(value))})
        entries.append(entry)
    options = {**inputs.options, "footnotes": [*inputs.options["footnotes"], LADDER_NOTE]}
    return TableInputs(entries, options, inputs.part, only=(key,))
