"""The parameter-free Ladder (Blum & Hardt 2015, Algorithm 2), for higher-is-better values.

Per team the board keeps the released value ``R`` and the per-unit values ``b`` of the run
that set it. A new run with per-unit values ``v`` on the board's ``n`` units:

- mean measures: the first run sets ``R``; a later run replaces the best iff
  ``mean(v) > R + sd(v - b, ddof=1) / sqrt(n)``; the released value is ``mean(v)`` rounded to
  the nearest multiple of ``scale / n``;
- other measures: the run replaces the best iff a paired bootstrap over units (1,000 samples,
  seeded by the run's id) finds it better than the best with one-sided p < alpha; the
  released value is the new value rounded to the measure's display decimals.

Values are higher-is-better: a lower-is-better measure is laddered by its caller on negated
values (and negated measure callables), the released value negated back for display. Rounding
is half-to-even, which negation leaves unchanged, so the negated ladder releases exactly the
negated values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.scoring.resampling import (
    SummedRows,
    UnitRows,
    bootstrap_indices,
    bootstrap_values,
)

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.int64]
#: A corpus-level measure of one run computed on the units an index array draws (repeats kept).
Measure = Callable[[IndexArray], float]

SAMPLES = 1_000
ALPHA = 0.05
#: A mean within this (relative) distance of its threshold ties with it, as in exact arithmetic:
#: 0.2 + sqrt(0.8) / sqrt(5) is 0.6 exactly but 1e-16 under it in floats; a tie does not replace.
TIE = 1e-9


@dataclass(frozen=True)
class Decision:
    """The Ladder's answer to one run: whether it replaced the best and the value now released."""

    replaced: bool
    #: The value the board shows for the team after this run.
    released: float
    #: The run's own unrounded value on the board's units (organizers only).
    value: float
    #: Mean measures: the value the run had to exceed (None for the first run).
    threshold: float | None
    #: Other measures: the bootstrap's one-sided p-value (None for the first run).
    p_value: float | None
    reason: str


