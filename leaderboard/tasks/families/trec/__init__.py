"""The trec family: any TREC-style ranked-retrieval track, scored as trec_eval scores it."""

from leaderboard.tasks.families.trec.family import TrecFamily, TrecGold, read_topics, trec_settings

__all__ = ["TrecFamily", "TrecGold", "read_topics", "trec_settings"]
