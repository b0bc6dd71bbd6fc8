"""Per-query diagnostics: the best, median and worst value of each query over the ranked runs,
and one run's values against them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QuerySummary:
    """One query's best, median and worst value over the runs that have it."""

    query: str
    best: float
    median: float
    worst: float
    runs: int


@dataclass(frozen=True)
class QueryComparison:
    """One query of a run: its value, the median and best of all runs, and value − median."""

    query: str
    value: float
    median: float
    best: float
    difference: float


def summarize(
    per_run: Sequence[Mapping[str, float]], *, lower_is_better: bool = False
) -> dict[str, QuerySummary]:
    """Return each query's best, median and worst value over the runs' per-query values."""
    values: dict[str, list[float]] = {}
    for run in per_run:
        for query, value in run.items():
            values.setdefault(query, []).append(float(value))
    out: dict[str, QuerySummary] = {}
    for query, found in values.items():
        array = np.array(found)
        high, low = float(array.max()), float(array.min())
        best, worst = (low, high) if lower_is_better else (high, low)
        out[query] = QuerySummary(query, best, float(np.median(array)), worst, len(found))
    return out


def compare(
    run: Mapping[str, float],
    summary: Mapping[str, QuerySummary],
    *,
    lower_is_better: bool = False,
) -> list[QueryComparison]:
    """Return a run's queries against the median and best, the largest shortfall first."""
    rows = [
        QueryComparison(
            q, float(v), summary[q].median, summary[q].best, float(v) - summary[q].median
        )
        for q, v in run.items()
        if q in summary
    ]
    # A shortfall is below the median, or above it when lower is better.
    sign = -1.0 if lower_is_better else 1.0
    return sorted(rows, key=lambda r: (sign * r.difference, r.query))
