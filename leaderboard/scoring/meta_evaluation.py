"""What a test set can tell apart: how the runs' order holds across seeded half-splits of its units.

Each of S splits draws a random half A of the n units (h = ⌊n/2⌋ of them); its complement B is
the other half. Every run's measure is computed on each half:

- ``SummedRows``: ``finish((n / |H|) · Σ_{u∈H} rows_u)``, the half's column sums scaled to n
  units, so that a finish dividing by n (a mean over queries, RMSE, a geometric mean) gives the
  half's own measure and a ratio of sums (F1, AvgRec, Pearson's sums, BLEU) is left as it is;
- ``RecomputedRows``: ``measure(rows of H)``.

Values are rounded to 12 significant digits (float noise must not order two runs) and turned
into goodness (negated when lower is better); a value that is undefined on a half (NaN, e.g. a
correlation of a constant side) ranks below every defined one. Per split:

- Kendall's tau-b between the runs' goodness on A (x) and on B (y), over the pairs i < j:
  τ_b = Σ sgn(x_i − x_j) sgn(y_i − y_j) / sqrt(#{x_i ≠ x_j} · #{y_i ≠ y_j}); a half that ties
  every run orders no pair, and its τ counts as 0 (no agreement shown);
- the top agrees when the sets of runs tied for first on A and on B are equal: one run first on
  both halves, or the same runs tied first on both (a tie on one half only does not agree).

Summaries: tau_mean = the mean of τ over the splits, tau_p05 = its 5th percentile (numpy's
default linear interpolation between order statistics), top_stable = the fraction of splits
whose top agrees.

The halves are complements: a run above its set-wide value on A is below it on B. Runs that
differ by noise alone thus give τ around 0 (over sets; a given set's within the spread of its
runs' set-wide values) and a top that seldom agrees.

Splits come from their own SeedSequence stream (kind 2), apart from randomization (0) and
bootstrap (1) samples: the same seed and data give the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.scoring.resampling import (
    FloatArray,
    SummedRows,
    UnitRows,
    sample_chunks,
    sample_generator,
)
from leaderboard.scoring.significance import round12

#: The SeedSequence kind of the half-splits (0 and 1 are randomization and bootstrap samples).
HALF_SPLITS = 2


@dataclass(frozen=True)
class MetaEvaluation:
    """Per-split Kendall tau-b and top agreement of the runs' order on two halves, summarized."""

    taus: FloatArray
    top_agrees: NDArray[np.bool_]

    @property
    def splits(self) -> int:
        """Return the number of splits S."""
        return len(self.taus)

    @property
    def tau_mean(self) -> float:
        """Return the mean of τ_b over the splits."""
        return float(np.mean(self.taus))

    @property
    def tau_p05(self) -> float:
        """Return the 5th percentile of τ_b over the splits (numpy's linear interpolation)."""
        return float(np.percentile(self.taus, 5))

    @property
    def top_stable(self) -> float:
        """Return the fraction of splits whose two halves put the same run(s) first."""
        return float(np.mean(self.top_agrees))


def half_masks(seed: int, splits: int, units: int) -> Iterator[NDArray[np.bool_]]:
    """Yield the splits chunk by chunk (splits × units): True where a unit is in half A.

    Half A holds ⌊units/2⌋ units drawn without repeats, uniformly; half B the others.
    """
    half = units // 2
    for index, size in sample_chunks(splits, units):
        rng = sample_generator(seed, HALF_SPLITS, index)
        chosen = np.argsort(rng.random((size, units)), axis=1, kind="stable")[:, :half]
        mask = np.zeros((size, units), dtype=bool)
        np.put_along_axis(mask, chosen, True, axis=1)
        yield mask


