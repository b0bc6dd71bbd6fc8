"""Declare the SemEval-2016 Task 3 (CQA) measures, without their numpy kernels."""

from __future__ import annotations

from leaderboard.scoring.registry import Measure, MeasureRegistry


def _cqa(key: str, factor: float, notes: str) -> Measure:
    # Stored unrounded; the official string has 4 decimals and tables show 2 on the x100 scale.
    return Measure(key, key, "percent", 2, 4, factor=factor, notes=notes)


#: The CQA measures, in the order the official scorer prints them.
MEASURES = MeasureRegistry(
    "cqa",
    [
        _cqa("MAP", 100, "mean average precision over each question's top 10; x100"),
        _cqa("AvgRec", 100, "average recall over each question's top 10; x100"),
        _cqa("MRR", 1, "mean reciprocal rank over each question's top 10; x100 by definition"),
        _cqa("P", 100, "precision of the 'true' labels; x100"),
        _cqa("R", 100, "recall of the 'true' labels; x100"),
        _cqa("F1", 100, "F1 of the 'true' labels; x100"),
        _cqa("Acc", 100, "accuracy of the labels; x100"),
    ],
)
CQA_MEASURES: tuple[str, ...] = MEASURES.keys

#: Only the first TOP_K candidates of each ranked question count for MAP, AvgRec and MRR.
TOP_K = 10

AVGREC_UNDEFINED = "avgrec-undefined"
