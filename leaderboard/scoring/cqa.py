"""SemEval-2016 Task 3 (CQA) measures: MAP, AvgRec and MRR over each question's top 10."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from leaderboard.scoring.classification import BINARY_MEASURES, binary_from_counts

# The declarations live apart so that a table, which needs no kernel, imports no numpy.
from leaderboard.scoring.cqa_measures import AVGREC_UNDEFINED as AVGREC_UNDEFINED
from leaderboard.scoring.cqa_measures import CQA_MEASURES as CQA_MEASURES
from leaderboard.scoring.cqa_measures import MEASURES as MEASURES
from leaderboard.scoring.cqa_measures import TOP_K as TOP_K


@dataclass(frozen=True)
class CqaScores:
    """The 7 unrounded measures (MRR on the ×100 scale, the others fractions) and any flags."""

    values: dict[str, float]
    flags: tuple[str, ...] = ()
    #: For the measures that are means over questions (MAP, MRR), each question's value in
    #: question order, on the measure's stored scale: AP_q, and 100/i* for MRR.
    per_question: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False)
    #: For the other measures, each question's counts they follow from when summed over
    #: questions (a row per question, in question order): AvgRec's ``avgrec_stats``, and
    #: [TP, FP, FN, TN] for P, R, F1 and Acc.
    question_stats: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False)


def official(value: float) -> str:
    """Return the stored official 4-decimal string of ``value`` (correctly rounded)."""
    return MEASURES.get("MAP").official(value)


def _question_of_rows(question_starts: np.ndarray, rows: int) -> np.ndarray:
    """Return, for each row, the index of its question; reject malformed ``question_starts``."""
    starts = np.asarray(question_starts, dtype=np.int64)
    if starts.ndim != 1 or starts.size == 0 or starts[0] != 0:
        raise ValueError("question_starts must be a non-empty 1-D array starting at 0")
    sizes = np.diff(np.append(starts, rows))
    if np.any(sizes <= 0):
        raise ValueError("question_starts must be strictly ascending and below the row count")
    return np.repeat(np.arange(starts.size), sizes)


def _top_relevance(
    question_starts: np.ndarray, gold_labels: np.ndarray, scores: np.ndarray
) -> np.ndarray:
    """Return a (questions × TOP_K) bool matrix: gold label at each rank of the system ranking."""
    rows = gold_labels.size
    question = _question_of_rows(question_starts, rows)
    starts = np.asarray(question_starts, dtype=np.int64)
    sizes = np.diff(np.append(starts, rows))
    width = int(sizes.max())
    position = np.arange(rows) - starts[question]
    matrix = np.zeros((starts.size, TOP_K), dtype=bool)
    if starts.size * width <= 4 * rows:
        # Questions of similar size: sort each row of a questions × width matrix, a stable sort
        # on score descending (ties keep gold order); NaN pads sort last (scores are never NaN).
        keys = np.full((starts.size, width), np.nan)
        keys[question, position] = -scores
        ranked = np.argsort(keys, axis=1, kind="stable")[:, :TOP_K]
        k = ranked.shape[1]
        real = np.arange(k)[None, :] < sizes[:, None]
        matrix[:, :k] = real & gold_labels[np.minimum(starts[:, None] + ranked, rows - 1)]
        return matrix
    # lexsort is stable: by question, then by score descending; ties keep gold order.
    order = np.lexsort((-scores, question))
    top = position < TOP_K
    matrix[question[top], position[top]] = gold_labels[order][top]
    return matrix


def avgrec_stats(hits: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Return each question's [h_q(1..10), min(k, R_q) for k = 1..10] (questions × 20)."""
    ranks = np.arange(1, TOP_K + 1, dtype=np.int64)
    possible = np.minimum(ranks[None, :], np.asarray(relevant, dtype=np.int64)[:, None])
    return np.hstack([np.asarray(hits, dtype=np.int64), possible])


def recall_at_ranks(sums: np.ndarray) -> np.ndarray:
    """Return Σ_q h_q(k) / Σ_q min(k, R_q), k = 1..10, from summed ``avgrec_stats`` (..., 20).

    Every k is 0 when Σ_q R_q = 0 (then Σ_q min(k, R_q) = 0 for every k, and > 0 otherwise).
    """
    s = np.asarray(sums, dtype=np.float64)
    hits, possible = s[..., :TOP_K], s[..., TOP_K:]
    out = np.zeros(hits.shape, dtype=np.float64)
    np.divide(hits, possible, out=out, where=possible > 0)
    return out


def avgrec_from_sums(sums: np.ndarray) -> np.ndarray:
    """Return AvgRec = (1/10) Σ_k recall_at_ranks(sums)_k, vectorized over leading axes."""
    return recall_at_ranks(sums).sum(axis=-1) / TOP_K


def question_counts(
    question_starts: np.ndarray, gold_labels: np.ndarray, predicted: np.ndarray
) -> np.ndarray:
    """Return each question's [TP, FP, FN, TN] of the ``true`` class (questions × 4)."""
    gold = np.asarray(gold_labels, dtype=bool)
    pred = np.asarray(predicted, dtype=bool)
    cells = np.column_stack([gold & pred, ~gold & pred, gold & ~pred, ~gold & ~pred])
    return np.add.reduceat(cells.astype(np.int64), np.asarray(question_starts, dtype=np.int64))


