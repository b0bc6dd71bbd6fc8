"""What a reader is told of a team run on a Ladder board: its verdict, not its scores."""

from __future__ import annotations

from leaderboard.models import Run, User
from leaderboard.services.results.boards import LadderStatus, ladder_status, laddered
from leaderboard.services.tasks.catalog import resolve
from leaderboard.web.common.context import db, store


def run_ladder(run: Run) -> LadderStatus | None:
    """Return the run's place on its set's Ladder board, or None when the set has none."""
    if not laddered(db(), run):
        return None
    subtask = run.subtask
    target = resolve(db(), subtask.task.slug, subtask.slug, run.eval_set.slug)
    return ladder_status(db(), store(), target, run)


def ladder_hides(status: LadderStatus | None, user: User | None) -> bool:
    """Return whether a run's own scores are kept from this reader (everyone but organizers)."""
    return status is not None and not (user is not None and user.is_organizer)
