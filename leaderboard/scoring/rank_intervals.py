"""Rank intervals: where each run ranks over the bootstrap samples of its table's units.

Given a samples × runs matrix V of a measure (paired: every run's value on the same resample
of the units, as ``resampling.bootstrap_values`` returns it) and the measure's direction:

- a run's rank in sample b is ``1 + #{i in field : V[b, i] strictly better than V[b, j]}``
  (standard competition ranking, ties share a rank); ``field`` is the runs that displace others
  (all by default); a run outside it (a baseline, a late run) is ranked "as if", as the table
  ranks it, without displacing anyone;
- a value that is undefined in a sample (NaN, e.g. a Pearson correlation of a constant resample)
  is worse than every defined value and ties with the other undefined ones: a run whose measure
  cannot be computed on a resample has nothing to rank it above anyone there;
- run j's interval is ``[r_(⌈t·B⌉), r_(⌈(1 − t)·B⌉)]``, the 1-based order statistics of its B
  sample ranks, with t = (1 − level) / 2 (the 2.5th and 97.5th percentile at level 0.95).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]


def sample_ranks(
    values: NDArray[np.float64],
    *,
    lower_is_better: bool = False,
    field: Sequence[bool] | None = None,
) -> IntArray:
    """Return each run's rank in each sample: 1 + the field's values strictly better (B × runs)."""
    values = np.asarray(values, dtype=np.float64)
    samples, runs = values.shape
    members = np.ones(runs, dtype=bool) if field is None else np.asarray(field, dtype=bool)
    if members.shape != (runs,):
        raise ValueError(f"field has {members.size} entries for {runs} runs")
    # Each value becomes its position among all defined values of the matrix (higher: better),
    # undefined ones -1: integers compare exactly, and the NaN rule is plain ordering.
    scores = -values if lower_is_better else values
    defined = ~np.isnan(scores)
    distinct = np.unique(scores[defined])
    position = np.where(defined, np.searchsorted(distinct, np.where(defined, scores, 0)), -1)
    # Rows are made disjoint by an offset per sample, so one sorted array and one search count
    # each value's field values at or below it within its own sample.
    width = len(distinct) + 1
    offsets = np.arange(samples, dtype=np.int64)[:, None] * width
    keys = position.astype(np.int64) + 1 + offsets
    competing = np.sort(keys[:, members], axis=None)
    at_or_below = np.searchsorted(competing, keys, side="right") - offsets // width * members.sum()
    return (1 + members.sum() - at_or_below).astype(np.int64)


def order_statistic_positions(samples: int, level: float = 0.95) -> tuple[int, int]:
    """Return ⌈t·B⌉ and ⌈(1 − t)·B⌉, t = (1 − level) / 2, exactly (1-based positions)."""
    if samples < 1:
        raise ValueError("rank intervals need at least one sample")
    # Exact fractions: 0.025 · 10,000 must be 250, not the 250.00000000000003 of floats.
    tail = (1 - Fraction(str(level))) / 2
    low = -(-tail * samples // 1)
    high = -(-(1 - tail) * samples // 1)
    return max(1, int(low)), max(1, int(high))


def rank_intervals(
    values: NDArray[np.float64],
    *,
    lower_is_better: bool = False,
    field: Sequence[bool] | None = None,
    level: float = 0.95,
) -> list[tuple[int, int]]:
    """Return each run's [r_(⌈t·B⌉), r_(⌈(1 − t)·B⌉)] over its B sample ranks, t = (1 − level)/2."""
    ranks = np.sort(sample_ranks(values, lower_is_better=lower_is_better, field=field), axis=0)
    low, high = order_statistic_positions(len(ranks), level)
    return [(int(lo), int(hi)) for lo, hi in zip(ranks[low - 1], ranks[high - 1], strict=True)]
