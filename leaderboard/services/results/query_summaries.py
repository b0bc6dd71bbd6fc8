"""Per-query summaries of a set's ranked runs, stored when its scores change.

A run's diagnostics page compares its per-query values with the best and median of the ranked
runs. Those depend on every run of the set, so the worker computes them once per revision of
the set (it looks for sets whose revision moved past their summaries every few seconds), with
each run's chart of the measure its page shows first; pages read the rows and the stored charts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session, undefer

from leaderboard.models import EvalSet, QuerySummary, Run, Score, SummarizedSet
from leaderboard.scoring.diagnostics import QueryComparison, compare, summarize
from leaderboard.scoring.diagnostics import QuerySummary as SummaryRow
from leaderboard.services.results import chart_files
from leaderboard.services.results.anonymity import ALL_NAMES
from leaderboard.services.results.chart_files import Chart
from leaderboard.services.results.parts import set_part
from leaderboard.services.results.tables import live_table
from leaderboard.services.results.unit_values import kept_values
from leaderboard.services.tasks.catalog import load_set, resolve
from leaderboard.storage import Store
from leaderboard.tables.model import MeasureSpec, Row, official_key
from leaderboard.targets import Target
from leaderboard.tasks.splitting import SetSplit


def stale_sets(session: Session) -> list[tuple[int, int]]:
    """Return (set id, revision) of every set whose summaries are behind its revision."""
    rows = session.execute(
        select(EvalSet.id, EvalSet.revision)
        .outerjoin(SummarizedSet, SummarizedSet.eval_set_id == EvalSet.id)
        .where(or_(SummarizedSet.revision.is_(None), SummarizedSet.revision != EvalSet.revision))
        .order_by(EvalSet.id)
    ).all()
    return [(int(set_id), int(revision)) for set_id, revision in rows]


def summarized_revision(session: Session, eval_set_id: int) -> int | None:
    """Return the revision of the set whose summaries are stored, or None if none are."""
    row = session.get(SummarizedSet, eval_set_id)
    return row.revision if row is not None else None


def is_stale(session: Session, eval_set: EvalSet) -> bool:
    """Return whether the set's summaries are behind its revision."""
    return summarized_revision(session, eval_set.id) != eval_set.revision


def per_query_values(
    session: Session, run_ids: list[int], measure: str, part: str, split: SetSplit | None
) -> dict[int, dict[str, float]]:
    """Return each run's current per-query values of a measure on a part (others left out).

    A part's values kept on all units are derived with the set's ``split``.
    """
    if not run_ids:
        return {}
    scores = session.scalars(
        select(Score)
        .where(
            Score.run_id.in_(run_ids),
            Score.measure == measure,
            Score.part.in_({part, "all"}),
            Score.current.is_(True),
        )
        .options(undefer(Score.per_query))
    ).all()
    whole = {s.run_id: s for s in scores if s.part == "all"}
    chosen = ((s, kept_values(s, whole.get(s.run_id), split)[0]) for s in scores if s.part == part)
    return {s.run_id: values for s, values in chosen if values is not None}


@dataclass(frozen=True)
class Summarized:
    """What ``summarize_set`` wrote: how many measures, and the runs' charts to draw next."""

    measures: int
    charts: list[Chart]


