"""Restrict a TREC gold and run to some of the set's queries (a public or private part)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.trec import Qrels, TrecRun


def kept_queries(
    queries: Sequence[str], units: frozenset[str]
) -> tuple[tuple[str, ...], NDArray[np.int32]]:
    """Return the queries among ``units`` in their order, and each query's new index (-1: out)."""
    kept = tuple(q for q in queries if q in units)
    position = {q: i for i, q in enumerate(kept)}
    index = np.array([position.get(q, -1) for q in queries], dtype=np.int32)
    return kept, index


def restrict_qrels(qrels: Qrels, units: frozenset[str]) -> Qrels:
    """Return the judgments of these queries, as a qrels file of only them would parse."""
    kept, index = kept_queries(qrels.queries, units)
    lines = index[qrels.query_index]
    keep = lines >= 0
    return Qrels(kept, lines[keep], qrels.docids[keep], qrels.grades[keep])


def restrict_run(run: TrecRun, units: frozenset[str]) -> TrecRun:
    """Return the run's lines for these queries; lines of other queries are dropped."""
    kept, index = kept_queries(run.queries, units)
    lines = index[run.query_index] if len(run) else np.zeros(0, dtype=np.int32)
    keep = lines >= 0
    return TrecRun(run.tag, kept, lines[keep], run.docids[keep], run.scores[keep])