def _units(name: str, values: object) -> FloatArray:
    """Return per-unit values as a 1-D float array, refusing too few units and non-finite ones."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"The {name}'s per-unit values must be one value per unit.")
    if len(array) < 2:
        raise ValueError(f"The Ladder needs at least 2 units; the {name} has {len(array)}.")
    bad = np.flatnonzero(~np.isfinite(array))
    if len(bad):
        raise ValueError(
            f"The {name}'s value of unit {int(bad[0])} is {float(array[bad[0]])!r}: "
            "every unit needs a finite value."
        )
    return array


def _released(name: str, released: float) -> float:
    if not math.isfinite(released):
        raise ValueError(f"The {name} {released!r} is not a finite number.")
    return float(released)


def mean_step(
    released: float | None,
    best_units: FloatArray | None,
    new_units: FloatArray,
    scale: float = 1.0,
) -> Decision:
    """Return the Ladder's decision on a run whose measure is the mean of ``new_units``.

    Replaces iff mean(v) > R + sd(v - b, ddof=1) / sqrt(n) (the first run, ``released`` None,
    always does; a difference within ``TIE`` is a tie); releases mean(v) rounded to the
    nearest multiple of scale / n, half to even.
    """
    v = _units("new run", new_units)
    n = len(v)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"The scale must be a positive number, not {scale!r}.")
    value = float(v.mean())
    rounded = float(np.round(value * n / scale)) * scale / n
    if released is None:
        return Decision(True, rounded, value, None, None, "first run: sets the released value")
    r = _released("released value", released)
    if best_units is None:
        raise ValueError("A released value needs the per-unit values of the run that set it.")
    b = _units("best run", best_units)
    if len(b) != n:
        raise ValueError(f"The best run has {len(b)} units and the new run {n}: they must match.")
    threshold = r + float(np.std(v - b, ddof=1)) / math.sqrt(n)
    if value - threshold > TIE * max(1.0, abs(threshold)):
        reason = f"mean {value:.6g} > threshold {threshold:.6g}: replaces the released value"
        return Decision(True, rounded, value, threshold, None, reason)
    reason = f"mean {value:.6g} ≤ threshold {threshold:.6g}: not better than the released value"
    return Decision(False, r, value, threshold, None, reason)


def one_sided_p(
    best: Measure, new: Measure, units: int, seed: int, samples: int = SAMPLES
) -> tuple[float, float]:
    """Return (new − best on all units, one-sided bootstrap p-value that new is not better).

    The paired bootstrap draws units with replacement and recomputes both measures on each
    sample; p = (1 + #{δ* − δ ≥ δ}) / (samples + 1), the bootstrap distribution shifted to
    the null of no difference. A sample whose δ* is NaN counts as a hit: no evidence.
    """
    every = np.arange(units, dtype=np.int64)
    observed = float(new(every)) - float(best(every))
    hits = 0
    for chunk in bootstrap_indices(seed, samples, units):
        diffs = np.fromiter(
            (float(new(idx)) - float(best(idx)) for idx in chunk), np.float64, len(chunk)
        )
        # "not <" rather than ">=": a NaN sample must not make the new run look better.
        hits += int(np.count_nonzero(~(diffs - observed < observed)))
    return observed, (hits + 1) / (samples + 1)


def bootstrap_step(
    released: float | None,
    best: Measure | None,
    new: Measure,
    units: int,
    *,
    seed: int,
    decimals: int,
    alpha: float = ALPHA,
    samples: int = SAMPLES,
) -> Decision:
    """Return the Ladder's decision on a run whose measure is corpus-level (``new(indices)``).

    Replaces iff a paired bootstrap over the ``units`` units (``samples`` samples, ``seed``:
    the run's id) gives a one-sided p < ``alpha`` that ``new`` beats ``best``, the measures
    recomputed on each sample; releases ``new`` on all units rounded to ``decimals``.
    """
    if units < 2:
        raise ValueError(f"The Ladder needs at least 2 units; the run has {units}.")
    if not 0 < alpha < 1:
        raise ValueError(f"The Ladder's alpha must lie strictly between 0 and 1, not {alpha!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"The bootstrap seed must be a non-negative integer, not {seed!r}.")
    value = float(new(np.arange(units, dtype=np.int64)))
    if not math.isfinite(value):
        raise ValueError(f"The new run's value {value!r} is not a finite number.")
    rounded = round(value, decimals)
    if released is None:
        return Decision(True, rounded, value, None, None, "first run: sets the released value")
    r = _released("released value", released)
    if best is None:
        raise ValueError("A released value needs the measure of the run that set it.")
    _, p = one_sided_p(best, new, units, seed, samples)
    if p < alpha:
        reason = f"bootstrap p = {p:.4g} < {alpha:g}: replaces the released value"
        return Decision(True, rounded, value, None, p, reason)
    reason = f"bootstrap p = {p:.4g} ≥ {alpha:g}: not better than the released value"
    return Decision(False, r, value, None, p, reason)


def ladder(sequence: Iterable[FloatArray], scale: float = 1.0) -> list[Decision]:
    """Replay a team's runs of a mean measure in upload order; return every decision."""
    decisions: list[Decision] = []
    released: float | None = None
    best: FloatArray | None = None
    for values in sequence:
        decision = mean_step(released, best, values, scale)
        if decision.replaced:
            released, best = decision.released, values
        decisions.append(decision)
    return decisions


def bootstrap_ladder(
    runs: Sequence[tuple[int, Measure]],
    units: int,
    *,
    decimals: int,
    alpha: float = ALPHA,
    samples: int = SAMPLES,
) -> list[Decision]:
    """Replay a team's (run id, measure) pairs of a corpus-level measure; return every decision."""
    decisions: list[Decision] = []
    released: float | None = None
    best: Measure | None = None
    for run_id, measure in runs:
        decision = bootstrap_step(
            released,
            best,
            measure,
            units,
            seed=run_id,
            decimals=decimals,
            alpha=alpha,
            samples=samples,
        )
        if decision.replaced:
            released, best = decision.released, measure
        decisions.append(decision)
    return decisions


#: Compress a pair's rows to their distinct patterns when there are at most this share of units.
PATTERN_SHARE = 0.25


def pattern_bootstrap(
    best: SummedRows, new: SummedRows, seed: int, samples: int
) -> FloatArray | None:
    """Return both runs' measure on each paired bootstrap sample, drawn over distinct rows.

    A bootstrap sample's counts of units are Multinomial(n, 1/n each); units whose paired rows
    are equal add the same to the sums, so drawing the counts of each distinct paired row,
    Multinomial(n, its share), gives sums with exactly the bootstrap's distribution, at a cost
    in the number of distinct rows rather than of units (classification's one-hot confusion
    rows have a few). None when the rows are too varied for that to pay.
    """
    joint = np.ascontiguousarray(np.hstack([best.rows, new.rows]))
    units = len(joint)
    # Each row as one opaque value: unique rows by their bytes (an axis-0 unique sorts 20×
    # slower). Equal floats have equal bytes but for ±0, which only splits a pattern in two.
    as_bytes = joint.view(np.dtype((np.void, joint.dtype.itemsize * joint.shape[1]))).ravel()
    _, first, counts = np.unique(as_bytes, return_index=True, return_counts=True)
    patterns = joint[first]
    if len(patterns) > PATTERN_SHARE * units:
        return None
    # Its own stream (kind 2), apart from the index bootstrap's (kind 1) of the same seed.
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    draws = rng.multinomial(units, counts / units, size=samples).astype(np.float64)
    sums = draws @ patterns
    width = best.rows.shape[1]
    return np.column_stack([best.finish(sums[:, :width]), new.finish(sums[:, width:])])


def rows_step(
    released: float | None,
    best: UnitRows | None,
    new: UnitRows,
    *,
    seed: int,
    decimals: int,
    scale: float = 1.0,
    alpha: float = ALPHA,
    samples: int = SAMPLES,
) -> Decision:
    """Return ``bootstrap_step``'s decision on runs given by their resampling rows, vectorized.

    The paired bootstrap of ``bootstrap_step`` (the measures recomputed on each sample of
    units drawn with replacement): summed rows with few distinct values are drawn by
    ``pattern_bootstrap`` (the same distribution, another stream of the seed), others exactly
    as ``bootstrap_step`` draws them, a chunk of samples at a time. The released value is the
    new value in shown units (× ``scale``) rounded to ``decimals``, stored back unscaled.
    """
    units = len(new.rows)
    if units < 2:
        raise ValueError(f"The Ladder needs at least 2 units; the run has {units}.")
    if not 0 < alpha < 1:
        raise ValueError(f"The Ladder's alpha must lie strictly between 0 and 1, not {alpha!r}.")
    value = new.value()
    if not math.isfinite(value):
        raise ValueError(f"The new run's value {value!r} is not a finite number.")
    rounded = round(value * scale, decimals) / scale
    if released is None:
        return Decision(True, rounded, value, None, None, "first run: sets the released value")
    r = _released("released value", released)
    if best is None:
        raise ValueError("A released value needs the rows of the run that set it.")
    if len(best.rows) != units:
        raise ValueError(
            f"The best run has {len(best.rows)} units and the new run {units}: they must match."
        )
    observed = value - best.value()
    drawn = None
    if isinstance(best, SummedRows) and isinstance(new, SummedRows):
        drawn = pattern_bootstrap(best, new, seed, samples)
    if drawn is None:
        drawn = bootstrap_values([best, new], seed, samples)
    diffs = drawn[:, 1] - drawn[:, 0]
    # "not <" rather than ">=": a NaN sample must not make the new run look better.
    p = (int(np.count_nonzero(~(diffs - observed < observed))) + 1) / (samples + 1)
    if p < alpha:
        reason = f"bootstrap p = {p:.4g} < {alpha:g}: replaces the released value"
        return Decision(True, rounded, value, None, p, reason)
    reason = f"bootstrap p = {p:.4g} ≥ {alpha:g}: not better than the released value"
    return Decision(False, r, value, None, p, reason)