def summarize_set(session: Session, store: Store, eval_set_id: int) -> Summarized:
    """Write the set's per-query summaries at its current revision; return its runs' charts.

    Each measure with per-query values gets the best, median and worst value per query over the
    runs ranked on it (baselines left out); each run in the table gets the SVG chart of its
    differences on the measure its page shows first (the official one if it is a mean over
    queries), drawn after the summaries commit. Summaries another worker stored meanwhile make
    the commit fail (IntegrityError): the caller then draws nothing.
    """
    eval_set = session.get(EvalSet, eval_set_id)
    if eval_set is None:
        return Summarized(0, [])
    revision = eval_set.revision
    subtask = eval_set.subtask
    target = resolve(session, subtask.task.slug, subtask.slug, eval_set.slug)
    table = live_table(session, store, target, ALL_NAMES, analysed=False)
    part, split = set_part(session, eval_set), load_set(session, store, target).split
    specs = target.family.measure_specs(target.context())
    stored: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for spec in specs:
        # The median and best are of the ranked runs only: a baseline is placed in the table
        # "as if" it took part, but the runs a team compares itself with are the teams'.
        ranked = [
            r.run_id
            for r in table.run_rows(spec.key, "ranked")
            if r.run_id is not None and r.kind != "baseline"
        ]
        values = per_query_values(session, ranked, spec.key, part, split)
        if not values:
            continue
        summary = summarize(list(values.values()), lower_is_better=spec.lower_is_better)
        stored[spec.key] = {
            q: [s.best, s.median, s.worst, s.runs] for q, s in sorted(summary.items())
        }
        counts[spec.key] = len(values)
    # Read before the writes below, which take SQLite's write lock until the commit.
    charts = _run_charts(session, target, table.rows, specs, stored, part, split)
    session.execute(delete(QuerySummary).where(QuerySummary.eval_set_id == eval_set_id))
    session.add_all(
        QuerySummary(
            eval_set_id=eval_set_id, measure=k, revision=revision, runs=counts[k], values=v
        )
        for k, v in stored.items()
    )
    session.merge(SummarizedSet(eval_set_id=eval_set_id, revision=revision))
    return Summarized(len(stored), charts)


def _run_charts(
    session: Session,
    target: Target,
    rows: Sequence[Row],
    specs: Sequence[MeasureSpec],
    stored: dict[str, dict[str, Any]],
    part: str,
    split: SetSplit | None,
) -> list[Chart]:
    """Return each table run's difference chart on the measure its page shows first."""
    # The measure a run's page shows first: the official one, else the first with values.
    shown = next((k for k in [official_key(specs), *(s.key for s in specs)] if k in stored), None)
    if shown is None:
        return []
    spec = next(s for s in specs if s.key == shown)
    run_ids = [r.run_id for r in rows if r.run_id is not None]
    own = per_query_values(session, run_ids, shown, part, split)
    summary = _summary_of(stored[shown])
    charts: list[Chart] = []
    for run_id in run_ids:
        if run_id in own:
            compared = compare(own[run_id], summary, lower_is_better=spec.lower_is_better)
            compared = in_table_scale(compared, spec.scale)
            charts.append(("difference", "svg", chart_data(compared, shown, target)))
    return charts


def in_table_scale(rows: list[QueryComparison], factor: float) -> list[QueryComparison]:
    """Return per-query rows in the table's scale: stored values times the column's factor."""
    if factor == 1:
        return rows
    return [
        QueryComparison(
            r.query,
            r.value * factor,
            r.median * factor,
            r.best * factor,
            r.value * factor - r.median * factor,
        )
        for r in rows
    ]


def _summary_of(values: dict[str, Any]) -> dict[str, SummaryRow]:
    """Return a stored summary's rows as ``compare`` reads them."""
    return {
        q: SummaryRow(q, best, median, worst, int(n))
        for q, (best, median, worst, n) in values.items()
    }


def chart_data(rows: list[QueryComparison], measure: str, target: Target) -> dict[str, Any]:
    """Return what a run's difference chart draws, as its page and the worker build it."""
    return chart_files.difference_data(
        [r.query for r in rows],
        [r.difference for r in rows],
        measure=measure,
        unit=target.family.unit_plural,
    )


@dataclass(frozen=True)
class StoredComparison:
    """A run's queries against a stored summary; ``current``: the summary is of this revision."""

    rows: list[QueryComparison]
    runs: int
    current: bool


def comparison(
    session: Session, run: Run, measure: str, values: dict[str, float], lower_is_better: bool
) -> StoredComparison | None:
    """Return a run's values against the set's stored summary of a measure, or None if none."""
    row = session.get(QuerySummary, (run.eval_set_id, measure))
    if row is None:
        return None
    rows = compare(values, _summary_of(row.values), lower_is_better=lower_is_better)
    return StoredComparison(rows, row.runs, row.revision == run.eval_set.revision)
