"""The CQA family (SemEval-2016 Task 3 style): rerank candidates per question and label them."""

# Only the family: its scoring and baselines (numpy) are imported by the hooks that use them.
from leaderboard.tasks.families.cqa.family import RECIPES, SCALE_NOTE, CqaFamily

__all__ = ["RECIPES", "SCALE_NOTE", "CqaFamily"]