def half_values(runs: list[UnitRows], seed: int, splits: int) -> tuple[FloatArray, FloatArray]:
    """Return each run's measure on half A and on half B of every split (two splits × runs)."""
    units = len(runs[0].rows)
    if units < 2:
        raise ValueError("at least two units are needed to split them in halves")
    summed = [r for r, run in enumerate(runs) if isinstance(run, SummedRows)]
    # Every summed run's columns side by side: a chunk's half sums are one matrix product.
    stacked = np.hstack([runs[r].rows for r in summed]) if summed else np.empty((units, 0))
    starts = np.cumsum([0, *(runs[r].rows.shape[1] for r in summed)])
    on_a: list[FloatArray] = []
    on_b: list[FloatArray] = []
    for mask in half_masks(seed, splits, units):
        a = np.empty((len(mask), len(runs)))
        b = np.empty((len(mask), len(runs)))
        inside = mask.astype(np.float64)
        # Each half's sums scaled to n units: a finish dividing by n gives the half's mean.
        sums_a = (inside @ stacked) * (units / (units // 2))
        sums_b = ((1.0 - inside) @ stacked) * (units / (units - units // 2))
        for k, r in enumerate(summed):
            run = runs[r]
            assert isinstance(run, SummedRows)
            columns = slice(starts[k], starts[k + 1])
            a[:, r] = run.finish(sums_a[:, columns])
            b[:, r] = run.finish(sums_b[:, columns])
        for r, run in enumerate(runs):
            if not isinstance(run, SummedRows):
                a[:, r] = [run.measure(run.rows[m]) for m in mask]
                b[:, r] = [run.measure(run.rows[~m]) for m in mask]
        on_a.append(a)
        on_b.append(b)
    empty = np.empty((0, len(runs)))
    return (np.concatenate(on_a) if on_a else empty, np.concatenate(on_b) if on_b else empty)


def goodness(values: FloatArray, lower_is_better: bool) -> FloatArray:
    """Return values to 12 significant digits, higher better, NaN below every number."""
    rounded = round12(np.ravel(values)).reshape(np.shape(values))
    signed = -rounded if lower_is_better else rounded
    return np.where(np.isnan(signed), -np.inf, signed)


def kendall_tau_b(x: FloatArray, y: FloatArray) -> FloatArray:
    """Return Kendall's tau-b between x and y row by row (0 where a row ties every column).

    τ_b = Σ_{i<j} sgn(x_i − x_j) sgn(y_i − y_j) / sqrt(#{i<j: x_i ≠ x_j} · #{i<j: y_i ≠ y_j}).
    """
    rows, width = x.shape
    both = np.zeros(rows, dtype=np.int64)
    untied_x = np.zeros(rows, dtype=np.int64)
    untied_y = np.zeros(rows, dtype=np.int64)
    for i in range(width - 1):
        # Comparisons, not differences: -inf against -inf is a tie, not NaN.
        sx = (x[:, i : i + 1] > x[:, i + 1 :]).astype(np.int64) - (x[:, i : i + 1] < x[:, i + 1 :])
        sy = (y[:, i : i + 1] > y[:, i + 1 :]).astype(np.int64) - (y[:, i : i + 1] < y[:, i + 1 :])
        both += (sx * sy).sum(axis=1)
        untied_x += np.abs(sx).sum(axis=1)
        untied_y += np.abs(sy).sum(axis=1)
    # The product of counts is exact, so identical orders give exactly 1.
    denominator = np.sqrt((untied_x * untied_y).astype(np.float64))
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, np.clip(both / safe, -1.0, 1.0), 0.0)


def same_top(x: FloatArray, y: FloatArray) -> NDArray[np.bool_]:
    """Return, row by row, whether the columns tied for the highest x and for the highest y match."""
    first_x = x == x.max(axis=1, keepdims=True)
    first_y = y == y.max(axis=1, keepdims=True)
    return np.asarray((first_x == first_y).all(axis=1))


def meta_evaluate(
    runs: list[UnitRows], *, seed: int, splits: int, lower_is_better: bool = False
) -> MetaEvaluation:
    """Return τ_b and top agreement of the runs' order on the two halves of seeded splits."""
    if len(runs) < 2:
        raise ValueError("at least two runs are needed to compare their order")
    if splits < 1:
        raise ValueError("at least one split is needed")
    a, b = half_values(runs, seed, splits)
    x, y = goodness(a, lower_is_better), goodness(b, lower_is_better)
    return MetaEvaluation(kendall_tau_b(x, y), same_top(x, y))
