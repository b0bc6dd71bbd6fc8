"""Anonymous results: while a phase says so, public tables name teams "Team 1", "Team 2", ...

A set's tables are anonymous while any phase of its subtask on that set has
``names == "anonymous"``; ``leaderboard phase ... --names public`` reveals them. Numbers are
stable: teams are numbered by their first run in the subtask (any set, replaced runs included),
so a team that joins later never renumbers the others. An anonymous row also hides the run's
name and label (they often carry the team's name) and shows its slot instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.models import Run, Subtask, User
from leaderboard.services.campaign.phases import phases_of
from leaderboard.states import NameMode, RunKind
from leaderboard.targets import Target


@dataclass(frozen=True)
class Audience:
    """Who reads a table: ``revealed`` names the teams shown by name (None: every team)."""

    revealed: frozenset[int] | None


#: The public (and frozen tables): no team by name while anonymous.
PUBLIC = Audience(frozenset())
#: Organizers: every team by name.
ALL_NAMES = Audience(None)


def audience_for(user: User | None) -> Audience:
    """Return the audience of a reader: organizers see all names, a member their own team's."""
    if user is None:
        return PUBLIC
    if user.is_organizer:
        return ALL_NAMES
    return Audience(frozenset({user.team_id})) if user.team_id is not None else PUBLIC


def is_anonymous(session: Session, target: Target) -> bool:
    """Return whether a phase of the target's set shows teams anonymously."""
    return any(
        p.names == NameMode.ANONYMOUS
        for p in phases_of(session, target.subtask)
        if p.eval_set_id == target.eval_set.id
    )


def team_numbers(session: Session, subtask: Subtask) -> dict[int, int]:
    """Return each team's number in a subtask: 1, 2, ... by the order of their first run."""
    firsts = session.execute(
        select(Run.team_id, func.min(Run.id))
        .where(Run.subtask_id == subtask.id, Run.team_id.is_not(None), Run.kind == RunKind.RUN)
        .group_by(Run.team_id)
    ).all()
    ordered = sorted(firsts, key=lambda row: row[1])
    return {team_id: n for n, (team_id, _first) in enumerate(ordered, start=1)}


def audience_key(session: Session, target: Target, audience: Audience) -> frozenset[int] | None:
    """Return what distinguishes this audience's tables of the target (for cache keys)."""
    return audience.revealed if is_anonymous(session, target) else None


def masked_names(session: Session, target: Target, audience: Audience) -> Mapping[int, str]:
    """Return the shown name of every team this audience may not see by name (empty: none)."""
    if audience.revealed is None or not is_anonymous(session, target):
        return {}
    return {
        team_id: f"Team {n}"
        for team_id, n in team_numbers(session, target.subtask).items()
        if team_id not in audience.revealed
    }
