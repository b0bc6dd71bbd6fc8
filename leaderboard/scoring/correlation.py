"""Pearson correlation over scored pairs and the pair-weighted overall score (STS family)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from leaderboard.scoring.registry import Measure, MeasureRegistry


def is_constant(values: np.ndarray) -> bool:
    """Return whether every value is equal (min == max), with no overflow for extreme values."""
    # np.ptp computes max - min, which overflows (with a warning) for values near ±1.8e308.
    return bool(values.size == 0 or values.min() == values.max())


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Return Pearson's r of ``x`` and ``y``, or None when either is constant.

    r = sum((x-mx)(y-my)) / sqrt(sum((x-mx)^2) sum((y-my)^2)), with mx, my the means.
    Population (1/n) covariances cancel, so this equals the 2016 Perl scorer's value.
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(
            f"pearson needs two 1-D arrays of one length, got {xs.shape} and {ys.shape}"
        )
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError("pearson needs finite values")
    # Exact equality, not a variance threshold: a constant such as 0.1 leaves rounding noise
    # in sum((x-mx)^2) that would otherwise yield an arbitrary r.
    if xs.size < 2 or is_constant(xs) or is_constant(ys):
        return None
    # r ignores scale: bring huge or tiny values (e.g. 1e200) near 1 so the sums below cannot
    # overflow or underflow; ordinary values are left as they are, bit for bit.
    xs, ys = _near_one(xs), _near_one(ys)
    dx = xs - xs.mean()
    dy = ys - ys.mean()
    r = float(np.dot(dx, dy) / math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy))))
    # Rounding can push |r| a hair past 1 for perfectly (anti)correlated data.
    return min(1.0, max(-1.0, r))


def _near_one(values: np.ndarray) -> np.ndarray:
    """Return ``values`` divided by their largest magnitude when it is outside 1e-60..1e60."""
    peak = float(np.max(np.abs(values)))
    return values if 1e-60 <= peak <= 1e60 else values / peak


def weighted_overall(per_set: Mapping[str, float], weights: Mapping[str, int]) -> float:
    """Return the weighted mean of the per-set values: sum(n_s * r_s) / sum(n_s).

    ``weights`` are the scored-pair counts n_s; they must cover exactly the sets of ``per_set``.
    """
    if set(per_set) != set(weights):
        raise ValueError(
            f"weights are for sets {sorted(weights)}, but values are for sets {sorted(per_set)}"
        )
    if not per_set:
        raise ValueError("no per-set values to combine")
    if any(w < 0 for w in weights.values()):
        raise ValueError("weights must not be negative")
    total = sum(weights[s] for s in per_set)
    if total <= 0:
        raise ValueError("the weights add up to zero")
    return math.fsum(weights[s] * per_set[s] for s in per_set) / total


#: Pearson's r over the scored pairs: shown and ranked officially to 5 decimals, printf-style.
PEARSON = Measure(
    "Pearson", "Pearson", "correlation", 5, 5, notes="Pearson correlation over the scored pairs"
)
#: STS columns are the overall measure and the evaluation parts, each a Pearson correlation.
MEASURES = MeasureRegistry(
    "sts",
    [],
    patterns=[(re.compile(r"[A-Za-z0-9_.-]{1,64}"), lambda m: PEARSON.renamed(m.group(0)))],
    forms=("the overall measure", "the slug of each evaluation part"),
)


def official(value: float) -> str:
    """Return ``value`` as shown and ranked officially: 5 decimals, printf-style."""
    return PEARSON.official(value)
