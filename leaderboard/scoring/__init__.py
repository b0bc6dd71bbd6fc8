"""Pure scorers: they take parsed records (numpy arrays) and return measures; no I/O."""

SCORER_VERSION = "leaderboard-scoring/1"
