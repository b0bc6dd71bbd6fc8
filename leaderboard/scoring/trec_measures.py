"""trec_eval 9.0.8's measures per query and as means, vectorised over one ranked run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from leaderboard.scoring.ranking import match_index, rank_order
from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure

#: trec_eval's floor for the per-query values of a geometric mean (MIN_GEO_MEAN).
GEO_MEAN_FLOOR = 0.00001

#: Fixed keys and their trec_eval names, in the order tables list them.
_FIXED = {
    "MAP": "map",
    "GMAP": "gm_map",
    "R-Prec": "Rprec",
    "MRR": "recip_rank",
    "nDCG": "ndcg",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
}
_FIXED_ALIASES = {name: key for key, name in _FIXED.items()}
_COUNTS = frozenset({"num_ret", "num_rel", "num_rel_ret"})
#: Cutoff measures: key prefix -> kind; the kind is also trec_eval's prefix except for MRR@k.
_CUT_PREFIX = {
    "MAP": "map_cut",
    "MRR": "mrr_cut",
    "P": "P",
    "R": "recall",
    "nDCG": "ndcg_cut",
    "Success": "success",
}
_CUT_KEY = {kind: prefix for prefix, kind in _CUT_PREFIX.items()}
_CUT_ALIASES = frozenset(kind for kind in _CUT_PREFIX.values() if kind != "mrr_cut")
#: The largest k accepted: far beyond any run's depth, small enough for int64 arithmetic.
MAX_CUTOFF = 999_999_999

_KEY_CUT = re.compile(r"(MAP|MRR|P|R|nDCG|Success)@(.*)", re.DOTALL)
_ALIAS_CUT = re.compile(r"(map_cut|P|recall|ndcg_cut|success)_(.*)", re.DOTALL)
_IPREC = re.compile(r"(?:iPrec@|iprec_at_recall_)(.*)", re.DOTALL)
_POSITIVE = re.compile(r"[1-9][0-9]*")
_RECALL_LEVEL = re.compile(r"0(?:\.[0-9]+)?|1(?:\.0+)?|\.[0-9]+")

FORMS = (
    "MAP@k",
    "MRR@k",
    "P@k",
    "R@k",
    "nDCG@k",
    "Success@k",
    "iPrec@r",
    "trec_eval names (map, gm_map, Rprec, recip_rank, ndcg, bpref, map_cut_k, P_k, recall_k, "
    "ndcg_cut_k, success_k, iprec_at_recall_r)",
    "with k a positive integer and r one of 0.00, 0.10, ..., 1.00",
)


@dataclass(frozen=True)
class TrecMeasureKey:
    """One trec measure: its canonical key, its kind and its cutoff k or recall level r."""

    key: str
    kind: str
    k: int | None = None
    r: float | None = None

    @property
    def is_count(self) -> bool:
        """Return whether the measure is a count, summed over queries rather than averaged."""
        return self.kind in _COUNTS

    @property
    def trec_eval_name(self) -> str | None:
        """Return trec_eval's name of the measure (``ndcg_cut_10``), or None for MRR@k."""
        if self.kind == "mrr_cut":
            return None
        if self.k is not None:
            return f"{self.kind}_{self.k}"
        if self.r is not None:
            return f"iprec_at_recall_{self.r:.2f}"
        return self.kind


def _unknown(name: str, why: str) -> UnknownMeasure:
    """Build the error for a name that is no trec measure, listing the accepted forms."""
    accepted = ", ".join([*_FIXED, *FORMS])
    return UnknownMeasure(f"unknown trec measure {name[:80]!r}: {why}; accepted: {accepted}")


def _cutoff(name: str, text: str) -> int:
    """Return the cutoff k written in ``text``; raise UnknownMeasure unless a positive integer."""
    if not _POSITIVE.fullmatch(text) or int(text) > MAX_CUTOFF:
        raise _unknown(name, f"the cutoff must be a positive integer up to {MAX_CUTOFF}")
    return int(text)


def _recall_level(name: str, text: str) -> float:
    """Return the recall level written in ``text``; raise unless it is 0.0, 0.1, ... or 1.0."""
    level = None
    if _RECALL_LEVEL.fullmatch(text):
        try:
            level = Decimal(text)
        except InvalidOperation:
            level = None
    if level is None or (level * 10) % 1 != 0:
        raise _unknown(name, "the recall level must be one of 0.00, 0.10, ..., 1.00")
    return float(level)


