"""What a reader is told of a team run on a Ladder board: its verdict, not its scores."""

from __future__ import annotations

from flask import g

from leaderboard.models import Run, User
from leaderboard.services.results.boards import LadderStatus, TeamStatuses, laddered, team_statuses
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import RunKind
from leaderboard.web.common.context import db, store


def run_ladder(run: Run) -> LadderStatus | None:
    """Return the run's place on its set's Ladder board, or None when the set has none.

    A page listing a team's runs replays the team's Ladder once per set, not once per run.
    """
    if run.kind != RunKind.RUN or run.team_id is None or not laddered(db(), run):
        return None
    cache: dict[tuple[int, int], TeamStatuses | None] = g.setdefault("team_ladders", {})
    key = (run.eval_set_id, run.team_id)
    if key not in cache:
        subtask = run.subtask
        target = resolve(db(), subtask.task.slug, subtask.slug, run.eval_set.slug)
        cache[key] = team_statuses(db(), store(), target, run.team_id)
    statuses = cache[key]
    return None if statuses is None else statuses.of(run)


def ladder_hides(status: LadderStatus | None, user: User | None) -> bool:
    """Return whether a run's own scores are kept from this reader (everyone but organizers)."""
    return status is not None and not (user is not None and user.is_organizer)
