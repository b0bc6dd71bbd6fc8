"""Score a validated CQA run against its gold with the official 2016 measures."""

from __future__ import annotations

from collections.abc import Sequence

from leaderboard.formats.cqa import CqaGold, CqaRun
from leaderboard.scoring.cqa import MEASURES, CqaScores, score_cqa
from leaderboard.tasks.families.base import MeasureResult


def score_run(gold: CqaGold, run: CqaRun) -> CqaScores:
    """Score ``run`` against the first ``run.rows`` gold rows (legacy truncation shrinks |Q|)."""
    if not 0 < run.rows <= len(gold):
        raise ValueError(f"run covers {run.rows} rows; the gold file has {len(gold)}")
    starts = gold.question_starts[gold.question_starts < run.rows]
    return score_cqa(starts, gold.labels[: run.rows], run.scores, run.predicted)


def measure_results(gold: CqaGold, run: CqaRun) -> dict[str, MeasureResult]:
    """Return the seven measures with their official strings, flags and per-question values.

    MAP and MRR keep their per-question values; AvgRec, P, R, F1 and Acc the per-question
    counts they are computed from (``item_stats``, one row per question in question order).
    """
    return results_of(gold.questions, score_run(gold, run))


def results_of(questions: Sequence[str], result: CqaScores) -> dict[str, MeasureResult]:
    """Return the seven measures of ``result``, its questions' values keyed by ``questions``."""
    # MAP and MRR are means over the scored questions (the first ones of the gold), so their
    # values are keyed by those questions' ids; AvgRec, P, R, F1 and Acc are not such means.
    per_query = {
        m: dict(zip(questions[: values.size], values.tolist(), strict=True))
        for m, values in result.per_question.items()
    }
    # P, R, F1 and Acc share one counts array: converted once, the same lists kept by each.
    lists: dict[int, list[list[float]]] = {}
    for counts in result.question_stats.values():
        if id(counts) not in lists:
            lists[id(counts)] = counts.tolist()
    stats = {m: lists[id(counts)] for m, counts in result.question_stats.items()}
    return {
        m: MeasureResult(
            raw=v,
            official=MEASURES.get(m).official(v),
            flags=result.flags if m == "AvgRec" else (),
            per_query=per_query.get(m),
            item_stats=stats.get(m),
        )
        for m, v in result.values.items()
    }
