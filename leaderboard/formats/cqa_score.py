"""Read the official 2016 scorer's ``.score`` output files (for import cross-checks)."""

from __future__ import annotations

from leaderboard.scoring.cqa_measures import CQA_MEASURES

#: The official scorer prints the seven measures in the registry's order.
CQA_SCORE_ORDER = CQA_MEASURES


def parse_all_scores(text: str) -> dict[str, str] | None:
    """Return the seven values of the ``ALL SCORES:`` line by measure, or None if absent."""
    for line in text.splitlines():
        if line.startswith("ALL SCORES:"):
            values = line.split(":", 1)[1].split()
            if len(values) == len(CQA_SCORE_ORDER):
                return dict(zip(CQA_SCORE_ORDER, values, strict=True))
    return None
