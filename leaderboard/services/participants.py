"""The participants table of the overview paper: teams, affiliations, members, subtasks."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.models import Run, Subtask, Task, Team, User
from leaderboard.states import RunKind
from leaderboard.tables.exports import csv_safe, latex_escape, md_escape

COLUMNS = ("team", "affiliation", "members", "subtasks")


def participants(session: Session) -> list[dict[str, Any]]:
    """Return the teams that submitted at least one run, withdrawn teams left out, by name.

    Subtasks are ``task/subtask`` slugs of every run the team ever had (replaced ones too).
    """
    entered: dict[int, set[str]] = {}
    rows = session.execute(
        select(Run.team_id, Task.slug, Subtask.slug)
        .join(Subtask, Subtask.id == Run.subtask_id)
        .join(Task, Task.id == Subtask.task_id)
        .where(Run.kind == RunKind.RUN, Run.team_id.is_not(None))
        .distinct()
    ).all()
    for team_id, task, subtask in rows:
        entered.setdefault(team_id, set()).add(f"{task}/{subtask}")
    counts: dict[int | None, int] = {
        team_id: n
        for team_id, n in session.execute(
            select(User.team_id, func.count(User.id))
            .where(User.team_id.is_not(None))
            .group_by(User.team_id)
        ).all()
    }
    teams = session.scalars(
        select(Team).where(Team.withdrawn_at.is_(None), Team.id.in_(list(entered)))
    ).all()
    return [
        {
            "team": t.name,
            "affiliation": t.affiliation,
            "members": int(counts.get(t.id, 0)),
            "subtasks": sorted(entered[t.id]),
        }
        for t in sorted(teams, key=lambda t: (t.name.casefold(), t.name))
    ]


def participants_json(rows: list[dict[str, Any]]) -> str:
    """Return the table as a JSON list of team objects."""
    return json.dumps(rows, ensure_ascii=False, indent=1) + "\n"


def participants_csv(rows: list[dict[str, Any]]) -> str:
    """Return the table as CSV; subtasks are separated by spaces."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_safe(row["team"], text=True),
                csv_safe(row["affiliation"], text=True),
                row["members"],
                " ".join(row["subtasks"]),
            ]
        )
    return out.getvalue()


def participants_markdown(rows: list[dict[str, Any]]) -> str:
    """Return the table as a Markdown table."""
    lines = ["| Team | Affiliation | Members | Subtasks |", "| --- | --- | ---: | --- |"]
    for row in rows:
        lines.append(
            f"| {md_escape(row['team'])} | {md_escape(row['affiliation'])} | {row['members']} "
            f"| {md_escape(', '.join(row['subtasks']))} |"
        )
    return "\n".join(lines) + "\n"


def participants_latex(rows: list[dict[str, Any]]) -> str:
    """Return the table as a booktabs table, every user text escaped."""
    body = [
        f"{latex_escape(row['team'])} & {latex_escape(row['affiliation'])} & {row['members']} & "
        f"{latex_escape(', '.join(row['subtasks']))} \\\\"
        for row in rows
    ]
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\begin{tabular}{llrl}",
            "\\toprule",
            "Team & Affiliation & Members & Subtasks \\\\",
            "\\midrule",
            *body,
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
            "",
        ]
    )


PARTICIPANT_FORMATS = {
    "json": participants_json,
    "csv": participants_csv,
    "md": participants_markdown,
    "latex": participants_latex,
}
