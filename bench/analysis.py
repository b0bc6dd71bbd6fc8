"""Time the significance analysis of a large table: 50 ranked runs on 2,000 queries.

Each run's per-query values are a shared difficulty plus the run's own skill and noise. All
1,225 pairs are tested with 10,000 paired randomization samples (Holm-adjusted, clustered),
then each run's 95 % bootstrap interval is drawn from 10,000 resamples. Target: under 60 s
of wall time and 1 GB peak memory on this machine.

    .venv/bin/python -m bench.analysis [--runs 50] [--queries 2000] [--samples 10000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from leaderboard.scoring.resampling import mean_rows
from leaderboard.scoring.significance import adjust, clusters, compare_pairs, intervals


def main() -> None:
    """Print the timings, the cluster count and the peak memory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    difficulty = rng.beta(2, 3, args.queries)
    runs = [
        mean_rows(np.clip(difficulty + 0.004 * i + rng.normal(0, 0.15, args.queries), 0, 1))
        for i in range(args.runs)
    ]
    order = sorted(range(args.runs), key=lambda i: -runs[i].value())
    pairs = [(order[a], order[b]) for a in range(args.runs) for b in range(a + 1, args.runs)]
    start = time.perf_counter()
    results = compare_pairs(
        runs, pairs, method="randomization", seed=0, samples=args.samples, tolerance=1e-9
    )
    results = adjust(results, "holm")
    groups = clusters(order, results, 0.05)
    tested = time.perf_counter() - start
    start = time.perf_counter()
    intervals(runs, seed=0, samples=args.samples)
    bootstrapped = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = tested + bootstrapped
    print(
        f"{args.runs} runs x {args.queries:,} queries, {len(pairs):,} pairs, {args.samples:,} samples"
    )
    print(f"randomization, all pairs, Holm, clusters: {tested:6.2f} s ({len(groups)} clusters)")
    print(f"bootstrap intervals of every run:         {bootstrapped:6.2f} s")
    print(f"peak RSS: {peak:.0f} MB")
    print(
        f"targets: under 60 s {'met' if total < 60 else 'MISSED'} ({total:.1f} s), "
        f"under 1 GB {'met' if peak < 1024 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