def _mean(values: np.ndarray) -> float:
    """Return the exactly rounded mean of ``values`` (independent of summation order)."""
    return math.fsum(values.tolist()) / values.size


def score_cqa(
    question_starts: np.ndarray,
    gold_labels: np.ndarray,
    scores: np.ndarray,
    predicted: np.ndarray,
) -> CqaScores:
    """Score one run whose rows are in gold order, grouped into questions by ``question_starts``.

    Each question is ranked by a stable sort on score descending (ties keep gold order; always
    sorted). With rel(i) the gold label at rank i, K = min(10, n_q), h(k) = Σ_{i≤k} rel(i) and
    R_q = Σ_all rel:
      AP_q = (1/h(K)) Σ_{i≤K, rel(i)} h(i)/i (0 when h(K) = 0);  MAP = mean_q AP_q
      AvgRec = (1/10) Σ_{k=1..10} Σ_q h_q(k) / Σ_q min(k, R_q)  (0, flagged, if Σ_q R_q = 0)
      MRR = 100 · mean_q 1/i* with i* the first relevant rank ≤ K (0 when none)
    Every question counts in the means of MAP and MRR, also one without a relevant candidate.
    AvgRec is a ratio of sums over questions, not a mean of per-question values.
    P, R, F1 and Acc are over all rows, for the ``true`` class (see ``binary_from_counts``).
    AvgRec, P, R, F1 and Acc follow from per-question counts summed over the questions
    (``question_stats``), with the formulas resampled analysis applies to any sample of them.
    """
    gold_labels = np.asarray(gold_labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    predicted = np.asarray(predicted, dtype=bool)
    question_starts = np.asarray(question_starts, dtype=np.int64)
    rows = gold_labels.size
    if rows == 0:
        raise ValueError("cannot score a run with no rows")
    if scores.shape != (rows,) or predicted.shape != (rows,):
        raise ValueError("gold_labels, scores and predicted must have the same length")
    if np.isnan(scores).any():
        raise ValueError("scores must not contain NaN")

    rel = _top_relevance(question_starts, gold_labels, scores)
    hits = np.cumsum(rel, axis=1)  # h_q(k) for k = 1..10
    ranks = np.arange(1, TOP_K + 1, dtype=np.float64)

    # Sum the precisions rank by rank, as the 2016 scorer did, so rounding matches it.
    precision_sum = np.zeros(rel.shape[0])
    for k in range(TOP_K):
        precision_sum += np.where(rel[:, k], hits[:, k] / ranks[k], 0.0)
    found = hits[:, -1]
    ap = np.divide(precision_sum, found, out=np.zeros_like(precision_sum), where=found > 0)

    relevant = np.add.reduceat(gold_labels.astype(np.int64), question_starts)
    recall_stats = avgrec_stats(hits, relevant)
    counts = question_counts(question_starts, gold_labels, predicted)
    return scores_from_questions(ap, recall_stats, counts)


def reciprocal_ranks(hits: np.ndarray) -> np.ndarray:
    """Return each question's 1/i* from its h_q(1..10) (questions × 10): 0 without a hit."""
    found = np.asarray(hits) > 0
    return np.where(found[:, -1], 1.0 / (np.argmax(found, axis=1) + 1.0), 0.0)


def scores_from_questions(
    ap: np.ndarray, recall_stats: np.ndarray, counts: np.ndarray
) -> CqaScores:
    """Return the 7 measures of some questions from their AP_q, ``avgrec_stats`` and counts.

    Every value is a function of the questions' own values, in an order-free way (exact sums),
    so a part of the questions scores from the whole run's rows as from a run of only them.
    """
    rr = reciprocal_ranks(recall_stats[:, :TOP_K])
    sums = recall_stats.sum(axis=0)
    # recall_at_ranks is 0 throughout when no question has a relevant candidate. fsum rounds
    # the sum of the 10 recalls once, as stored scores always were; resampling's
    # avgrec_from_sums adds them in floating point (within a few ulps, and vectorized).
    avg_rec = math.fsum(recall_at_ranks(sums).tolist()) / TOP_K
    # Σ_q min(10, R_q) is 0 exactly when no question has a relevant candidate.
    flags = (AVGREC_UNDEFINED,) if sums[-1] == 0 else ()
    binary = binary_from_counts(counts.sum(axis=0))
    values = {"MAP": _mean(ap), "AvgRec": avg_rec, "MRR": 100.0 * _mean(rr)}
    values.update({name: float(value) for name, value in binary.items()})
    return CqaScores(
        values={name: float(values[name]) for name in CQA_MEASURES},
        flags=flags,
        per_question={"MAP": ap, "MRR": 100.0 * rr},
        question_stats={"AvgRec": recall_stats, **dict.fromkeys(BINARY_MEASURES, counts)},
    )
