"""A run's per-unit values of a measure on a part: its row's own, or the "all" row's on its units."""

from __future__ import annotations

from leaderboard.models import Score
from leaderboard.tasks.splitting import SetSplit, UnitValues


def kept_values(score: Score, whole: Score | None, split: SetSplit | None) -> UnitValues:
    """Return a score row's per-query values and per-unit statistics, derived where not kept.

    ``whole`` is the run's current row of the same measure on all units, ``split`` the set's
    split; a part's row flagged ``units_from_all`` keeps neither itself.
    """
    if not score.units_from_all:
        return score.per_query, score.item_stats
    if whole is None or split is None or score.part not in split.golds:
        # The set lost its split (or the run its row on all units): nothing to derive from.
        return None, None
    return split.on_part(score.part, whole.per_query, whole.item_stats)
