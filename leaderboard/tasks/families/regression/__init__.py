"""The regression family: one number per item, scored as scipy scores it."""

from leaderboard.tasks.families.regression.family import RegressionFamily

__all__ = ["RegressionFamily"]
