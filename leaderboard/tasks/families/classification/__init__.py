"""The classification family: one declared label per item, scored as scikit-learn scores it."""

from leaderboard.tasks.families.classification.family import ClassificationFamily

__all__ = ["ClassificationFamily"]
