"""Paired significance between the runs of a table, Holm's correction and WMT-style clusters.

Methods: ``randomization`` (paired approximate randomization, the measure recomputed on every
sample), ``bootstrap`` (paired bootstrap of units), ``t-test`` and ``wilcoxon`` (scipy's
``ttest_rel`` and ``wilcoxon``, with scipy's defaults, on the per-query differences a − b
rounded to 12 significant digits, for measures that are means over queries). Differences are
returned in the table's scale: the stored values times the column's factor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.scoring.resampling import (
    FloatArray,
    UnitRows,
    bootstrap_p,
    bootstrap_values,
    percentile_interval,
    randomization_diffs,
    randomization_p,
)

METHODS = ("randomization", "bootstrap", "t-test", "wilcoxon")
#: Methods that test per-query values directly, for measures that are their mean.
PER_QUERY_METHODS = ("t-test", "wilcoxon")


class NotTestable(ValueError):
    """The method cannot test this measure (e.g. a t-test of a corpus-level F1)."""


@dataclass(frozen=True)
class PairResult:
    """One tested pair: a is above b in table order; diff is a − b."""

    a: int
    b: int
    diff: float
    p: float
    p_adjusted: float = 1.0


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm–Bonferroni adjusted p-values: step-down max of (m − rank + 1)·p, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def round12(values: FloatArray) -> FloatArray:
    """Return values rounded to 12 significant digits (float noise must not decide a test)."""
    return np.array([float(f"{v:.12g}") for v in values], dtype=np.float64)


def query_differences(a: FloatArray, b: FloatArray, zero: float) -> FloatArray:
    """Return the per-query differences a − b to 12 significant digits, those below ``zero`` 0."""
    # Equal differences must tie whatever floating-point path made them (Wilcoxon ranks ties).
    d = round12(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    d[np.abs(d) < zero] = 0.0
    return d


def per_query_p(method: str, a: FloatArray, b: FloatArray, zero: float = 1e-12) -> float:
    """Return the t-test or Wilcoxon p-value of the rounded per-query differences a − b."""
    # scipy.stats takes half a second to import: only the t-test and Wilcoxon need it.
    from scipy import stats

    d = query_differences(a, b, zero)
    if not d.any():
        return 1.0  # no difference at all: both tests are undefined, nothing is significant
    if method == "t-test":
        p = float(stats.ttest_rel(d, np.zeros_like(d)).pvalue)
    else:
        p = float(stats.wilcoxon(d).pvalue)
    return 1.0 if np.isnan(p) else p


def compare_pairs(
    runs: list[UnitRows],
    pairs: list[tuple[int, int]],
    *,
    method: str,
    seed: int,
    samples: int,
    tolerance: float,
    per_query: list[FloatArray] | None = None,
    scale: float = 1.0,
) -> list[PairResult]:
    """Return each pair's difference (times ``scale``, the table's) and raw p-value."""
    values = [run.value() for run in runs]
    observed = [values[i] - values[j] for i, j in pairs]
    if method in PER_QUERY_METHODS:
        if per_query is None:
            raise NotTestable(f"the {method} needs a measure that is a mean over queries")
        # A difference below 1e-12 of the measure's magnitude is zero (the tolerance is 1e-9).
        zero = tolerance * 1e-3
        ps = [per_query_p(method, per_query[i], per_query[j], zero) for i, j in pairs]
    elif method == "randomization":
        diffs = randomization_diffs(runs, pairs, seed, samples)
        ps = [randomization_p(d, diffs[:, k], tolerance) for k, d in enumerate(observed)]
    elif method == "bootstrap":
        boot = bootstrap_values(runs, seed, samples)
        ps = [
            bootstrap_p(d, boot[:, i] - boot[:, j])
            for d, (i, j) in zip(observed, pairs, strict=True)
        ]
    else:
        raise NotTestable(f"unknown method {method!r}; methods: {', '.join(METHODS)}")
    # The table shows stored values times its factor: the difference of two shown values.
    shown = [values[i] * scale - values[j] * scale for i, j in pairs]
    return [PairResult(i, j, d, p) for (i, j), d, p in zip(pairs, shown, ps, strict=True)]


def adjust(results: list[PairResult], correction: str) -> list[PairResult]:
    """Return the results with adjusted p-values (``holm`` or ``none``)."""
    raw = [r.p for r in results]
    adjusted = holm(raw) if correction == "holm" else raw
    return [PairResult(r.a, r.b, r.diff, r.p, q) for r, q in zip(results, adjusted, strict=True)]


def clusters(
    order: Sequence[int],
    results: Sequence[PairResult],
    alpha: float,
    *,
    lower_is_better: bool = False,
) -> list[list[int]]:
    """Group runs (indices in table order) into WMT-style significance clusters."""
    # A run starts a new cluster when it is significantly worse than every run of the current
    # one, otherwise it joins it: each cluster's first run is worse than all of the one above.
    by_pair = {(r.a, r.b): r for r in results}
    groups: list[list[int]] = []
    for run in order:
        if groups and not all(_worse(by_pair, above, run, alpha, lower_is_better)
                              for above in groups[-1]):  # fmt: skip
            groups[-1].append(run)
        else:
            groups.append([run])
    return groups


def _worse(
    by_pair: dict[tuple[int, int], PairResult], above: int, run: int, alpha: float, lower: bool
) -> bool:
    """Return whether ``run`` is significantly worse than ``above``."""
    result = by_pair.get((above, run))
    if result is None:
        return False
    better = result.diff < 0 if lower else result.diff > 0
    return better and result.p_adjusted < alpha


def intervals(
    runs: list[UnitRows], seed: int, samples: int, level: float = 0.95
) -> list[tuple[float, float]]:
    """Return each run's bootstrap percentile interval of its measure."""
    return intervals_of(bootstrap_values(runs, seed, samples), level)


def intervals_of(boot: FloatArray, level: float = 0.95) -> list[tuple[float, float]]:
    """Return each run's percentile interval from its column of bootstrap values (B × runs)."""
    return [percentile_interval(boot[:, r], level) for r in range(boot.shape[1])]
