"""Resample a measure's units: paired randomization, paired bootstrap and bootstrap intervals.

A run's measure is given by its per-unit rows (the unit is a query, question, topic, item or
segment) and how the measure follows from them:

- ``SummedRows``: the measure is a function of the column sums of the rows (a mean of per-query
  values: one column; a corpus F1: the confusion counts; BLEU: sacrebleu's statistics). A
  sample's sums are a matrix product, so thousands of samples cost one product per chunk.
- ``RecomputedRows``: anything else (Spearman, Kendall): the measure is recomputed from the
  rows of each sample.

A family may give one measure summed rows for some runs and recomputed rows of the same layout
for others (Pearson from sums where they are accurate); a pair mixing the two is recomputed on
every sample, the summed run by its ``recompute`` when it has one.

Samples are drawn from a generator per seed, kind and chunk (a SeedSequence spawn key): the same
seed and data give the same numbers, and every pair of runs is tested on the same samples
(common random numbers), which keeps all pairs of a table one matrix product per chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
#: Samples drawn at a time, at most: bounds the sample matrix to CHUNK × units entries.
CHUNK = 500
#: Entries of a chunk's sample matrix, at most (8 bytes each as floats): large sets of items
#: take fewer samples per chunk instead of more memory.
CHUNK_ENTRIES = 4_000_000


class NotResampled(ValueError):
    """A measure keeps nothing per unit to resample (the message says which and why)."""


@dataclass(frozen=True)
class SummedRows:
    """A measure that is ``finish(column sums of rows)``, vectorized over leading axes."""

    rows: FloatArray
    finish: Callable[[FloatArray], FloatArray]
    #: The per-unit values when the measure is their mean (what t-tests and Wilcoxon test).
    mean_of: FloatArray | None = None
    #: The measure recomputed from rows, for samples mixing these rows with a recomputed run's
    #: (whose rows may not sum accurately); None: ``finish`` of the rows' sums.
    recompute: Callable[[FloatArray], float] | None = None

    def value(self) -> float:
        """Return the measure on all units."""
        return float(self.finish(self.rows.sum(axis=0)))


@dataclass(frozen=True)
class RecomputedRows:
    """A measure recomputed by ``measure(rows)`` on each sample's rows."""

    rows: FloatArray
    measure: Callable[[FloatArray], float]

    def value(self) -> float:
        """Return the measure on all units."""
        return float(self.measure(self.rows))


UnitRows = SummedRows | RecomputedRows


def sample_chunks(samples: int, units: int) -> Iterator[tuple[int, int]]:
    """Yield (chunk index, samples in it): chunks bounded by CHUNK and CHUNK_ENTRIES."""
    size = max(1, min(CHUNK, CHUNK_ENTRIES // max(units, 1)))
    for index, start in enumerate(range(0, samples, size)):
        yield index, min(size, samples - start)


def sample_generator(seed: int, kind: int, chunk: int) -> np.random.Generator:
    """Return one chunk's generator of a kind of sample (0: swaps, 1: bootstrap, 2: half-splits)."""
    # A spawn key keeps every (kind, chunk) stream apart from each other and from a plain
    # default_rng(seed) a caller may use for its own data.
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(kind, chunk)))


def swap_masks(seed: int, samples: int, units: int) -> Iterator[NDArray[np.bool_]]:
    """Yield the randomization samples chunk by chunk: True where a unit's outputs swap."""
    for index, size in sample_chunks(samples, units):
        rng = sample_generator(seed, 0, index)
        yield rng.random((size, units)) < 0.5


def bootstrap_indices(seed: int, samples: int, units: int) -> Iterator[NDArray[np.int64]]:
    """Yield the bootstrap samples chunk by chunk: the units each sample draws, with repeats."""
    for index, size in sample_chunks(samples, units):
        rng = sample_generator(seed, 1, index)
        yield rng.integers(0, units, size=(size, units))


def _counts(indices: NDArray[np.int64], units: int) -> FloatArray:
    """Return how often each sample draws each unit (samples × units)."""
    size = len(indices)
    flat = (np.arange(size)[:, None] * units + indices).ravel()
    return np.bincount(flat, minlength=size * units).reshape(size, units).astype(np.float64)