def parse_trec_measure(name: str) -> TrecMeasureKey:
    """Return the measure a definition names by its key or trec_eval name.

    Raises UnknownMeasure naming the accepted forms. ``iPrec@0.1`` and ``iPrec@0.10`` are the
    same measure, whose canonical key is ``iPrec@0.10``.
    """
    if name in _FIXED:
        return TrecMeasureKey(name, _FIXED[name])
    if name in _FIXED_ALIASES:
        key = _FIXED_ALIASES[name]
        return TrecMeasureKey(key, _FIXED[key])
    match = _KEY_CUT.fullmatch(name)
    if match is not None:
        k = _cutoff(name, match.group(2))
        return TrecMeasureKey(f"{match.group(1)}@{k}", _CUT_PREFIX[match.group(1)], k=k)
    match = _ALIAS_CUT.fullmatch(name)
    if match is not None:
        kind = match.group(1)
        k = _cutoff(name, match.group(2))
        return TrecMeasureKey(f"{_CUT_KEY[kind]}@{k}", kind, k=k)
    match = _IPREC.fullmatch(name)
    if match is not None:
        r = _recall_level(name, match.group(1))
        return TrecMeasureKey(f"iPrec@{r:.2f}", "iprec_at_recall", r=r)
    raise _unknown(name, "no such measure")


def measure_entry(measure: TrecMeasureKey) -> Measure:
    """Return the registry entry of a trec measure (counts have scale "count", 0 decimals)."""
    if measure.is_count:
        return Measure(measure.key, measure.key, "count", 0, 0)
    return Measure(measure.key, measure.key, "fraction", 4, 4)


def _entry_of(match: re.Match[str]) -> Measure:
    """Return the entry of a matched key or alias (the parser's message if it is invalid)."""
    return measure_entry(parse_trec_measure(match.group(0)))


TREC_REGISTRY = MeasureRegistry(
    "trec",
    [measure_entry(parse_trec_measure(key)) for key in _FIXED],
    patterns=[
        (re.compile("|".join(re.escape(a) for a in _FIXED_ALIASES)), _entry_of),
        (_KEY_CUT, _entry_of),
        (_ALIAS_CUT, _entry_of),
        (_IPREC, _entry_of),
    ],
    forms=FORMS,
)


@dataclass(frozen=True)
class TrecEvaluation:
    """Per-query values and means of trec measures, by canonical key.

    ``per_query[key][q]`` is query q's value (GMAP: its average precision; a query without lines
    scores 0, num_rel still R); ``means[key]`` is the mean over the evaluated queries (GMAP:
    their floored geometric mean; counts: their sum).
    """

    per_query: dict[str, NDArray[np.float64]]
    means: dict[str, float]
    evaluated: NDArray[np.bool_]


