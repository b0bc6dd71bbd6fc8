"""Time the significance analysis of a large table: 50 ranked runs on 2,000 queries.

Each run's per-query values are a shared difficulty plus the run's own skill and noise. All
1,225 pairs are tested with 10,000 paired randomization samples (Holm-adjusted, clustered),
then each run's 95 % bootstrap interval and rank interval are drawn from the same 10,000
resamples. Target: under 60 s of wall time and 1 GB peak memory on this machine.

The meta-evaluation of the same runs (Kendall's tau-b and the top's stability over 200 seeded
half-splits of the queries) is timed on their means per query (summed rows) and on a measure
recomputed on each half (Spearman's rho of each run's predictions of 2,000 items, scipy's).
Target: each under 20 s and 1 GB (``--meta-only`` skips the significance part, so that the
peak memory is the meta-evaluation's own).

    .venv/bin/python -m bench.analysis [--runs 50] [--queries 2000] [--samples 10000]
        [--splits 200] [--meta-only]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from leaderboard.scoring.meta_evaluation import meta_evaluate
from leaderboard.scoring.rank_intervals import rank_intervals
from leaderboard.scoring.resampling import RecomputedRows, UnitRows, bootstrap_values, mean_rows
from leaderboard.scoring.significance import adjust, clusters, compare_pairs, intervals_of


def significance_figures(runs: list[UnitRows], samples: int) -> float:
    """Print the significance, interval and rank interval timings; return their total in seconds."""
    count = len(runs)
    order = sorted(range(count), key=lambda i: -runs[i].value())
    pairs = [(order[a], order[b]) for a in range(count) for b in range(a + 1, count)]
    start = time.perf_counter()
    results = compare_pairs(
        runs, pairs, method="randomization", seed=0, samples=samples, tolerance=1e-9
    )
    results = adjust(results, "holm")
    groups = clusters(order, results, 0.05)
    tested = time.perf_counter() - start
    start = time.perf_counter()
    boot = bootstrap_values(runs, seed=0, samples=samples)
    intervals_of(boot)
    bootstrapped = time.perf_counter() - start
    start = time.perf_counter()
    rank_intervals(boot)
    ranked = time.perf_counter() - start
    print(f"{len(pairs):,} pairs, {samples:,} samples")
    print(f"randomization, all pairs, Holm, clusters: {tested:6.2f} s ({len(groups)} clusters)")
    print(f"bootstrap intervals of every run:         {bootstrapped:6.2f} s")
    print(f"rank intervals from the same samples:     {ranked:6.2f} s")
    return tested + bootstrapped + ranked


def spearman_runs(count: int, items: int, rng: np.random.Generator) -> list[UnitRows]:
    """Return runs predicting ``items`` gold values, each measured by Spearman's rho (scipy)."""
    from scipy import stats

    def rho(rows: np.ndarray) -> float:
        return float(stats.spearmanr(rows[:, 0], rows[:, 1]).statistic)

    gold = rng.normal(size=items)
    return [
        RecomputedRows(np.column_stack([gold, gold + rng.normal(0, 1 + 0.02 * i, items)]), rho)
        for i in range(count)
    ]


def meta_figures(label: str, runs: list[UnitRows], splits: int) -> float:
    """Print one meta-evaluation's timing and numbers; return its seconds."""
    start = time.perf_counter()
    found = meta_evaluate(runs, seed=0, splits=splits)
    seconds = time.perf_counter() - start
    print(
        f"meta-evaluation, {splits} half-splits, {label}: {seconds:6.2f} s "
        f"(tau_mean {found.tau_mean:.3f}, tau_p05 {found.tau_p05:.3f}, "
        f"top_stable {found.top_stable:.2f})"
    )
    return seconds


def main() -> None:
    """Print the timings, the cluster count and the peak memory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--meta-only", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    difficulty = rng.beta(2, 3, args.queries)
    runs: list[UnitRows] = [
        mean_rows(np.clip(difficulty + 0.004 * i + rng.normal(0, 0.15, args.queries), 0, 1))
        for i in range(args.runs)
    ]
    print(f"{args.runs} runs x {args.queries:,} queries")
    total = 0.0 if args.meta_only else significance_figures(runs, args.samples)
    summed = meta_figures("means per query", runs, args.splits)
    recomputed = meta_figures(
        "Spearman recomputed", spearman_runs(args.runs, args.queries, rng), args.splits
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak:.0f} MB")
    if not args.meta_only:
        print(
            f"targets: under 60 s {'met' if total < 60 else 'MISSED'} ({total:.1f} s), "
            f"under 1 GB {'met' if peak < 1024 else 'MISSED'}"
        )
    slowest = max(summed, recomputed)
    print(
        f"meta-evaluation targets: each under 20 s {'met' if slowest < 20 else 'MISSED'} "
        f"({slowest:.1f} s), under 1 GB {'met' if peak < 1024 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