def randomization_diffs(
    runs: list[UnitRows], pairs: list[tuple[int, int]], seed: int, samples: int
) -> FloatArray:
    """Return runs[i] − runs[j] per pair (columns) on each randomization sample (rows).

    Each sample swaps a unit's outputs of the two runs with probability ½; every pair is
    tested on the same samples, so summed measures take one matrix product per chunk.
    """
    units = len(runs[0].rows)
    # Each summed run's columns in one matrix, so a chunk takes a single product.
    offsets: dict[int, int] = {}
    blocks: list[FloatArray] = []
    width = 0
    for r, run in enumerate(runs):
        if isinstance(run, SummedRows):
            offsets[r] = width
            blocks.append(run.rows)
            width += run.rows.shape[1]
    stacked = np.hstack(blocks) if blocks else np.empty((units, 0))
    # Only summed runs' totals are used (a recomputed run's rows may not even sum finitely).
    totals = {r: run.rows.sum(axis=0) for r, run in enumerate(runs) if isinstance(run, SummedRows)}
    out: list[FloatArray] = []
    for mask in swap_masks(seed, samples, units):
        chunk = np.empty((len(mask), len(pairs)))
        moved = mask.astype(np.float64) @ stacked
        for column, (i, j) in enumerate(pairs):
            a, b = runs[i], runs[j]
            if isinstance(a, SummedRows) and isinstance(b, SummedRows):
                start_a, start_b = offsets[i], offsets[j]
                # Σ over swapped units of (b − a): what a gains and b loses.
                delta = (
                    moved[:, start_b : start_b + b.rows.shape[1]]
                    - moved[:, start_a : start_a + a.rows.shape[1]]
                )
                chunk[:, column] = a.finish(totals[i] + delta) - b.finish(totals[j] - delta)
            else:
                for k, swap in enumerate(mask):
                    rows_a = np.where(swap[:, None], b.rows, a.rows)
                    rows_b = np.where(swap[:, None], a.rows, b.rows)
                    chunk[k, column] = _recompute(a, rows_a) - _recompute(b, rows_b)
        out.append(chunk)
    return np.concatenate(out) if out else np.empty((0, len(pairs)))


def bootstrap_values(runs: list[UnitRows], seed: int, samples: int) -> FloatArray:
    """Return each run's measure on each bootstrap sample (samples × runs), paired."""
    units = len(runs[0].rows)
    out: list[FloatArray] = []
    for indices in bootstrap_indices(seed, samples, units):
        chunk = np.empty((len(indices), len(runs)))
        counts: FloatArray | None = None
        for r, run in enumerate(runs):
            if isinstance(run, SummedRows):
                if counts is None:
                    counts = _counts(indices, units)
                chunk[:, r] = run.finish(counts @ run.rows)
            else:
                chunk[:, r] = [run.measure(run.rows[idx]) for idx in indices]
        out.append(chunk)
    return np.concatenate(out) if out else np.empty((0, len(runs)))


def _recompute(run: UnitRows, rows: FloatArray) -> float:
    if isinstance(run, SummedRows):
        if run.recompute is not None:
            return float(run.recompute(rows))
        return float(run.finish(rows.sum(axis=0)))
    return float(run.measure(rows))


def randomization_p(observed: float, diffs: FloatArray, tolerance: float) -> float:
    """Return (c + 1) / (N + 1), c the samples with |d*| ≥ |d| − tolerance."""
    hits = int(np.count_nonzero(np.abs(diffs) >= abs(observed) - tolerance))
    return (hits + 1) / (len(diffs) + 1)


def bootstrap_p(observed: float, diffs: FloatArray) -> float:
    """Return (1 + #{b : |δ*_b − δ| ≥ |δ|}) / (N + 1), two-sided."""
    hits = int(np.count_nonzero(np.abs(diffs - observed) >= abs(observed)))
    return (hits + 1) / (len(diffs) + 1)


def percentile_interval(values: FloatArray, level: float = 0.95) -> tuple[float, float]:
    """Return the percentile interval of bootstrap values, e.g. the 2.5th and 97.5th."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def mean_rows(per_unit: FloatArray) -> SummedRows:
    """Return the rows of a measure that is the mean of per-unit values."""
    count = len(per_unit)
    values = per_unit.astype(np.float64)
    return SummedRows(values.reshape(-1, 1), lambda s: s[..., 0] / count, mean_of=values)
