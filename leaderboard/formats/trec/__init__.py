"""TREC run and qrels formats: strict streaming run validation, lenient import, qrels parsing.

Everything task-specific (id pattern, per-query cap, tag pattern, topic list, grade range) is a
setting passed in (``TrecSettings``).
"""

from leaderboard.formats.trec.lenient import c_atof, parse_lenient
from leaderboard.formats.trec.messages import MAX_COLLECTED_ERRORS
from leaderboard.formats.trec.qrels import parse_qrels, qrels_report
from leaderboard.formats.trec.records import (
    MAX_LINE_BYTES,
    Qrels,
    Readable,
    RunSource,
    TrecRun,
    TrecSettings,
)
from leaderboard.formats.trec.strict import NAME_SOURCE, find_duplicates, validate_run

__all__ = [
    "MAX_COLLECTED_ERRORS",
    "MAX_LINE_BYTES",
    "Qrels",
    "Readable",
    "RunSource",
    "TrecRun",
    "TrecSettings",
    "c_atof",
    "find_duplicates",
    "parse_lenient",
    "parse_qrels",
    "qrels_report",
    "validate_run",
    "NAME_SOURCE",
]
