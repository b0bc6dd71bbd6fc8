"""Score a validated TREC run against one qrels variant with the kernel of trec_eval's measures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.formats.trec import Qrels, TrecRun
from leaderboard.scoring.ranking import rank_order
from leaderboard.scoring.trec_measures import (
    TrecEvaluation,
    TrecMeasureKey,
    evaluate_trec,
    parse_trec_measure,
)

#: The measures of the seed task, for callers that ask for no others.
CLASSIC = tuple(parse_trec_measure(m) for m in ("MAP", "R-Prec", "MRR"))


@dataclass(frozen=True)
class VariantScores:
    """A run's values against one qrels variant: per query (aligned with ``queries``) and means."""

    evaluation: TrecEvaluation
    #: The qrels' query ids, in the order of the per-query arrays.
    queries: tuple[str, ...]
    #: Run queries that the qrels do not judge (ignored, as trec_eval ignores them).
    ignored_queries: tuple[str, ...]

    def per_query(self, key: str) -> dict[str, float]:
        """Return one measure's values of the evaluated queries, by query id."""
        values = self.evaluation.per_query[key]
        evaluated = self.evaluation.evaluated
        return {
            q: float(v)
            for q, v, e in zip(self.queries, values.tolist(), evaluated.tolist(), strict=True)
            if e
        }


def truncated(run: TrecRun, depth: int) -> TrecRun:
    """Return the run with each query's first ``depth`` lines by score (trec_eval's -M)."""
    counts = np.bincount(run.query_index, minlength=len(run.queries))
    if counts.max(initial=0) <= depth:
        return run
    order = rank_order(run.query_index, run.docids, run.scores)
    start = np.cumsum(counts) - counts
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - start[run.query_index[order]]
    keep = rank < depth
    return TrecRun(run.tag, run.queries, run.query_index[keep], run.docids[keep], run.scores[keep])


def score_variant(
    run: TrecRun,
    qrels: Qrels,
    threshold: int,
    measures: Sequence[TrecMeasureKey] = CLASSIC,
    *,
    missing: str = "zero",
) -> VariantScores:
    """Score a run against one qrels variant: the kernel's values over the qrels' queries.

    Run queries are mapped onto the qrels' queries; lines of queries the qrels do not judge
    are ignored. With ``missing="zero"`` every qrels query counts (0 without results, as
    trec_eval -c); with ``"skip"`` only queries with results count.
    """
    position = {q: i for i, q in enumerate(qrels.queries)}
    mapping = np.array([position.get(q, -1) for q in run.queries], dtype=np.int32)
    run_query = mapping[run.query_index] if len(run) else np.zeros(0, dtype=np.int32)
    evaluation = evaluate_trec(
        run_query,
        run.docids,
        run.scores,
        qrels.query_index,
        qrels.docids,
        qrels.grades,
        len(qrels.queries),
        threshold,
        measures,
        missing="skip" if missing == "skip" else "zero",
    )
    lines = np.bincount(run.query_index, minlength=len(run.queries))
    ignored = tuple(
        q for q, m, c in zip(run.queries, mapping, lines, strict=True) if m < 0 and c > 0
    )
    return VariantScores(evaluation, qrels.queries, ignored)


def score_run(
    run: TrecRun, qrels: Qrels, threshold: int, measures: Sequence[str] = ("MAP", "R-Prec", "MRR")
) -> dict[str, float]:
    """Return the unrounded means of the named measures over all queries of the qrels."""
    keys = [parse_trec_measure(m) for m in measures]
    scores = score_variant(run, qrels, threshold, keys)
    return {m: scores.evaluation.means[k.key] for m, k in zip(measures, keys, strict=True)}
