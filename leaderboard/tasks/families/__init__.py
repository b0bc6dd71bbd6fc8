"""Registry of task families by name."""

from __future__ import annotations

from leaderboard.formats.issues import shown
from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families.base import Family


def get_family(name: str) -> Family:
    """Return the family called ``name``; raise DefinitionError for an unknown one."""
    from leaderboard.tasks.families.classification import ClassificationFamily
    from leaderboard.tasks.families.cqa import CqaFamily
    from leaderboard.tasks.families.generation import GenerationFamily
    from leaderboard.tasks.families.regression import RegressionFamily
    from leaderboard.tasks.families.sts import StsFamily
    from leaderboard.tasks.families.trec import TrecFamily

    families: dict[str, Family] = {
        "cqa": CqaFamily(),
        "sts": StsFamily(),
        "trec": TrecFamily(),
        "classification": ClassificationFamily(),
        "regression": RegressionFamily(),
        "generation": GenerationFamily(),
    }
    try:
        return families[name]
    except KeyError:
        raise DefinitionError(
            "family", f"unknown family {shown(name)}; known: {sorted(families)}"
        ) from None
