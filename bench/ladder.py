"""Time a Ladder decision on 10,000 units and print the boosting attack against `best` and `ladder`.

Timed, in process, best of ``--repeat``: ``mean_step`` (a mean measure: paired sd threshold and
rounding) on 10,000 per-unit values, ``bootstrap_step`` (1,000 paired bootstrap samples) of a
corpus-level F1 recomputed on each sample through a callable, and ``rows_step``, the same
decision on the summed rows a family's ``unit_rows`` gives (what an upload to a Ladder board
runs: a chunk of samples is one matrix product).
Target (issue 33): a decision adds under 20 ms to an upload of 10,000 units.

The attack (Blum & Hardt 2015) on a 2,000-item binary task of random labels, split half public
by the SHA-256 rule: ``--runs`` random submissions, then a majority vote of those the board
showed to be lucky; printed, averaged over ``--trials``: each board's displayed score, the
private accuracy of the run it shows, their gap, and the gap in units of the noise of one run's
public-minus-private accuracy. Every run's true accuracy is 0.5.

    .venv/bin/python -m bench.ladder [--units 10000] [--repeat 20] [--trials 20] [--runs 200]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from bench._common import median
from leaderboard.scoring.ladder import bootstrap_step, mean_step, rows_step
from leaderboard.scoring.resampling import SummedRows, bootstrap_indices
from tests.helpers.boosting import boosting_attack


def timed(label: str, repeat: int, call: Callable[[], object]) -> float:
    """Run ``call`` ``repeat`` times; print the best and median wall times in ms, return the best."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    best = min(times) * 1000
    print(f"{label:<52} {best:8.2f} ms best {median(times) * 1000:8.2f} ms median")
    return best


def f1_measure(
    predicted: NDArray[np.int64], gold: NDArray[np.int64]
) -> Callable[[NDArray[np.int64]], float]:
    """Return the positive-class F1 of ``predicted`` on the units an index array draws."""
    hit = ((predicted == 1) & (gold == 1)).astype(np.float64)
    said = (predicted == 1).astype(np.float64)
    true = (gold == 1).astype(np.float64)

    def measure(idx: NDArray[np.int64]) -> float:
        tp = hit[idx].sum()
        return float(2 * tp / (said[idx].sum() + true[idx].sum()))

    return measure


def decisions(units: int, repeat: int) -> None:
    """Print the time of one mean and one bootstrap decision on ``units`` units."""
    rng = np.random.default_rng(0)
    best = rng.random(units)
    new = np.clip(best + rng.normal(0.01, 0.1, units), 0, 1)
    mean = timed(
        f"mean_step, {units:,} units", repeat, lambda: mean_step(float(best.mean()), best, new)
    )
    gold = rng.integers(0, 2, units)
    weak = np.where(rng.random(units) < 0.7, gold, 1 - gold)
    strong = np.where(rng.random(units) < 0.72, gold, 1 - gold)
    a, b = f1_measure(weak, gold), f1_measure(strong, gold)
    boot = timed(
        f"bootstrap_step (1,000 samples, F1), {units:,} units",
        max(1, repeat // 5),
        lambda: bootstrap_step(0.5, a, b, units, seed=1, decimals=4),
    )
    timed(
        "  of which drawing the 1,000 samples' indices",
        max(1, repeat // 5),
        lambda: list(bootstrap_indices(1, 1_000, units)),
    )
    rows_a, rows_b = f1_rows(weak, gold), f1_rows(strong, gold)
    rows = timed(
        f"rows_step (1,000 samples, F1 from summed rows), {units:,} units",
        max(1, repeat // 5),
        lambda: rows_step(0.5, rows_a, rows_b, seed=1, decimals=4),
    )
    print(
        f"target < 20 ms: mean {mean / 20:.2f} × target, bootstrap {boot / 20:.2f} × target, "
        f"rows (what uploads use) {rows / 20:.2f} × target"
    )


def f1_rows(predicted: NDArray[np.int64], gold: NDArray[np.int64]) -> SummedRows:
    """Return the positive-class F1 as summed rows (tp, predicted, true per unit)."""
    rows = np.column_stack(
        [
            ((predicted == 1) & (gold == 1)).astype(np.float64),
            (predicted == 1).astype(np.float64),
            (gold == 1).astype(np.float64),
        ]
    )
    return SummedRows(rows, lambda s: 2 * s[..., 0] / (s[..., 1] + s[..., 2]))


def attack(trials: int, runs: int) -> None:
    """Print each board's displayed score beside the shown run's private accuracy."""
    rng = np.random.default_rng(2015)
    start = time.perf_counter()
    outcomes = [boosting_attack(rng, runs=runs) for _ in range(trials)]
    seconds = time.perf_counter() - start
    public = float(np.mean([o.public_units for o in outcomes]))
    private = float(np.mean([o.private_units for o in outcomes]))
    noise = 0.5 * math.sqrt(1 / public + 1 / private)
    print(
        f"boosting attack: 2,000 items ({public:.0f} public, {private:.0f} private), "
        f"{runs} random runs + a majority vote, {trials} trials ({seconds:.1f} s)"
    )
    print(f"{'board':<8} {'displayed':>10} {'private':>10} {'gap':>8} {'gap / noise':>12}")
    for board in ("best", "ladder"):
        shown = float(np.mean([getattr(o, f"{board}_displayed") for o in outcomes]))
        truth = float(np.mean([getattr(o, f"{board}_private") for o in outcomes]))
        gap = shown - truth
        print(f"{board:<8} {shown:10.4f} {truth:10.4f} {gap:8.4f} {gap / noise:12.2f}")
    print(f"noise (sd of one run's public − private accuracy): {noise:.4f}")


def main() -> None:
    """Print the decision times and the attack's figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    decisions(args.units, args.repeat)
    attack(args.trials, args.runs)


if __name__ == "__main__":
    main()