class _Ranked:
    """The judged lines of a ranked run and the judgments, with the parts measures share."""

    def __init__(
        self,
        n_queries: int,
        n_relevant: NDArray[np.int64],
        n_nonrelevant: NDArray[np.int64],
        judged_query: NDArray[np.int64],
        judged_rank: NDArray[np.int64],
        judged_grade: NDArray[np.int64],
        judged_relevant: NDArray[np.bool_],
        qrels_query: NDArray[np.int64],
        qrels_gain: NDArray[np.int64],
    ) -> None:
        self.n = n_queries
        self.n_relevant = n_relevant
        self.n_nonrelevant = n_nonrelevant
        self.judged_query = judged_query
        self.judged_rank = judged_rank
        self.judged_grade = judged_grade
        self.judged_relevant = judged_relevant
        self.qrels_query = qrels_query
        self.qrels_gain = qrels_gain
        self.safe_r = np.maximum(n_relevant, 1)

    def count(self, query: NDArray[Any], weights: NDArray[Any] | None = None) -> NDArray[Any]:
        """Return per-query sums (counts without weights); bincount adds in array order."""
        return np.bincount(query, weights=weights, minlength=self.n)[: self.n]

    def over_r(self, total: NDArray[Any]) -> NDArray[np.float64]:
        """Return total / R_q, 0 where R_q = 0."""
        return np.where(self.n_relevant > 0, total / self.safe_r, 0.0)

    @cached_property
    def rel_query(self) -> NDArray[np.int64]:
        """Return the query of each retrieved relevant line (lines by query, then rank)."""
        return self.judged_query[self.judged_relevant]

    @cached_property
    def rel_rank(self) -> NDArray[np.int64]:
        """Return the rank of each retrieved relevant line."""
        return self.judged_rank[self.judged_relevant]

    @cached_property
    def rel_retrieved(self) -> NDArray[np.int64]:
        """Return the number of retrieved relevant lines per query."""
        return self.count(self.rel_query)

    @cached_property
    def rel_start(self) -> NDArray[np.int64]:
        """Return the offset of each query's first relevant line among the relevant lines."""
        return np.cumsum(self.rel_retrieved) - self.rel_retrieved

    @cached_property
    def hits(self) -> NDArray[np.int64]:
        """Return h(i) at each relevant line: its query's relevant lines at ranks <= i."""
        return np.arange(1, len(self.rel_query) + 1) - self.rel_start[self.rel_query]

    @cached_property
    def precision(self) -> NDArray[np.float64]:
        """Return h(i)/i at each relevant line."""
        return self.hits / self.rel_rank

    @cached_property
    def first_rank(self) -> NDArray[np.int64]:
        """Return the rank of each query's first relevant line, 0 if none is retrieved."""
        first = np.zeros(self.n, dtype=np.int64)
        found = self.rel_retrieved > 0
        first[found] = self.rel_rank[self.rel_start[found]]
        return first

    def within(self, k: int) -> NDArray[np.bool_]:
        """Return which relevant lines are at ranks <= k."""
        return self.rel_rank <= k

    @cached_property
    def suffix_max_precision(self) -> NDArray[np.float64]:
        """Return max_{j >= i} h(j)/j over the relevant lines j of each relevant line i's query."""
        values, code = np.unique(self.precision, return_inverse=True)
        if len(values) == 0:
            return self.precision
        # Reversed, queries descend; prefixing each code with (n - query) makes the running
        # maximum restart at every query, and integer codes keep the values exact.
        reversed_query = self.rel_query[::-1].astype(np.int64)
        key = (self.n - reversed_query) * len(values) + code.reshape(-1)[::-1]
        best = np.maximum.accumulate(key) % len(values)
        return values[best[::-1]]

    def dcg(self, k: int | None) -> NDArray[np.float64]:
        """Return sum over judged lines at ranks <= k of gain / log2(rank + 1)."""
        keep = self.judged_grade > 0
        if k is not None:
            keep &= self.judged_rank <= k
        rank = self.judged_rank[keep]
        return self.count(self.judged_query[keep], self.judged_grade[keep] / np.log2(rank + 1.0))

    @cached_property
    def ideal_rank(self) -> NDArray[np.int64]:
        """Return the rank of each positive judgment in its query's ideal ranking."""
        per_query = self.count(self.qrels_query)
        start = np.cumsum(per_query) - per_query
        return np.arange(1, len(self.qrels_query) + 1) - start[self.qrels_query]

    def ideal_dcg(self, k: int | None) -> NDArray[np.float64]:
        """Return the DCG of each query's ideal ranking cut at k."""
        keep = slice(None) if k is None else self.ideal_rank <= k
        rank = self.ideal_rank[keep]
        return self.count(self.qrels_query[keep], self.qrels_gain[keep] / np.log2(rank + 1.0))

    def ndcg(self, k: int | None) -> NDArray[np.float64]:
        """Return DCG / ideal DCG, 0 where the ideal DCG is 0."""
        ideal = self.ideal_dcg(k)
        return np.where(ideal > 0, self.dcg(k) / np.where(ideal > 0, ideal, 1.0), 0.0)

    def bpref(self) -> NDArray[np.float64]:
        """Return bpref: (1/R) sum over relevant lines of 1 - min(n_r, R) / min(N, R)."""
        nonrel = ~self.judged_relevant
        nonrel_query = self.judged_query[nonrel]
        per_query = self.count(nonrel_query)
        before_query = np.cumsum(per_query) - per_query
        nonrel_before = np.cumsum(nonrel)[self.judged_relevant] - before_query[self.rel_query]
        r = self.n_relevant[self.rel_query]
        bound = np.minimum(self.n_nonrelevant[self.rel_query], r)
        term = np.where(
            nonrel_before > 0,
            1.0 - np.minimum(nonrel_before, r) / np.maximum(bound, 1),
            1.0,
        )
        return self.over_r(self.count(self.rel_query, term))

    def iprec(self, level: float) -> NDArray[np.float64]:
        """Return max{h(i)/i : rel_i = 1, h(i) >= max(1, floor(level * R + 0.9))}, else 0."""
        # trec_eval 9.0.8 turns the recall level into a number of relevant lines this way
        # (computed in double, as here), so 2 of 3 relevant lines reach the level 0.70.
        needed = np.maximum((level * self.n_relevant + 0.9).astype(np.int64), 1)
        reached = needed <= self.rel_retrieved
        out = np.zeros(self.n)
        out[reached] = self.suffix_max_precision[(self.rel_start + needed - 1)[reached]]
        return out

    def measure(self, m: TrecMeasureKey, n_retrieved: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return the per-query values of one measure."""
        kind, k = m.kind, m.k or 0
        if kind in ("map", "gm_map"):
            return self.over_r(self.count(self.rel_query, self.precision))
        if kind == "map_cut":
            inside = self.within(k)
            return self.over_r(self.count(self.rel_query[inside], self.precision[inside]))
        if kind == "Rprec":
            inside = self.rel_rank <= self.n_relevant[self.rel_query]
            return self.over_r(self.count(self.rel_query[inside]))
        if kind == "recip_rank":
            return np.where(self.first_rank > 0, 1.0 / np.maximum(self.first_rank, 1), 0.0)
        if kind == "mrr_cut":
            found = (self.first_rank > 0) & (self.first_rank <= k)
            return np.where(found, 1.0 / np.maximum(self.first_rank, 1), 0.0)
        if kind == "P":
            return self.count(self.rel_query[self.within(k)]) / k
        if kind == "recall":
            return self.over_r(self.count(self.rel_query[self.within(k)]))
        if kind == "success":
            return ((self.first_rank > 0) & (self.first_rank <= k)).astype(np.float64)
        if kind == "ndcg":
            return self.ndcg(None)
        if kind == "ndcg_cut":
            return self.ndcg(k)
        if kind == "bpref":
            return self.bpref()
        if kind == "iprec_at_recall":
            return self.iprec(m.r or 0.0)
        if kind == "num_ret":
            return n_retrieved.astype(np.float64)
        if kind == "num_rel":
            return self.n_relevant.astype(np.float64)
        if kind == "num_rel_ret":
            return self.rel_retrieved.astype(np.float64)
        raise UnknownMeasure(f"unknown trec measure kind {kind!r}")


def evaluate_trec(
    run_query: NDArray[Any],
    run_docids: NDArray[Any],
    run_scores: NDArray[Any],
    qrels_query: NDArray[Any],
    qrels_docids: NDArray[Any],
    qrels_grades: NDArray[Any],
    n_queries: int,
    threshold: int,
    measures: Sequence[TrecMeasureKey],
    *,
    missing: Literal["zero", "skip"] = "zero",
) -> TrecEvaluation:
    """Score a run against one qrels variant with trec_eval 9.0.8's measures.

    Inputs are parallel arrays: run lines (query index, ``S`` id, score) and judgments (query
    index, ``S`` id, integer grade). Query indices run over ``0..n_queries-1``; run lines with
    another index (-1: query not in the qrels) are ignored. Each query's lines are ranked by
    float32 score descending, ties by id descending (trec_eval's order). Pairs are unique
    within the run and within the qrels, as the formats enforce. Judgments with a negative
    grade count as unjudged for every measure, as trec_eval treats them. For a query q with n lines: rel_i = 1 iff the line at rank i is judged with
    grade >= ``threshold``; R = number of such judgments; N = number of judgments with
    0 <= grade < threshold; h(i) = sum_{j<=i} rel_j; g_i = the grade at rank i if judged and
    positive, else 0 (nDCG's gains ignore the threshold); g*_i = the query's positive grades
    sorted descending (the ideal ranking); first = min{i : rel_i = 1}:

        map          = (1/R) sum_{i<=n} rel_i h(i)/i          map_cut_k: sum over i <= k
        gm_map       = map per query; mean = exp(mean_q log max(map_q, 0.00001))
        Rprec        = h(min(R, n)) / R
        recip_rank   = 1/first, 0 if nothing relevant is retrieved
        mrr_cut_k    = 1/first if first <= k, else 0 (MS MARCO's MRR@k; no trec_eval name)
        P_k          = h(min(k, n)) / k
        recall_k     = h(min(k, n)) / R
        success_k    = 1 if first <= k, else 0
        ndcg         = DCG / IDCG, DCG = sum_i g_i / log2(i + 1), IDCG = sum_i g*_i / log2(i + 1)
        ndcg_cut_k   = the same with both sums over i <= k
        bpref        = (1/R) sum_{i : rel_i = 1} (1 if n_i = 0 else 1 - min(n_i, R) / min(N, R)),
                       n_i = judged lines at ranks < i with 0 <= grade < threshold
        iprec_at_recall_r = max{h(i)/i : rel_i = 1, h(i) >= max(1, floor(r R + 0.9))}, 0 if
                       the set is empty (9.0.8's rounding: 2 of 3 relevant reach r = 0.70;
                       trec_eval 10 changed it)
        num_ret = n, num_rel = R, num_rel_ret = h(n)

    Every ratio with R = 0 (or IDCG = 0) is 0. Means are over the evaluated queries: all
    ``n_queries`` with ``missing="zero"`` (trec_eval ``-c``: a query without lines scores 0,
    its R still counts in num_rel, GMAP floors it at 0.00001), those with at least one line
    with ``missing="skip"`` (trec_eval's default). Counts are summed instead of averaged.
    Threshold <= 0 makes every non-negative judgment relevant (pytrec_eval refuses such levels).
    A query judged only negatively scores 0 (but num_ret): trec_eval's nDCG has undefined
    behaviour there (it reads the gain levels of an earlier query and may loop forever).
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', not {missing!r}")
    query = np.asarray(run_query)
    docids = np.asarray(run_docids)
    scores = np.asarray(run_scores)
    keep = (query >= 0) & (query < n_queries)
    if not keep.all():
        query, docids, scores = query[keep], docids[keep], scores[keep]
    del keep

    qq = np.asarray(qrels_query).astype(np.int64)
    grades = np.asarray(qrels_grades).astype(np.int64)
    qd = np.asarray(qrels_docids)
    judged = (qq >= 0) & (qq < n_queries) & (grades >= 0)
    if not judged.all():
        qq, qd, grades = qq[judged], qd[judged], grades[judged]
    relevant = grades >= threshold
    n_relevant = np.bincount(qq[relevant], minlength=n_queries)[:n_queries]
    n_nonrelevant = np.bincount(qq[~relevant], minlength=n_queries)[:n_queries]

    row = match_index(query, docids, qq, qd)
    n_retrieved = np.bincount(query, minlength=n_queries)[:n_queries]
    order = rank_order(query, docids, scores)
    # Every measure depends on the judged lines only, so ranks are kept at those alone.
    judged_at = np.flatnonzero((row >= 0)[order])
    judged_line = order[judged_at]
    del order
    judged_query = query[judged_line].astype(np.int64)
    group_start = np.cumsum(n_retrieved) - n_retrieved
    judged_rank = judged_at - group_start[judged_query] + 1
    judged_grade = grades[row[judged_line]]

    positive = grades > 0
    ideal = np.lexsort((-grades[positive], qq[positive]))
    ranked = _Ranked(
        n_queries,
        n_relevant,
        n_nonrelevant,
        judged_query,
        judged_rank,
        judged_grade,
        judged_grade >= threshold,
        qq[positive][ideal],
        grades[positive][ideal],
    )

    evaluated = np.ones(n_queries, dtype=bool) if missing == "zero" else n_retrieved > 0
    n_evaluated = int(evaluated.sum())
    per_query: dict[str, NDArray[np.float64]] = {}
    means: dict[str, float] = {}
    for m in measures:
        if m.key in per_query:
            continue
        values = ranked.measure(m, n_retrieved)
        per_query[m.key] = values
        chosen = values[evaluated]
        if m.is_count:
            means[m.key] = float(chosen.sum())
        elif not n_evaluated:
            means[m.key] = 0.0
        elif m.kind == "gm_map":
            means[m.key] = float(np.exp(np.log(np.maximum(chosen, GEO_MEAN_FLOOR)).mean()))
        else:
            means[m.key] = float(chosen.sum() / n_evaluated)
    return TrecEvaluation(per_query, means, evaluated)
