"""Rank intervals against a direct loop over samples and runs, and their expected properties."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.scoring.rank_intervals import (
    order_statistic_positions,
    rank_intervals,
    sample_ranks,
)
from leaderboard.scoring.resampling import RecomputedRows, bootstrap_values, mean_rows


def better(a: float, b: float, lower_is_better: bool) -> bool:
    """Return whether a is strictly better than b; an undefined value is worse than any other."""
    if np.isnan(a):
        return False
    if np.isnan(b):
        return True
    return a < b if lower_is_better else a > b


def loop_intervals(
    values: np.ndarray, lower_is_better: bool, field: list[bool], low_per_mille: int = 25
) -> list[tuple[int, int]]:
    """Rank every sample run by run, then take the ⌈.025·B⌉-th and ⌈.975·B⌉-th smallest ranks."""
    samples, runs = values.shape
    out = []
    for j in range(runs):
        ranks = sorted(
            1
            + sum(
                1
                for i in range(runs)
                if field[i] and better(values[b, i], values[b, j], lower_is_better)
            )
            for b in range(samples)
        )
        low = -(-samples * low_per_mille // 1000)
        high = -(-samples * (1000 - low_per_mille) // 1000)
        out.append((ranks[low - 1], ranks[high - 1]))
    return out


def pearson(rows: np.ndarray) -> float:
    """Return the Pearson correlation of a run's two columns (NaN on a constant resample)."""
    x, y = rows[:, 0], rows[:, 1]
    if x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


@pytest.mark.parametrize("lower_is_better", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_intervals_agree_with_a_loop_over_samples_and_runs(
    seed: int, lower_is_better: bool
) -> None:
    rng = np.random.default_rng(seed)
    units = 40
    # Means over units (rounded to two decimals so that samples tie) and two close runs.
    runs = [mean_rows(np.round(rng.random(units) + shift, 2)) for shift in (0.0, 0.05, 0.1, 0.1)]
    values = bootstrap_values(runs, seed=seed, samples=401)
    field = [True, True, False, True]
    ours = rank_intervals(values, lower_is_better=lower_is_better, field=field)
    assert ours == loop_intervals(values, lower_is_better, field)
    # Other levels take their own order statistics.
    assert rank_intervals(values, lower_is_better=lower_is_better, field=field, level=0.8) == (
        loop_intervals(values, lower_is_better, field, low_per_mille=100)
    )


def test_a_corpus_measure_undefined_on_some_resamples_ranks_below_every_defined_value() -> None:
    rng = np.random.default_rng(11)
    units = 8
    x = rng.random(units)
    # A run predicting almost a constant: many resamples draw only its constant rows.
    constant = np.column_stack([np.r_[np.zeros(units - 1), 1.0], x])
    runs = [
        RecomputedRows(np.column_stack([x + rng.normal(0, s, units), x]), pearson)
        for s in (0.05, 0.3)
    ] + [RecomputedRows(constant, pearson)]
    values = bootstrap_values(runs, seed=3, samples=300)
    assert np.isnan(values[:, 2]).any() and not np.isnan(values[:, 2]).all()
    assert rank_intervals(values) == loop_intervals(values, False, [True] * 3)
    ranks = sample_ranks(values)
    undefined = np.isnan(values[:, 2])
    defined_others = (~np.isnan(values[undefined][:, :2])).sum(axis=1)
    assert (ranks[undefined, 2] == 1 + defined_others).all()


def test_nan_ties_with_nan_and_as_if_runs_displace_no_one() -> None:
    values = np.array([[1.0, np.nan, 1.0, 0.5], [np.nan, np.nan, 2.0, 3.0]])
    assert sample_ranks(values).tolist() == [[1, 4, 1, 3], [3, 3, 2, 1]]
    assert sample_ranks(values, lower_is_better=True).tolist() == [[2, 4, 2, 1], [3, 3, 1, 2]]
    # Run 2 outside the field: ranked as if, and no run of the field counts it.
    assert sample_ranks(values, field=[True, True, False, True]).tolist() == [
        [1, 3, 1, 2],
        [2, 2, 2, 1],
    ]


def test_a_dominant_run_gets_one_one_and_identical_runs_identical_intervals() -> None:
    rng = np.random.default_rng(5)
    per_unit = rng.random(200)
    runs = [
        mean_rows(per_unit + 1.0),  # better than every other run on every unit
        mean_rows(per_unit),
        mean_rows(per_unit.copy()),
        mean_rows(rng.random(200)),
    ]
    found = rank_intervals(bootstrap_values(runs, seed=0, samples=2000))
    assert found[0] == (1, 1)
    assert found[1] == found[2]
    assert found[1][0] >= 2 and found[3][1] <= 4


def test_the_interval_contains_the_observed_rank_of_separated_and_of_close_runs() -> None:
    rng = np.random.default_rng(9)
    units = 300
    runs = [mean_rows(rng.normal(m, 1.0, units)) for m in (0.0, 0.02, 0.04, 0.5, 1.0, 1.01)]
    observed = np.array([[run.value() for run in runs]])
    ranks = sample_ranks(observed)[0]
    found = rank_intervals(bootstrap_values(runs, seed=2, samples=2000))
    for rank, (low, high) in zip(ranks, found, strict=True):
        assert low <= rank <= high
    # Far apart runs are sure of their place; close ones share a span.
    assert found[3] == (3, 3)
    assert found[0][1] - found[0][0] >= 1 and found[4][1] - found[4][0] >= 1


def test_the_same_seed_gives_the_same_intervals() -> None:
    rng = np.random.default_rng(1)
    runs = [mean_rows(rng.normal(m, 1.0, 60)) for m in (0.0, 0.3, 0.6, 0.9)]
    first = rank_intervals(bootstrap_values(runs, seed=4, samples=1000))
    assert first == rank_intervals(bootstrap_values(runs, seed=4, samples=1000))
    # The seed acts through the resamples alone: another one ranks other samples.
    ranks = sample_ranks(bootstrap_values(runs, seed=4, samples=1000))
    assert not np.array_equal(ranks, sample_ranks(bootstrap_values(runs, seed=5, samples=1000)))
    others = {tuple(rank_intervals(bootstrap_values(runs, seed=s, samples=200))) for s in range(8)}
    assert len(others) > 1


def test_order_statistics_are_exact() -> None:
    # 0.025 · 10,000 is 250 exactly, whatever floats make of 0.025.
    assert order_statistic_positions(10_000) == (250, 9_750)
    assert order_statistic_positions(2_001) == (51, 1_951)
    assert order_statistic_positions(1) == (1, 1)
    with pytest.raises(ValueError, match="at least one sample"):
        order_statistic_positions(0)
    with pytest.raises(ValueError, match="field has 2 entries for 3 runs"):
        sample_ranks(np.zeros((4, 3)), field=[True, False])
