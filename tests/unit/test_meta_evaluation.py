"""Meta-evaluation: seeded half-splits, each half's measure, Kendall's tau-b and the top's stability.

Checked against scipy on generated data: the halves' values are the measure recomputed here on
each half's units (means, a root of a mean, Pearson from sums, Spearman recomputed), tau-b is
``scipy.stats.kendalltau`` on them, and data with a known structure gives what it must (clearly
separated runs: tau near 1, the same top; runs of pure noise: tau near 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from leaderboard.scoring.meta_evaluation import (
    goodness,
    half_masks,
    half_values,
    kendall_tau_b,
    meta_evaluate,
    same_top,
)
from leaderboard.scoring.pearson_sums import pearson_from_sums, pearson_rows
from leaderboard.scoring.resampling import (
    RecomputedRows,
    SummedRows,
    UnitRows,
    mean_rows,
    sample_generator,
)
from leaderboard.services.results.meta_evaluation import sentence, separated


def masks(seed: int, splits: int, units: int) -> np.ndarray:
    """Return all the splits' masks of a seed in one array."""
    return np.concatenate(list(half_masks(seed, splits, units)))


def noise_runs(runs: int, units: int, seed: int = 0, step: float = 0.0) -> list[UnitRows]:
    """Return runs whose per-unit values are a shared difficulty, ``step`` × i and noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 3, units)
    return [mean_rows(difficulty + step * i + rng.normal(0, 0.15, units)) for i in range(runs)]


def test_each_split_is_a_random_half_drawn_from_its_own_stream() -> None:
    drawn = masks(5, 300, 41)
    # Odd unit counts: half A holds the smaller half, without repeats.
    assert drawn.shape == (300, 41) and (drawn.sum(axis=1) == 20).all()
    # Every unit is in half A about half of the time.
    assert np.abs(drawn.mean(axis=0) - 20 / 41).max() < 0.12
    assert len({row.tobytes() for row in drawn}) == 300
    # The same seed, the same splits; another seed, others.
    assert np.array_equal(masks(5, 300, 41), drawn)
    assert not np.array_equal(masks(6, 300, 41), drawn)
    # Apart from the randomization (kind 0) and bootstrap (kind 1) streams of the same seed:
    # the halves those streams' numbers would have drawn are other halves.
    for kind in (0, 1):
        keys = sample_generator(5, kind, 0).random((300, 41))
        other = np.zeros_like(drawn)
        np.put_along_axis(other, keys.argsort(axis=1)[:, :20], True, axis=1)
        assert (other != drawn).any(axis=1).all()


def test_large_unit_counts_take_fewer_splits_per_chunk() -> None:
    chunks = list(half_masks(0, 40, 200_000))
    assert len(chunks) == 2 and [len(c) for c in chunks] == [20, 20]
    assert all((c.sum(axis=1) == 100_000).all() for c in chunks)


def test_summed_runs_take_each_halfs_own_measure() -> None:
    rng = np.random.default_rng(1)
    units = 51
    truth = rng.normal(size=units)
    predicted = [truth + rng.normal(0, s, units) for s in (0.3, 0.6, 1.0)]
    errors = (predicted[0] - truth) ** 2
    runs: list[UnitRows] = [
        mean_rows(predicted[1]),
        # A finish that divides by the set's n: on a half it must divide by the half's.
        SummedRows(errors.reshape(-1, 1), lambda s: np.sqrt(s[..., 0] / units)),
        # A ratio of sums: Pearson's r from [1, u, v, u², v², uv].
        SummedRows(pearson_rows(predicted[2], truth, float(truth.mean())), pearson_from_sums),
        # Recomputed on each half's rows.
        RecomputedRows(
            np.column_stack([truth, predicted[2]]),
            lambda r: float(stats.spearmanr(r[:, 0], r[:, 1]).statistic),
        ),
    ]
    a, b = half_values(runs, 3, 25)
    for split, inside in enumerate(masks(3, 25, units)):
        for values, half in ((a, inside), (b, ~inside)):
            expected = [
                np.mean(predicted[1][half]),
                np.sqrt(np.mean(errors[half])),
                stats.pearsonr(predicted[2][half], truth[half]).statistic,
                stats.spearmanr(truth[half], predicted[2][half]).statistic,
            ]
            assert values[split] == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_tau_b_is_scipys_with_ties() -> None:
    rng = np.random.default_rng(2)
    # Few distinct values: many ties on one side, the other, or both.
    x = rng.integers(0, 4, size=(200, 9)).astype(np.float64)
    y = np.where(rng.random((200, 9)) < 0.6, x, rng.integers(0, 4, size=(200, 9)))
    ours = kendall_tau_b(x, y)
    for row, tau in enumerate(ours):
        if len(set(x[row])) == 1 or len(set(y[row])) == 1:
            assert tau == 0.0  # a half that ties every run orders none of them
        else:
            expected = stats.kendalltau(x[row], y[row], variant="b").statistic
            assert tau == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert np.isfinite(ours).all() and (np.abs(ours) <= 1).all()


def test_clearly_separated_runs_agree_on_every_half() -> None:
    runs = noise_runs(12, 2000, step=0.05)
    found = meta_evaluate(runs, seed=0, splits=200)
    assert found.splits == 200
    assert found.tau_mean > 0.97 and found.tau_p05 > 0.9
    assert found.top_stable == 1.0
    # The taus are scipy's on the halves' values.
    a, b = half_values(runs, 0, 200)
    expected = [stats.kendalltau(a[s], b[s]).statistic for s in range(200)]
    assert found.taus == pytest.approx(expected, rel=1e-12)
    assert found.tau_p05 == pytest.approx(np.percentile(expected, 5))


def test_runs_of_pure_noise_agree_on_nothing() -> None:
    # Given one set, the halves' deviations are opposite (they are complements): tau is near 0
    # over sets of noise, each set's within the spread of its runs' set-wide values.
    found = [meta_evaluate(noise_runs(50, 2000, seed=s), seed=0, splits=200) for s in range(4)]
    assert all(abs(f.tau_mean) < 0.15 for f in found)
    assert abs(np.mean([f.tau_mean for f in found])) < 0.08
    assert all(f.tau_p05 < 0 for f in found)
    assert all(f.top_stable < 0.05 for f in found)


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others() -> None:
    runs = noise_runs(8, 300, step=0.01)
    first = meta_evaluate(runs, seed=11, splits=50)
    again = meta_evaluate(runs, seed=11, splits=50)
    assert np.array_equal(first.taus, again.taus)
    assert np.array_equal(first.top_agrees, again.top_agrees)
    assert not np.array_equal(meta_evaluate(runs, seed=12, splits=50).taus, first.taus)


def test_lower_is_better_changes_the_top_not_tau() -> None:
    runs = noise_runs(6, 400, step=0.02)
    higher = meta_evaluate(runs, seed=0, splits=100)
    lower = meta_evaluate(runs, seed=0, splits=100, lower_is_better=True)
    assert np.array_equal(higher.taus, lower.taus)
    a, b = half_values(runs, 0, 100)
    assert np.array_equal(lower.top_agrees, a.argmin(axis=1) == b.argmin(axis=1))
    assert np.array_equal(higher.top_agrees, a.argmax(axis=1) == b.argmax(axis=1))


def test_ties_for_first_agree_only_when_the_same_runs_tie() -> None:
    x = np.array([[3.0, 3.0, 1.0], [3.0, 3.0, 1.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
    y = np.array([[3.0, 3.0, 2.0], [3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
    assert same_top(x, y).tolist() == [True, False, True, True]
    # Identical runs tie on every half: the top agrees and tau counts their pairs as ties.
    twins = [mean_rows(np.arange(10.0)), mean_rows(np.arange(10.0)), mean_rows(np.ones(10))]
    found = meta_evaluate(twins, seed=0, splits=20)
    assert found.top_stable == 1.0 and (found.taus == 1.0).all()


def test_float_noise_ties_and_undefined_values_rank_last() -> None:
    values = np.array([[0.1 + 0.2, 0.3, np.nan, 0.5]])
    good = goodness(values, lower_is_better=False)
    assert good[0, 0] == good[0, 1] and good[0, 2] == -np.inf
    assert goodness(values, lower_is_better=True)[0, 2] == -np.inf
    assert goodness(values, lower_is_better=True)[0, 3] == -0.5


def test_refusals() -> None:
    with pytest.raises(ValueError, match="two runs"):
        meta_evaluate(noise_runs(1, 10), seed=0, splits=5)
    with pytest.raises(ValueError, match="one split"):
        meta_evaluate(noise_runs(2, 10), seed=0, splits=0)
    with pytest.raises(ValueError, match="two units"):
        meta_evaluate(noise_runs(2, 1), seed=0, splits=5)


def test_separated_pairs_follow_the_reports_alpha_and_rank_order() -> None:
    def pair(a: str, b: str, p: float) -> dict[str, object]:
        return {"a": a, "b": b, "p": p, "p_adjusted": p}

    report = {
        "alpha": 0.05,
        "runs": ["A", "B", "C", "D"],
        "pairs": [
            pair("A", "B", 0.01),
            pair("A", "C", 0.001),
            pair("A", "D", 0.001),
            pair("B", "C", 0.2),
            pair("B", "D", 0.05),  # not below alpha
            pair("C", "D", 0.04),
        ],
    }
    assert separated(report) == (4 / 6, 2 / 3)
    assert separated(None) == (None, None)


def test_the_sentence() -> None:
    numbers = {"pairs_significant": 0.4142, "tau_mean": 0.8171}
    assert sentence(numbers) == (
        "this test set separates 41 % of the pairs; halves of it agree on the order with τ = 0.82"
    )
    assert sentence({"pairs_significant": None, "tau_mean": -0.051}) == (
        "halves of this test set agree on the order with τ = −0.05 "
        "(no analysis yet says which pairs of runs it separates)"
    )
