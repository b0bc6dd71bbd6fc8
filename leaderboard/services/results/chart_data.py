"""What an analysis' charts draw for a reader: labelled rows, the p-value matrix.

The pages and the worker build a chart from the same numbers, so a chart the worker drew when
the analysis finished is the very file a page later asks for (its key is the hash of them).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, undefer

from leaderboard.models import Job
from leaderboard.services.results import chart_files
from leaderboard.services.results.anonymity import PUBLIC, Audience
from leaderboard.services.results.chart_files import Chart
from leaderboard.services.results.report_scale import in_table_scale, scales_of
from leaderboard.services.results.tables import live_table
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import JobPurpose, JobStatus
from leaderboard.storage import Store
from leaderboard.targets import Target

#: The charts of an analysis.
CHARTS = ("measure", "matrix")
#: The formats every chart is drawn in.
FORMATS = ("svg", "pdf")


def matrix(report: dict[str, Any]) -> list[list[float | None]]:
    """Return the adjusted p-values as a runs × runs matrix (upper triangle, table order)."""
    index = {label: i for i, label in enumerate(report["runs"])}
    size = len(report["runs"])
    grid: list[list[float | None]] = [[None] * size for _ in range(size)]
    for pair in report["pairs"]:
        grid[index[pair["a"]]][index[pair["b"]]] = pair["p_adjusted"]
    return grid


def measure_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Return each tested run's label, value, interval and cluster in table order."""
    clusters = {label: n for n, group in enumerate(report["clusters"], 1) for label in group}
    rows = []
    for label, run_id in zip(report["runs"], report["run_ids"], strict=True):
        interval = report["intervals"].get(str(run_id), {}).get(report["measure"])
        rows.append(
            {
                "label": label,
                "value": report["values"][str(run_id)],
                "interval": list(interval) if interval else None,
                "cluster": clusters[label],
            }
        )
    return rows


def relabel(report: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    """Return the report with each run's label replaced by its name in ``names``.

    The analysis names runs for organizers; a run the reader's table lacks (never, while the
    analysis is current) is named by its place alone, never by the organizers' name.
    """
    new = {
        old: names.get(run_id) or f"#{n}"
        for n, (old, run_id) in enumerate(zip(report["runs"], report["run_ids"], strict=True), 1)
    }
    return {
        **report,
        "runs": [new[label] for label in report["runs"]],
        "pairs": [{**p, "a": new[p["a"]], "b": new[p["b"]]} for p in report["pairs"]],
        "clusters": [[new[label] for label in group] for group in report["clusters"]],
    }


def table_labels(
    session: Session, store: Store, target: Target, audience: Audience
) -> dict[int, str]:
    """Return each run's label in this audience's live table."""
    table = live_table(session, store, target, audience, analysed=False)
    return {r.run_id: r.label for r in table.rows if r.run_id is not None}


def chart_spec(report: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    """Return the kind and data of one chart of a report as its reader sees it."""
    if name == "measure":
        return "measure", chart_files.measure_data(measure_rows(report), report["measure"])
    return "matrix", chart_files.matrix_data(report["runs"], matrix(report), report["alpha"])


def report_charts(
    session: Session, store: Store, target: Target, report: dict[str, Any], *, live: bool
) -> list[Chart]:
    """Return every chart of a report to draw and store (SVG and PDF).

    The organizers' charts, and for a live analysis the public ones (runs named as the public
    table names them); a member's own (their team named in an anonymous phase) are drawn when
    first asked.
    """
    report = in_table_scale(report, scales_of(target))
    readers = [report]
    if live:
        readers.append(relabel(report, table_labels(session, store, target, PUBLIC)))
    charts: list[Chart] = []
    for shown in readers:
        for name in CHARTS:
            kind, data = chart_spec(shown, name)
            charts.extend((kind, fmt, data) for fmt in FORMATS)
    return charts


def job_charts(session: Session, store: Store, job_id: int) -> list[Chart]:
    """Return the charts of a finished analysis or freeze to draw and store."""
    job = session.get(Job, job_id, options=[undefer(Job.report)])
    if job is None or job.status != JobStatus.DONE or not job.report or "pairs" not in job.report:
        return []
    eval_set = job.eval_set
    target = resolve(session, eval_set.subtask.task.slug, eval_set.subtask.slug, eval_set.slug)
    return report_charts(session, store, target, job.report, live=job.purpose == JobPurpose.TABLE)
