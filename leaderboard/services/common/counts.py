"""Count the rows that belong to each team."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import InstrumentedAttribute, Session


def per_team(
    session: Session, team_id: InstrumentedAttribute[int | None], row_id: InstrumentedAttribute[int]
) -> dict[int | None, int]:
    """Return how many rows each team has (by the rows' team and id columns); teamless left out."""
    return {
        team: n
        for team, n in session.execute(
            select(team_id, func.count(row_id)).where(team_id.is_not(None)).group_by(team_id)
        ).all()
    }
