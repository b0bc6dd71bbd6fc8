"""Restrict a CQA gold and run to some of the set's questions (a public or private part)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from leaderboard.formats.cqa import CqaGold, CqaRun
from leaderboard.scoring.cqa import CQA_MEASURES, scores_from_questions
from leaderboard.tasks.families.base import MeasureResult
from leaderboard.tasks.families.cqa.scoring import results_of

#: The measure whose per-question counts P, R, F1 and Acc share ([TP, FP, FN, TN]).
COUNTS_OF = "P"


def question_rows(gold: CqaGold, units: frozenset[str]) -> np.ndarray:
    """Return a mask of the gold rows that belong to these questions."""
    chosen = np.array([q in units for q in gold.questions], dtype=bool)
    # Each question's rows form one block: repeat its choice over the block's length.
    lengths = np.diff(np.append(gold.question_starts, len(gold)))
    return np.repeat(chosen, lengths)


def restrict_gold(gold: CqaGold, units: frozenset[str]) -> CqaGold:
    """Return the gold rows of these questions, in gold order, as their own gold file parses."""
    mask = question_rows(gold, units)
    rows = np.flatnonzero(mask).tolist()
    qids = tuple(gold.qids[i] for i in rows)
    cids = tuple(gold.cids[i] for i in rows)
    kept = [k for k, q in enumerate(gold.questions) if q in units]
    lengths = np.diff(np.append(gold.question_starts, len(gold)))[kept]
    starts = (np.cumsum(lengths) - lengths).astype(np.int64)
    return CqaGold(
        qids=qids,
        cids=cids,
        positions=tuple(gold.positions[i] for i in rows),
        ir_scores=gold.ir_scores[mask],
        labels=gold.labels[mask],
        questions=tuple(gold.questions[k] for k in kept),
        question_starts=starts,
        index={pair: row for row, pair in enumerate(zip(qids, cids, strict=True))},
    )


def restrict_run(run: CqaRun, gold: CqaGold, units: frozenset[str]) -> CqaRun:
    """Return the run's scores and labels on these questions' rows.

    A legacy run truncated after ``run.rows`` gold rows keeps the part's rows among them, as
    the same file truncated at the same line would cover the part's own gold file.
    """
    covered = question_rows(gold, units)[: run.rows]
    return CqaRun(int(covered.sum()), run.scores[covered], run.predicted[covered])


@dataclass(frozen=True)
class QuestionValues:
    """A scored run's values per question in gold order: AP_q, ``avgrec_stats`` and counts."""

    ap: np.ndarray
    recall: np.ndarray
    counts: np.ndarray


def question_values(gold: CqaGold, whole: Mapping[str, MeasureResult]) -> QuestionValues | None:
    """Return the per-question values of a run's results, or None unless every question has them.

    A truncated legacy run, and results without per-question values, have none for some
    questions.
    """
    if set(whole) != set(CQA_MEASURES):
        return None
    ap_of = whole["MAP"].per_query
    recall, counts = whole["AvgRec"].item_stats, whole[COUNTS_OF].item_stats
    n = len(gold.questions)
    if ap_of is None or recall is None or counts is None or list(ap_of) != list(gold.questions):
        return None
    if len(recall) != n or len(counts) != n:
        return None
    return QuestionValues(
        np.array(list(ap_of.values()), dtype=np.float64),
        np.asarray(recall, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
    )


def part_results(
    gold: CqaGold, values: QuestionValues, units: frozenset[str]
) -> dict[str, MeasureResult] | None:
    """Return a run's seven measures on a part from its per-question values on all questions.

    Each question's AP, hits@k, R_q and counts depend on its own rows alone, and every measure
    follows from them with exact sums: equal to scoring the run cut to the part. None for a
    part without questions.
    """
    kept = np.flatnonzero([q in units for q in gold.questions])
    if not kept.size:
        return None
    chosen = scores_from_questions(values.ap[kept], values.recall[kept], values.counts[kept])
    return results_of([gold.questions[k] for k in kept.tolist()], chosen)
