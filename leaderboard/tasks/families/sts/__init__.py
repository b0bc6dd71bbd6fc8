"""The STS family (SemEval-2016 Task 1 style): one score per pair, Pearson per evaluation part."""

from leaderboard.tasks.families.sts.baseline import baseline_scores, cosine_bow
from leaderboard.tasks.families.sts.family import StsFamily, StsGoldBundle
from leaderboard.tasks.families.sts.scoring import (
    CONSTANT_ON_SCORED_NOTE,
    StsScore,
    measure_results,
    score_run,
)

__all__ = [
    "CONSTANT_ON_SCORED_NOTE",
    "StsFamily",
    "StsGoldBundle",
    "StsScore",
    "baseline_scores",
    "cosine_bow",
    "measure_results",
    "score_run",
]
