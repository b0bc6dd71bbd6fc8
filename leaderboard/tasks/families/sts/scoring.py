"""Score a validated STS run against its parts' gold: Pearson per part and their weighted mean.

For analysis a run keeps its prediction on every scored pair (``item_values``), keyed by the
pair's part and 1-based run line (``headlines:12``); resampling draws these pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

import numpy as np

from leaderboard.formats.sts import StsGold
from leaderboard.scoring.correlation import official, pearson, weighted_overall
from leaderboard.scoring.pearson_sums import (
    COLUMNS,
    pearson_from_sums,
    pearson_rows,
    sums_accurate,
)
from leaderboard.scoring.resampling import NotResampled, RecomputedRows, SummedRows, UnitRows
from leaderboard.tasks.families.base import MeasureResult, StoredScore

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


def item_id(slug: str, index: int) -> str:
    """Return the id of a scored pair: its part and 1-based run line, e.g. ``headlines:12``."""
    return f"{slug}:{index + 1}"


def item_values(values: Mapping[str, np.ndarray], golds: Mapping[str, StsGold]) -> dict[str, float]:
    """Return the run's prediction on every scored pair of every part, by ``item_id``."""
    return {
        item_id(slug, index): float(values[slug][index])
        for slug, gold in golds.items()
        for index in gold.scored_index.tolist()
    }


def unit_rows(
    key: str,
    golds: Mapping[str, StsGold],
    weights: Mapping[str, int],
    overall: str,
    stored: StoredScore,
) -> tuple[list[str], UnitRows]:
    """Return the scored pairs and their rows for the overall measure or one part's r.

    Each pair's row holds, in its part's block, Pearson's sums [1, u, v, u², v², uv] (u and v
    the prediction and gold less the part's gold mean, an offset every run shares), then the
    raw prediction and gold. r_s follows from the block's sums (0 when a side is constant,
    as the scorer counts it), the overall from the fixed weights. A run whose values the sums
    would not reproduce accurately (see ``sums_accurate``) is recomputed on each sample.
    """
    parts = list(golds) if key == overall else [key]
    if key != overall and key not in golds:
        raise NotResampled(f"{key} is not a measure of this set")
    if stored.item_values is None:
        raise NotResampled(
            f"{key}: the run keeps no predicted values (scored before they were); re-score the set"
        )
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    raw: list[np.ndarray] = []
    accurate = True
    for p, slug in enumerate(parts):
        gold = golds[slug]
        part_ids = [item_id(slug, index) for index in gold.scored_index.tolist()]
        if any(i not in stored.item_values for i in part_ids):
            raise NotResampled(f"{key}: the stored predictions do not cover the gold; re-score")
        x = np.array([float(stored.item_values[i]) for i in part_ids], dtype=np.float64)
        y = np.asarray(gold.values, dtype=np.float64)
        offset = float(np.mean(y))
        accurate = accurate and sums_accurate(x, offset) and sums_accurate(y, offset)
        block = np.zeros((len(x), COLUMNS * len(parts)))
        block[:, COLUMNS * p : COLUMNS * (p + 1)] = pearson_rows(x, y, offset)
        ids += part_ids
        blocks.append(block)
        raw.append(np.column_stack([x, y]))
    rows = np.hstack([np.vstack(blocks), np.vstack(raw)])
    part_weights = np.array([weights[slug] for slug in parts], dtype=np.float64)

    def finish(sums: np.ndarray) -> np.ndarray:
        r = np.stack(
            [
                pearson_from_sums(sums[..., COLUMNS * p : COLUMNS * (p + 1)])
                for p in range(len(parts))
            ],
            axis=-1,
        )
        r = np.where(np.isnan(r), 0.0, r)  # a constant side counts as 0
        if key != overall:
            return np.asarray(r[..., 0])
        return np.asarray((r * part_weights).sum(axis=-1) / part_weights.sum())

    def recompute(sample: np.ndarray) -> float:
        per_set: dict[str, float] = {}
        for p, slug in enumerate(parts):
            chosen = sample[:, COLUMNS * p] != 0
            r = pearson(sample[chosen, -2], sample[chosen, -1])
            per_set[slug] = 0.0 if r is None else r
        if key != overall:
            return per_set[key]
        return weighted_overall(per_set, weights)

    if accurate:
        return ids, SummedRows(rows, finish, recompute=recompute)
    return ids, RecomputedRows(rows, recompute)
