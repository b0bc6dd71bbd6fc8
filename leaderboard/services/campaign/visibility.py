"""Who may see which scores: hidden phases hide them from everyone but organizers."""

from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.models import EvalSet, Phase, User
from leaderboard.services.campaign.phases import hidden_phase


def hiding_phase(session: Session, eval_set: EvalSet, user: User | None) -> Phase | None:
    """Return the phase that hides this set's scores from ``user`` (None: the user may see them)."""
    if user is not None and user.is_organizer:
        return None
    return hidden_phase(session, eval_set)
