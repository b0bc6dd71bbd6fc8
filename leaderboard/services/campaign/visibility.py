"""Who may see which scores: hidden phases hide them from everyone but organizers."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from leaderboard.models import EvalSet, Phase, User
from leaderboard.services.campaign.phases import hidden_phase


def hiding_phase(session: Session, eval_set: EvalSet, user: User | None) -> Phase | None:
    """Return the phase that hides this set's scores from ``user`` (None: the user may see them)."""
    if user is not None and user.is_organizer:
        return None
    return hidden_phase(session, eval_set)


def hidden_but_shown(
    session: Session, eval_sets: Iterable[EvalSet], user: User | None
) -> list[Phase]:
    """Return the phases hiding these sets' scores from all but organizers, when ``user`` is one.

    These are the scores an organizer sees that the public and the participants do not: every
    page showing them says so.
    """
    if user is None or not user.is_organizer:
        return []
    found: dict[int, Phase] = {}
    for eval_set in eval_sets:
        phase = hidden_phase(session, eval_set)
        if phase is not None:
            found.setdefault(phase.id, phase)
    return list(found.values())
