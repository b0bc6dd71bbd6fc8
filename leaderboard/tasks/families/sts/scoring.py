"""Score a validated STS run against its parts' gold: Pearson per part and their weighted mean."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

import numpy as np

from leaderboard.formats.sts import StsGold
from leaderboard.scoring.correlation import official, pearson, weighted_overall
from leaderboard.tasks.families.base import MeasureResult

#: Footnote for a set whose output is constant on the scored pairs only; its r counts as 0.
CONSTANT_ON_SCORED_NOTE = "system output constant on the scored pairs; counted as 0"
#: The flag of a part whose output is constant on its scored pairs.
CONSTANT_ON_SCORED = "constant-on-scored"


class StsScore(TypedDict):
    """Scores of one run: r per set (0.0 where constant on S), those sets, weighted overall."""

    per_set: dict[str, float]
    constant_sets: list[str]
    overall: float


def score_run(
    values: Mapping[str, np.ndarray], golds: Mapping[str, StsGold], weights: Mapping[str, int]
) -> StsScore:
    """Score a run: Pearson r per set over its scored pairs, and their pair-weighted mean.

    r_s = pearson(x[S], y) with S the gold's scored run lines; r_s = 0 (and the set listed in
    ``constant_sets``) when x is constant on S. overall = sum(n_s r_s) / sum(n_s), computed
    from the unrounded r_s with ``weights`` = n_s.
    """
    per_set: dict[str, float] = {}
    constant: list[str] = []
    for slug, gold in golds.items():
        if slug not in values:
            raise ValueError(f"{slug}: the run has no values for this set.")
        x = np.asarray(values[slug], dtype=np.float64)
        if gold.scored_index.size and int(gold.scored_index.max()) >= x.size:
            raise ValueError(
                f"{slug}: the gold scores run line {int(gold.scored_index.max()) + 1:,} but the "
                f"run has {x.size:,} lines."
            )
        r = pearson(x[gold.scored_index], gold.values)
        if r is None:
            constant.append(slug)
            r = 0.0
        per_set[slug] = r
    return {
        "per_set": per_set,
        "constant_sets": constant,
        "overall": weighted_overall(per_set, weights),
    }


def measure_results(
    values: Mapping[str, np.ndarray],
    golds: Mapping[str, StsGold],
    weights: Mapping[str, int],
    overall: str,
) -> dict[str, MeasureResult]:
    """Return the overall measure, then each part's r, with their official strings and flags."""
    # Pearson is not a mean of per-pair values, so no measure carries per-query values.
    result = score_run(values, golds, weights)
    first = f"gold:{next(iter(golds))}"
    out = {overall: MeasureResult(result["overall"], official(result["overall"]), gold_role=first)}
    for slug, r in result["per_set"].items():
        flags = (CONSTANT_ON_SCORED,) if slug in result["constant_sets"] else ()
        out[slug] = MeasureResult(r, official(r), flags, gold_role=f"gold:{slug}")
    return out
