"""Scoring glue: a validated run against one qrels variant, with trec_eval semantics."""

from __future__ import annotations

from typing import Any

import numpy as np

from leaderboard.formats.trec.records import Qrels, TrecRun
from leaderboard.scoring.ranking import evaluate


def score_run_detail(run: TrecRun, qrels: Qrels, threshold: int) -> dict[str, Any]:
    """Score a run against qrels at a threshold, with per-query values.

    Returns ``ranking.evaluate``'s result (MAP, R-Prec, MRR over all qrels queries, per_query
    arrays aligned with ``queries``, present_means = trec_eval's default without -c) plus
    ``queries`` (the qrels' query ids) and ``ignored_queries`` (run queries not in the qrels).
    """
    position = {q: i for i, q in enumerate(qrels.queries)}
    mapping = np.array([position.get(q, -1) for q in run.queries], dtype=np.int32)
    run_query = mapping[run.query_index] if len(run) else np.zeros(0, dtype=np.int32)
    result = evaluate(
        run_query,
        run.docids,
        run.scores,
        qrels.query_index,
        qrels.docids,
        qrels.grades,
        len(qrels.queries),
        threshold,
    )
    lines = np.bincount(run.query_index, minlength=len(run.queries))
    result["queries"] = qrels.queries
    result["ignored_queries"] = [
        q for q, m, c in zip(run.queries, mapping, lines, strict=True) if m < 0 and c > 0
    ]
    return result


def score_run(run: TrecRun, qrels: Qrels, threshold: int) -> dict[str, float]:
    """Return {"MAP", "R-Prec", "MRR"}: unrounded means over all queries of the qrels.

    Formulas in ``leaderboard.scoring.ranking.evaluate``; queries absent from the run count 0.
    """
    result = score_run_detail(run, qrels, threshold)
    return {m: result[m] for m in ("MAP", "R-Prec", "MRR")}
