"""Put the set's current analysis into its table: ranked rows' clusters and rank intervals, cells' CIs.

The analysis used is the latest finished one of the set's current score revision made with the
official measure over the ranked runs; without one the table is left as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from leaderboard.models import Job
from leaderboard.services.results.report_scale import in_table_scale
from leaderboard.states import JobPurpose, JobStatus
from leaderboard.tables.model import CLUSTER_RULES, INTERVAL_NOTE, Cell, MeasureSpec, Row, Table
from leaderboard.targets import Target

CLUSTER_NOTE = (
    CLUSTER_RULES + " ({method}, {correction}-adjusted p < {alpha}): each "
    "cluster's first run is significantly worse than every run of the cluster above; runs within "
    "a cluster may or may not differ significantly. " + INTERVAL_NOTE
)
#: The one-line note on rank intervals; the number of resamples is the analysis'.
RANK_INTERVAL_NOTE = (
    "Rank interval (lo–hi): 2.5th–97.5th percentile of the run's rank over {samples} bootstrap "
    "resamples of the units; baselines and late runs are ranked as if, displacing no run."
)


def current_report(
    session: Session, target: Target, official: str, measure: str | None = None
) -> dict[str, Any] | None:
    """Return the report of the set's current analysis of ranked runs on a measure, if any.

    The measure is the official one unless given; a job's measure "" is the official one.
    """
    chosen = (
        Job.measure.in_(("", official)) if measure in (None, official) else Job.measure == measure
    )
    analysis = session.scalar(
        select(Job)
        .where(
            Job.eval_set_id == target.eval_set.id,
            Job.revision == target.eval_set.revision,
            Job.purpose == JobPurpose.TABLE,
            Job.status == JobStatus.DONE,
            Job.runs == "ranked",
            chosen,
        )
        .order_by(Job.id.desc())
        .limit(1)
        .options(undefer(Job.report))
    )
    return analysis.report if analysis is not None else None


def with_analysis(session: Session, target: Target, table: Table) -> Table:
    """Return the table with the set's current analysis: clusters and intervals."""
    official = table.official_key
    report = current_report(session, target, official)
    if report is None:
        return table
    return annotate(table, report, target.family.measure_specs(target.context()))


def annotate(table: Table, report: dict[str, Any], specs: list[MeasureSpec]) -> Table:
    """Return the table with a report's clusters and rank intervals on its ranked rows, CIs on cells.

    Clusters and rank intervals hold only for the runs they were computed on: a table ranking
    other runs (the official table without the late ones) gets the CIs, which are per run, but
    neither rules nor rank intervals.
    """
    by_key = {s.key: s for s in specs}
    report = in_table_scale(report, {s.key: s.scale for s in specs})
    label_ids = dict(zip(report["runs"], report["run_ids"], strict=True))
    ranked = {r.run_id for r in table.run_rows(report["measure"], "ranked")}
    cluster_of: dict[int, int] = {}
    rank_of: dict[int, tuple[int, int]] = {}
    if ranked == set(report["run_ids"]):
        for n, group in enumerate(report["clusters"], 1):
            for label in group:
                cluster_of[label_ids[label]] = n
        # Reports made before rank intervals have none.
        found_ranks: dict[str, list[int]] = report.get("rank_intervals", {})
        rank_of = {int(run_id): (low, high) for run_id, (low, high) in found_ranks.items()}
    intervals: dict[str, dict[str, list[float]]] = report.get("intervals", {})

    def cell(run_id: int | None, key: str, value: Cell | None) -> Cell | None:
        found = intervals.get(str(run_id), {}).get(key)
        if value is None or found is None:
            return value
        spec = by_key[key]
        low, high = found
        places = spec.display_decimals
        return replace(value, ci=(low, high), ci_display=f"[{low:.{places}f}, {high:.{places}f}]")

    rows: list[Row] = [
        replace(
            row,
            cluster=cluster_of.get(row.run_id) if row.run_id is not None else None,
            rank_interval=rank_of.get(row.run_id) if row.run_id is not None else None,
            cells={k: cell(row.run_id, k, v) for k, v in row.cells.items()},
        )
        for row in table.rows
    ]
    note = CLUSTER_NOTE if cluster_of else INTERVAL_NOTE
    text = note.format(
        method=report["method"], correction=report["correction"], alpha=report["alpha"]
    )
    notes = [text]
    if any(row.rank_interval is not None for row in rows):
        samples = report.get("interval_samples") or report["samples"]
        notes.append(RANK_INTERVAL_NOTE.format(samples=f"{samples:,}"))
    return replace(table, rows=tuple(rows), footnotes=(*table.footnotes, *notes))
