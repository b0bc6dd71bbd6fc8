"""Paired randomization, bootstrap, t-test and Wilcoxon, Holm and clusters against references.

References: the exact sign-flip distribution enumerated here (and scipy's exact
``permutation_test``), scikit-learn's F1 on every enumerated swap, scipy's ``bootstrap``,
``ttest_rel`` and ``wilcoxon``, and hand-worked Holm and cluster cases. Monte Carlo estimates
must lie within four standard errors of the exact value.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from leaderboard.scoring.resampling import (
    RecomputedRows,
    SummedRows,
    bootstrap_values,
    mean_rows,
    percentile_interval,
    randomization_diffs,
    randomization_p,
    swap_masks,
)
from leaderboard.scoring.significance import (
    PairResult,
    adjust,
    clusters,
    compare_pairs,
    holm,
    intervals,
    per_query_p,
)

SAMPLES = 20_000


def within_mc_error(estimate: float, exact: float, samples: int = SAMPLES) -> bool:
    """Return whether a Monte Carlo p-value is within 4 standard errors (plus 1/(N+1))."""
    error = math.sqrt(max(exact * (1 - exact), 1e-4) / samples)
    return abs(estimate - exact) <= 4 * error + 1 / (samples + 1)


def exact_sign_flip_p(a: np.ndarray, b: np.ndarray) -> float:
    """Return P(|mean(s·(a−b))| ≥ |mean(a−b)|) over all 2^n sign flips."""
    d = a - b
    observed = abs(d.mean())
    hits = 0
    flips = list(itertools.product([1, -1], repeat=len(d)))
    for signs in flips:
        if abs((np.array(signs) * d).mean()) >= observed - 1e-12:
            hits += 1
    return hits / len(flips)


@pytest.mark.parametrize("seed", range(6))
def test_randomization_of_means_matches_the_exact_sign_flip_distribution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 11))
    a = rng.random(n)
    b = a - rng.normal(0.05 * seed, 0.2, n)
    exact = exact_sign_flip_p(a, b)
    scipy_exact = stats.permutation_test(
        (a, b),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    ).pvalue
    # scipy's two-sided p doubles the smaller tail, which equals |d*| ≥ |d| for this symmetric
    # distribution.
    assert scipy_exact == pytest.approx(exact, abs=1e-12)
    runs = [mean_rows(a), mean_rows(b)]
    diffs = randomization_diffs(runs, [(0, 1)], seed=seed, samples=SAMPLES)[:, 0]
    p = randomization_p(a.mean() - b.mean(), diffs, tolerance=1e-9)
    # Ours counts the observed table among the N + 1 (p ≥ 1/(N+1)); exact p counts it once in
    # 2^n, so compare within Monte Carlo error.
    assert within_mc_error(p, exact), (p, exact)


def test_randomization_of_accuracy_has_the_binomial_closed_form() -> None:
    # Only items where exactly one run is right move the difference: with n such items and
    # k of them for a, d·U = k − (n − k), and under swapping K ~ Binomial(n, ½).
    rng = np.random.default_rng(1)
    units = 400
    truth = rng.integers(0, 3, units)
    a = np.where(rng.random(units) < 0.75, truth, (truth + 1) % 3)
    b = np.where(rng.random(units) < 0.68, truth, (truth + 2) % 3)
    right_a, right_b = (a == truth).astype(float), (b == truth).astype(float)
    only_a = int(((right_a == 1) & (right_b == 0)).sum())
    only_b = int(((right_a == 0) & (right_b == 1)).sum())
    n = only_a + only_b
    observed = abs(only_a - only_b)
    k = np.arange(n + 1)
    exact = float(stats.binom.pmf(k, n, 0.5)[np.abs(2 * k - n) >= observed].sum())
    runs = [mean_rows(right_a), mean_rows(right_b)]
    diffs = randomization_diffs(runs, [(0, 1)], seed=3, samples=SAMPLES)[:, 0]
    p = randomization_p(right_a.mean() - right_b.mean(), diffs, tolerance=1e-9)
    assert within_mc_error(p, exact), (p, exact)


def macro_f1_rows(truth: np.ndarray, predicted: np.ndarray, labels: int) -> SummedRows:
    """Return one-hot confusion rows whose sums give macro-F1 (vectorized over samples)."""
    rows = np.zeros((len(truth), labels * labels))
    rows[np.arange(len(truth)), truth * labels + predicted] = 1.0

    def finish(sums: np.ndarray) -> np.ndarray:
        matrix = sums.reshape(*sums.shape[:-1], labels, labels)
        tp = np.diagonal(matrix, axis1=-2, axis2=-1)
        gold = matrix.sum(axis=-1)
        pred = matrix.sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(gold + pred > 0, 2 * tp / (gold + pred), 0.0)
        return f1.mean(axis=-1)

    return SummedRows(rows, finish)


def test_randomization_recomputes_f1_on_every_sample_as_scikit_learn() -> None:
    rng = np.random.default_rng(7)
    units, labels = 12, 3
    truth = rng.integers(0, labels, units)
    a = np.where(rng.random(units) < 0.8, truth, rng.integers(0, labels, units))
    b = np.where(rng.random(units) < 0.5, truth, rng.integers(0, labels, units))

    def f1(pred: np.ndarray) -> float:
        return float(
            f1_score(truth, pred, labels=list(range(labels)), average="macro", zero_division=0)
        )

    observed = f1(a) - f1(b)
    hits = 0
    swaps = list(itertools.product([False, True], repeat=units))
    for swap in swaps:
        mask = np.array(swap)
        if abs(f1(np.where(mask, b, a)) - f1(np.where(mask, a, b))) >= abs(observed) - 1e-9:
            hits += 1
    exact = hits / len(swaps)
    runs = [macro_f1_rows(truth, a, labels), macro_f1_rows(truth, b, labels)]
    assert runs[0].value() == pytest.approx(f1(a), abs=1e-12)
    diffs = randomization_diffs(runs, [(0, 1)], seed=11, samples=SAMPLES)[:, 0]
    p = randomization_p(observed, diffs, tolerance=1e-9)
    assert within_mc_error(p, exact), (p, exact)


def test_recomputed_measures_are_resampled_like_summed_ones() -> None:
    # The same mean, once as summed rows and once recomputed: same samples, same numbers.
    rng = np.random.default_rng(2)
    a, b = rng.random(30), rng.random(30)
    summed = [mean_rows(a), mean_rows(b)]
    recomputed = [
        RecomputedRows(a.reshape(-1, 1), lambda rows: float(rows[:, 0].mean())),
        RecomputedRows(b.reshape(-1, 1), lambda rows: float(rows[:, 0].mean())),
    ]
    d1 = randomization_diffs(summed, [(0, 1)], seed=5, samples=600)
    d2 = randomization_diffs(recomputed, [(0, 1)], seed=5, samples=600)
    assert np.allclose(d1, d2, atol=1e-12)
    b1 = bootstrap_values(summed, seed=5, samples=600)
    b2 = bootstrap_values(recomputed, seed=5, samples=600)
    assert np.allclose(b1, b2, atol=1e-12)


def test_a_summed_run_paired_with_a_recomputed_one_is_recomputed_by_its_own_rule() -> None:
    # The summed run's sums are deliberately useless (NaN): on samples mixing its rows with a
    # recomputed run's, only its ``recompute`` may be used, on the mixed rows.
    rng = np.random.default_rng(6)
    a, b = rng.random(40), rng.random(40) + 0.1

    def median(rows: np.ndarray) -> float:
        return float(np.median(rows[:, 0]))

    summed = SummedRows(a.reshape(-1, 1), lambda s: np.full(s.shape[:-1], np.nan), recompute=median)
    recomputed = RecomputedRows(b.reshape(-1, 1), median)
    diffs = randomization_diffs([summed, recomputed], [(0, 1)], seed=2, samples=300)[:, 0]
    expected = [
        float(np.median(np.where(swap, b, a)) - np.median(np.where(swap, a, b)))
        for mask in swap_masks(2, 300, 40)
        for swap in mask
    ]
    assert np.allclose(diffs, expected, rtol=0, atol=1e-15)
    # Two summed runs still use their sums (here NaN), never ``recompute``.
    both = randomization_diffs([summed, summed], [(0, 1)], seed=2, samples=10)
    assert np.isnan(both).all()


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others() -> None:
    rng = np.random.default_rng(4)
    runs = [mean_rows(rng.random(50)) for _ in range(3)]
    pairs = [(0, 1), (0, 2), (1, 2)]
    first = randomization_diffs(runs, pairs, seed=9, samples=1200)
    assert np.array_equal(first, randomization_diffs(runs, pairs, seed=9, samples=1200))
    assert not np.array_equal(first, randomization_diffs(runs, pairs, seed=10, samples=1200))
    # A pair's samples do not depend on which other pairs are tested with it.
    alone = randomization_diffs(runs, [(1, 2)], seed=9, samples=1200)
    assert np.array_equal(alone[:, 0], first[:, 2])


def test_bootstrap_interval_agrees_with_scipy() -> None:
    rng = np.random.default_rng(8)
    values = rng.gamma(2.0, 0.2, 300)
    ours = percentile_interval(bootstrap_values([mean_rows(values)], seed=1, samples=SAMPLES)[:, 0])
    theirs = stats.bootstrap(
        (values,), np.mean, n_resamples=SAMPLES, method="percentile", random_state=5
    ).confidence_interval
    width = theirs.high - theirs.low
    assert ours[0] == pytest.approx(theirs.low, abs=0.03 * width)
    assert ours[1] == pytest.approx(theirs.high, abs=0.03 * width)
    assert intervals([mean_rows(values)], seed=1, samples=SAMPLES)[0] == ours


def test_paired_bootstrap_p_of_a_clear_and_of_no_difference() -> None:
    rng = np.random.default_rng(12)
    a = rng.random(200)
    runs = [mean_rows(a), mean_rows(a - 0.2), mean_rows(a)]
    results = compare_pairs(
        runs, [(0, 1), (0, 2)], method="bootstrap", seed=0, samples=2000, tolerance=1e-9
    )
    assert results[0].p == pytest.approx(1 / 2001)
    # Identical runs: every resample differs by 0 = δ, so every sample counts.
    assert results[1].p == 1.0


@pytest.mark.parametrize("method", ["t-test", "wilcoxon"])
def test_per_query_tests_are_scipys_on_differences_rounded_to_12_digits(method: str) -> None:
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a - rng.normal(0.03, 0.1, 40)
    noisy = a + 1e-15  # float noise below 12 significant digits changes nothing
    differences = np.array([float(np.format_float_scientific(d, precision=11)) for d in a - b])
    zeros = np.zeros_like(differences)
    expected = (
        stats.ttest_rel(differences, zeros) if method == "t-test" else stats.wilcoxon(differences)
    ).pvalue
    assert per_query_p(method, a, b) == pytest.approx(expected, rel=1e-12)
    # Ranks do not move; the t-test's mean moves by the noise alone.
    exact = per_query_p(method, a, b) if method == "wilcoxon" else pytest.approx(expected)
    assert per_query_p(method, noisy, b) == exact
    assert per_query_p(method, a, a.copy()) == 1.0


#: Per-query values whose differences are, in decimal, 0.2 six times (two of them negative):
#: in floating point they come out as six different numbers.
TIED_A = np.array([0.7, 0.1, 1.0, 0.3, 0.9, 0.4, 0.75, 0.8, 0.65, 0.95, 0.85, 0.6])
TIED_B = np.array([0.5, 0.3, 0.8, 0.1, 0.7, 0.6, 0.5, 0.45, 0.3, 0.5, 0.35, 0.05])
TIED_DIFFERENCES = [0.2, -0.2, 0.2, 0.2, 0.2, -0.2, 0.25, 0.35, 0.35, 0.45, 0.5, 0.55]


def test_equal_differences_tie_in_the_wilcoxon_test_whatever_the_float_noise() -> None:
    assert len(set(TIED_A - TIED_B)) > len(set(TIED_DIFFERENCES))
    tied = stats.wilcoxon(TIED_DIFFERENCES).pvalue
    assert stats.wilcoxon(TIED_A - TIED_B).pvalue != pytest.approx(tied)  # noise breaks ties
    assert per_query_p("wilcoxon", TIED_A, TIED_B) == pytest.approx(tied, rel=1e-12)
    # The same differences at another scale (a table in percent) tie the same way.
    assert per_query_p("wilcoxon", TIED_A * 100, TIED_B * 100) == pytest.approx(tied, rel=1e-12)
    expected = stats.ttest_rel(TIED_DIFFERENCES, [0.0] * len(TIED_DIFFERENCES)).pvalue
    assert per_query_p("t-test", TIED_A, TIED_B) == pytest.approx(expected, rel=1e-12)


def test_a_difference_below_the_zero_threshold_is_no_difference() -> None:
    a = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.2])
    b = a - np.array([0.1, 0.1, 0.2, 0.3, 0.1, 0.0])
    b[-1] = a[-1] - 1e-14  # float noise on a question both runs answer alike
    expected = stats.wilcoxon([0.1, 0.1, 0.2, 0.3, 0.1, 0.0]).pvalue
    assert per_query_p("wilcoxon", a, b, zero=1e-12) == pytest.approx(expected, rel=1e-12)
    assert per_query_p("wilcoxon", a, a + 1e-13, zero=1e-12) == 1.0


def test_differences_are_in_the_tables_scale() -> None:
    a, b = np.array([0.8, 0.6, 0.9]), np.array([0.7, 0.65, 0.5])
    for method in ("t-test", "randomization"):
        (result,) = compare_pairs(
            [mean_rows(a), mean_rows(b)],
            [(0, 1)],
            method=method,
            seed=0,
            samples=50,
            tolerance=1e-9,
            per_query=[a, b],
            scale=100.0,
        )
        assert result.diff == pytest.approx(100 * a.mean() - 100 * b.mean(), rel=1e-12)
        assert result.diff == pytest.approx(15.0, rel=1e-12)


def test_holm_by_hand() -> None:
    # Sorted 0.01, 0.02, 0.03, 0.5 with m = 4: 0.04, 0.06, 0.06 (monotone), 0.5.
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []


def test_clusters_follow_the_wmt_rule() -> None:
    # Runs 0..3 in table order. 1 is not worse than 0 significantly: joins. 2 is worse than
    # both 0 and 1: new cluster. 3 is worse than 2 but not significantly: joins 2.
    significant = {(0, 1): False, (0, 2): True, (1, 2): True, (0, 3): True, (1, 3): True,
                   (2, 3): False}  # fmt: skip
    results = [
        PairResult(a, b, 0.1, 0.0 if sig else 0.5, 0.0 if sig else 0.5)
        for (a, b), sig in significant.items()
    ]
    assert clusters([0, 1, 2, 3], results, 0.05) == [[0, 1], [2, 3]]
    # A run significantly worse than only some of the current cluster joins it.
    results[2] = PairResult(1, 2, 0.1, 0.5, 0.5)
    assert clusters([0, 1, 2, 3], results, 0.05) == [[0, 1, 2, 3]]
    # Lower-is-better: a positive a − b means a is worse, never "significantly better".
    assert clusters([0, 1, 2, 3], results, 0.05, lower_is_better=True) == [[0, 1, 2, 3]]


def test_adjust_keeps_raw_p_values_and_adds_holm() -> None:
    results = [PairResult(0, 1, 0.1, 0.01), PairResult(0, 2, 0.2, 0.04)]
    holmed = adjust(results, "holm")
    assert [r.p for r in holmed] == [0.01, 0.04]
    assert [r.p_adjusted for r in holmed] == pytest.approx([0.02, 0.04])
    assert [r.p_adjusted for r in adjust(results, "none")] == [0.01, 0.04]


def test_large_item_sets_take_fewer_samples_per_chunk_not_more_memory() -> None:
    from leaderboard.scoring import resampling

    # 100,000 items: 40 samples per chunk keep the sample matrix at 4,000,000 entries.
    masks = list(resampling.swap_masks(0, 100, 100_000))
    assert [m.shape for m in masks] == [(40, 100_000), (40, 100_000), (20, 100_000)]
    # Samples do not depend on the data's own random stream: a run drawn from
    # default_rng(seed) is not the swap mask of that seed.
    data = np.random.default_rng(0).random(100_000) < 0.5
    assert not np.array_equal(masks[0][0], data)
