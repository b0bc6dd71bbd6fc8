"""Build ranking tables of a subtask and set from the stored runs and scores."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.models import Run
from leaderboard.services.catalog import Target, load_gold
from leaderboard.storage import FileStore
from leaderboard.tables.model import Entry, Table, Value
from leaderboard.tables.styles import build_table


def active_runs(session: Session, target: Target) -> list[Run]:
    """Return the active runs and baselines of a target's set, with teams and scores loaded."""
    return list(
        session.scalars(
            select(Run)
            .where(
                Run.subtask_id == target.subtask.id,
                Run.eval_set_id == target.eval_set.id,
                Run.status == "active",
            )
            .options(selectinload(Run.scores), selectinload(Run.team))
            .order_by(Run.id)
        )
    )


#: Score flags shown as cell notes: flag -> (marker, footnote text).
FLAG_NOTES = {
    "constant-on-scored": ("§", "system output constant on the scored pairs; counted as 0"),
    "avgrec-undefined": (
        "¶",
        "no scored question has a relevant candidate, so AvgRec is undefined; counted as 0",
    ),
}


def entry_for(run: Run, measures: tuple[str, ...]) -> Entry:
    """Turn a stored run into a table entry (baselines keep only their shown measures)."""
    shown = set(run.report.get("shown", measures)) if run.kind == "baseline" else set(measures)
    values = {
        s.measure: Value(raw=s.value, official=s.official, note=_note(s.flags))
        for s in run.scores
        if s.current and s.measure in shown
    }
    truncated = "truncation" in run.report
    return Entry(
        kind="baseline" if run.kind == "baseline" else "run",
        team=run.team.name if run.team is not None else None,
        run=str(run.report.get("run_tag", run.name)),
        slot=run.slot if run.kind == "run" else None,
        values=values,
        late=run.late,
        corrected=run.corrected,
        label=run.label,
        baseline_order=int(run.report.get("order", 0)),
        markers=("‡",) if truncated else (),
        run_id=run.id,
    )


def _note(flags: list[str]) -> str | None:
    markers = [FLAG_NOTES[f][0] for f in flags if f in FLAG_NOTES]
    return "".join(markers) or None


def live_table(
    session: Session, store: FileStore, target: Target, *, include_late: bool = False
) -> Table:
    """Build the live table of a target's set in its task's table style."""
    definition = target.definition
    runs = active_runs(session, target)
    entries = [entry_for(r, target.subtask_def.measures) for r in runs]
    truncation_notes = {
        f"{r.team.name}-{r.slot}": r.report["truncation"]["note"]
        for r in runs
        if r.team is not None and "truncation" in r.report
    }
    footnotes = list(target.subtask_def.footnotes)
    note = target.subtask_def.options.get("baseline_note")
    if note and any(e.kind == "baseline" for e in entries):
        footnotes.append(f"† {note}")
    options: dict[str, object] = {
        "footnotes": footnotes,
        "note_texts": {marker: text for marker, text in FLAG_NOTES.values()},
        "truncation_notes": truncation_notes,
        "include_late": include_late,
        **definition.table,
    }
    if target.loaded:
        gold, _files = load_gold(session, store, target)
        options.update(target.family.table_options(gold))
    return build_table(
        definition.table_style,
        task=target.task.slug,
        subtask=target.subtask.slug,
        set=target.eval_set.slug,
        entries=entries,
        measures=target.family.measure_specs(target.context(0)),
        options=options,
    )
