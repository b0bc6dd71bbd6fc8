"""The notice on a page showing an organizer scores that the public and participants do not see."""

from __future__ import annotations

from leaderboard.models import EvalSet, Phase
from leaderboard.services.campaign.visibility import hidden_but_shown
from leaderboard.web.common.context import db, viewer


def seen_hidden(*eval_sets: EvalSet) -> list[Phase]:
    """Return the hidden phases of these sets whose scores the reader sees as an organizer.

    A page passes them as ``seen_hidden`` to ``public/_hidden_notice.html``.
    """
    return hidden_but_shown(db(), eval_sets, viewer())
