"""The CQA family (SemEval-2016 Task 3 style): rerank candidates per question and label them."""

from leaderboard.tasks.families.cqa.baselines import RECIPES, baseline_run
from leaderboard.tasks.families.cqa.family import SCALE_NOTE, CqaFamily
from leaderboard.tasks.families.cqa.scoring import measure_results, score_run

__all__ = ["RECIPES", "SCALE_NOTE", "CqaFamily", "baseline_run", "measure_results", "score_run"]
