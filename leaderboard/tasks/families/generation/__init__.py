"""The generation family: one output text per source segment, scored with sacrebleu."""

from leaderboard.tasks.families.generation.family import GenerationFamily

__all__ = ["GenerationFamily"]
