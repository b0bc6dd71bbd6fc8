"""The participants table of the overview paper: teams, affiliations, members, subtasks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import Run, Subtask, Task, Team, User
from leaderboard.services.common.counts import per_team
from leaderboard.states import RunKind
from leaderboard.tables.flat import FlatColumn, FlatExport

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
    counts = per_team(session, User.team_id, User.id)
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


#: The participants table's exports: JSON and CSV (subtasks separated by spaces), and the
#: Markdown and LaTeX tables of the paper (subtasks separated by commas).
_COLUMNS = (
    FlatColumn("Team", lambda r: r["team"]),
    FlatColumn("Affiliation", lambda r: r["affiliation"]),
    FlatColumn("Members", lambda r: r["members"], "r"),
    FlatColumn("Subtasks", lambda r: ", ".join(r["subtasks"])),
)
PARTICIPANTS = FlatExport(fields=COLUMNS, markdown=_COLUMNS, latex=_COLUMNS)
PARTICIPANT_FORMATS = PARTICIPANTS.writers()
