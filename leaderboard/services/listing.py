"""The per-team run listing with system descriptions, for the overview paper's participant table."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.models import Run
from leaderboard.services.tables import NOT_WITHDRAWN
from leaderboard.services.target import Target
from leaderboard.states import RunKind
from leaderboard.tables.exports import csv_safe, latex_escape, md_escape

COLUMNS = ("team", "slot", "name", "status", "late", "corrected", "submitted_at", "description")


def run_listing(session: Session, target: Target) -> list[dict[str, Any]]:
    """Return every team run of a set (active ones first), by team then slot; withdrawn teams left out."""
    runs = session.scalars(
        select(Run)
        .where(Run.eval_set_id == target.eval_set.id, Run.kind == RunKind.RUN, NOT_WITHDRAWN)
        .options(selectinload(Run.team))
    ).all()
    rows = [
        {
            "team": r.team.name if r.team else "",
            "slot": r.slot,
            "name": r.name,
            "status": r.status,
            "late": r.late,
            "corrected": r.corrected,
            "submitted_at": r.created_at.isoformat(),
            "description": r.description,
        }
        for r in runs
    ]
    return sorted(
        rows,
        key=lambda x: (x["status"] != "active", x["team"].casefold(), x["slot"], x["submitted_at"]),
    )


def listing_json(rows: list[dict[str, Any]]) -> str:
    """Return the listing as JSON."""
    return json.dumps(rows, ensure_ascii=False, indent=1) + "\n"


def listing_csv(rows: list[dict[str, Any]]) -> str:
    """Return the listing as CSV (cells that could start a formula are neutralised)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([csv_safe(str(row[c]), text=True) for c in COLUMNS])
    return out.getvalue()


def _run_label(row: dict[str, Any]) -> str:
    return row["slot"] if row["name"] == row["slot"] else f"{row['name']} ({row['slot']})"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def listing_markdown(rows: list[dict[str, Any]]) -> str:
    """Return the active runs as a Markdown table: team, run, description."""
    lines = ["| Team | Run | Description |", "| --- | --- | --- |"]
    for row in rows:
        if row["status"] != "active":
            continue
        mark = "*" if row["late"] or row["corrected"] else ""
        lines.append(
            f"| {md_escape(row['team'])} | {md_escape(_run_label(row))}{mark} | {md_escape(_one_line(row['description']))} |"
        )
    return "\n".join(lines) + "\n"


def listing_latex(rows: list[dict[str, Any]]) -> str:
    """Return the active runs as a booktabs table for the paper's participant table."""
    body = []
    for row in rows:
        if row["status"] != "active":
            continue
        mark = "$^{*}$" if row["late"] or row["corrected"] else ""
        body.append(
            f"{latex_escape(row['team'])} & {latex_escape(row['name'])}{mark} & {latex_escape(row['slot'])} & "
            f"{latex_escape(_one_line(row['description']))} \\\\"
        )
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\begin{tabular}{lllp{0.5\\linewidth}}",
            "\\toprule",
            "Team & Run & Slot & Description \\\\",
            "\\midrule",
            *body,
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
            "",
        ]
    )


LISTING_FORMATS = {
    "json": listing_json,
    "csv": listing_csv,
    "md": listing_markdown,
    "latex": listing_latex,
}
