"""Shared-task leaderboard server: validate, score and rank runs of evaluation campaigns."""

__version__ = "0.1.0"
