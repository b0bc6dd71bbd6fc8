"""Restrict a TREC gold and run to some of the set's queries (a public or private part)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.trec import Qrels, TrecRun
from leaderboard.scoring.trec_measures import GEO_MEAN_FLOOR, TREC_REGISTRY, TrecMeasureKey
from leaderboard.tasks.families.base import MeasureResult

#: Measure kinds whose value for a query is computed from that query's lines and judgments
#: alone, bit for bit (sums in array order per query, or cumulative sums of integers): a
#: part's values are then the whole run's on its queries. Rndcg, ndcg_rel and G take
#: differences of float cumulative sums over all queries, which round with the others'.
SEPARABLE = frozenset(
    {
        "map", "gm_map", "map_cut", "Rprec", "Rprec_mult", "recip_rank", "mrr_cut", "P",
        "relative_P", "recall", "success", "ndcg", "ndcg_cut", "dcg", "dcg_cut", "bpref",
        "gm_bpref", "infAP", "iprec_at_recall", "11pt_avg", "set_P", "set_recall", "set_map",
        "set_F", "set_relative_P", "utility", "binG", "hits", "judged", "num_ret", "num_rel",
        "num_rel_ret", "num_nonrel_judged_ret", "num_q",
    }
)  # fmt: skip


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


def part_mean(m: TrecMeasureKey, values: Sequence[float]) -> float:
    """Return a measure's mean over a part's evaluated queries, as the kernel computes it."""
    chosen = np.array(values, dtype=np.float64)
    # The same operations, in the same order, as trec_measures' _evaluate: equal bit for bit.
    if m.is_count:
        return float(chosen.sum())
    if not len(chosen):
        return 0.0
    if m.is_geometric:
        return float(np.exp(np.log(np.maximum(chosen, GEO_MEAN_FLOOR)).mean()))
    return float(chosen.sum() / len(chosen))


def part_result(m: TrecMeasureKey, whole: MeasureResult, units: frozenset[str]) -> MeasureResult:
    """Return a separable measure's result on a part from its per-query values on all queries.

    ``whole.per_query`` holds the evaluated queries in qrels order, the order a qrels file cut
    to the part keeps; its queries in ``units`` are the part's evaluated queries.
    """
    assert whole.per_query is not None  # every TREC measure keeps its per-query values
    per_query = {q: v for q, v in whole.per_query.items() if q in units}
    value = part_mean(m, list(per_query.values()))
    return MeasureResult(
        value, TREC_REGISTRY.get(m.key).official(value), gold_role=whole.gold_role,
        per_query=per_query,
    )  # fmt: skip


def separable(measures: Mapping[str, Sequence[TrecMeasureKey]]) -> bool:
    """Return whether every measure of every variant is separable by query."""
    return all(m.kind in SEPARABLE for ms in measures.values() for m in ms)
