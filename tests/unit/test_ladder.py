"""The Ladder against Blum & Hardt 2015's Algorithm 2, the boosting attack, and the bootstrap step."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from leaderboard.scoring.ladder import (
    bootstrap_ladder,
    bootstrap_step,
    ladder,
    mean_step,
    pattern_bootstrap,
    rows_step,
)
from leaderboard.scoring.resampling import SummedRows
from tests.helpers.boosting import boosting_attack


def algorithm_2(losses: list[list[float]]) -> list[tuple[bool, float]]:
    """Return (new best?, released R_t) per round: the paper's parameter-free Ladder, loss form.

    R_0 = ∞; round t takes the loss vector l_t, s = std(l_t − l_best) (sample), and if
    R_S(f_t) < R_{t-1} − s/√n then R_t = [R_S(f_t)]_{1/n} and f_t becomes the best. In exact
    rational arithmetic (s/√n < R − risk as s²/n < (R − risk)² with R − risk > 0), so that
    ties are ties.
    """
    released: Fraction | None = None  # None: R_0 = ∞
    best: list[Fraction] | None = None
    out = []
    for values in losses:
        loss = [Fraction(x) for x in values]
        n = len(loss)
        risk = sum(loss, Fraction(0)) / n
        if released is None or best is None:
            better = True
        else:
            d = [a - b for a, b in zip(loss, best, strict=True)]
            mean = sum(d, Fraction(0)) / n
            variance = sum(((x - mean) ** 2 for x in d), Fraction(0)) / (n - 1)
            gap = released - risk
            better = gap > 0 and variance / n < gap**2
        if better:
            released = Fraction(round(risk * n), n)
            best = loss
        assert released is not None
        out.append((better, float(released)))
    return out


def random_sequence(rng: np.random.Generator, kind: str) -> list[np.ndarray]:
    """Return a team's runs: per-unit accuracies drifting up and down, 0/1 or graded."""
    n = int(rng.choice([2, 3, 4, 5, 8, 20, 60, 250]))
    runs = int(rng.integers(1, 40))
    quality = rng.uniform(0.2, 0.8)
    out = []
    for _ in range(runs):
        quality = float(np.clip(quality + rng.normal(0, 0.05), 0.01, 0.99))
        if kind == "binary":
            out.append((rng.random(n) < quality).astype(np.float64))
        else:
            out.append(np.clip(rng.normal(quality, 0.2, n), 0, 1))
    return out


@pytest.mark.parametrize("kind", ["binary", "graded"])
@pytest.mark.parametrize("seed", range(30))
def test_the_ladder_is_algorithm_2_on_random_sequences(kind: str, seed: int) -> None:
    rng = np.random.default_rng([seed, kind == "binary"])
    accuracies = random_sequence(rng, kind)
    expected = algorithm_2([[1 - a for a in run.tolist()] for run in accuracies])
    decisions = ladder(accuracies)
    assert [d.replaced for d in decisions] == [e[0] for e in expected]
    for decision, (_, loss) in zip(decisions, expected, strict=True):
        assert decision.released == pytest.approx(1 - loss, abs=1e-12)


def test_the_sequences_do_both_replace_and_refuse() -> None:
    # Without this, a comparison on sequences that always replace would prove little.
    counts = {True: 0, False: 0}
    for seed in range(30):
        for d in ladder(random_sequence(np.random.default_rng([seed, 1]), "binary")):
            counts[d.replaced] += 1
    assert min(counts.values()) > 50


def test_the_first_run_sets_the_released_value_rounded_to_scale_over_n() -> None:
    first = mean_step(None, None, np.array([0.1, 0.2, 0.35]))
    assert (first.replaced, first.threshold, first.p_value) == (True, None, None)
    assert first.released == pytest.approx(1 / 3)
    assert first.value == pytest.approx(0.65 / 3)
    assert "first run" in first.reason
    percent = mean_step(None, None, np.array([10.0, 20.0, 35.0]), scale=100)
    assert percent.released == pytest.approx(100 / 3)


def test_the_threshold_is_strict() -> None:
    best = np.zeros(4)
    # sd([1, 0, 0, 0]) = 0.5 exactly: the threshold is 0 + 0.5 / 2 = 0.25, the mean 0.25.
    at = mean_step(0.0, best, np.array([1.0, 0, 0, 0]))
    assert (at.replaced, at.released, at.threshold) == (False, 0.0, 0.25)
    assert "not better than the released value" in at.reason
    above = mean_step(0.0, best, np.array([1.0, 1, 0, 0]))
    assert (above.replaced, above.released) == (True, 0.5)
    assert above.threshold == pytest.approx(math.sqrt(1 / 3) / 2)


@pytest.mark.parametrize(
    ("best", "new"),
    [
        # 0.2 + sqrt(0.8) / sqrt(5) = 0.6 exactly; floats put the mean 1.1e-16 above.
        ([0.0, 0, 1, 0, 0], [0.0, 1, 0, 1, 1]),
        # 0.4 + sqrt(0.8) / sqrt(5) = 0.8 exactly, likewise.
        ([0.0, 1, 1, 0, 0], [1.0, 1, 0, 1, 1]),
    ],
)
def test_an_exact_tie_does_not_replace_whatever_the_float_noise(
    best: list[float], new: list[float]
) -> None:
    released = sum(best) / len(best)
    decision = mean_step(released, np.array(best), np.array(new))
    assert algorithm_2([[1 - x for x in best], [1 - x for x in new]])[1][0] is False
    assert not decision.replaced
    assert decision.threshold == pytest.approx(decision.value, abs=1e-15)


def test_an_identical_run_is_refused_and_a_clearly_better_one_accepted() -> None:
    rng = np.random.default_rng(3)
    best = (rng.random(500) < 0.6).astype(np.float64)
    decisions = ladder([best, best.copy(), np.maximum(best, rng.random(500) < 0.5)])
    assert [d.replaced for d in decisions] == [True, False, True]
    assert decisions[1].released == decisions[0].released
    assert decisions[2].released > decisions[0].released + 0.1


@pytest.mark.parametrize(
    ("released", "best", "new", "message"),
    [
        (None, None, [0.5], "at least 2 units; the new run has 1"),
        (0.5, [0.5], [0.5, 0.5], "at least 2 units; the best run has 1"),
        (None, None, [0.5, math.nan], "unit 1 is nan"),
        (0.5, [0.5, math.inf, 1], [0.5, 0.5, 1], "best run's value of unit 1 is inf"),
        (0.5, [0.5, 0.5, 0.5], [0.5, 0.5], "best run has 3 units and the new run 2"),
        (0.5, None, [0.5, 0.5], "needs the per-unit values of the run that set it"),
        (math.nan, [0.5, 0.5], [0.5, 0.5], "released value nan is not a finite number"),
        (None, None, [[0.5, 0.5]], "one value per unit"),
    ],
)
def test_bad_input_is_refused(
    released: float | None, best: list[float] | None, new: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        mean_step(
            released,
            None if best is None else np.array(best),
            np.array(new),
        )


def test_the_scale_must_be_positive() -> None:
    with pytest.raises(ValueError, match="scale must be a positive number"):
        mean_step(None, None, np.array([1.0, 0.0]), scale=0)


def test_the_boosting_attack_fools_best_and_not_the_ladder() -> None:
    rng = np.random.default_rng(2015)
    attacks = [boosting_attack(rng) for _ in range(10)]
    public = np.mean([a.public_units for a in attacks])
    private = np.mean([a.private_units for a in attacks])
    # The noise of one run's public-minus-private accuracy (true accuracy ½ on both parts).
    noise = 0.5 * math.sqrt(1 / public + 1 / private)
    best_gap = np.mean([a.best_displayed - a.best_private for a in attacks])
    ladder_gap = np.mean([a.ladder_displayed - a.ladder_private for a in attacks])
    # `best` overclaims by several points (about 4.5 noise units); the ladder by about one
    # and a half, the price of one best-of-N climb, which the attack's majority vote no longer
    # adds to.
    assert best_gap > 3 * noise > 0.06
    assert ladder_gap < 3 * noise
    assert best_gap - ladder_gap > 2 * noise
    assert all(abs(a.ladder_private - 0.5) < 4 * 0.5 / math.sqrt(private) for a in attacks)


def f1(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Return the F1 of the positive class (a corpus-level measure, not a mean over items)."""
    tp = float(np.sum((predicted == 1) & (gold == 1)))
    fp = float(np.sum((predicted == 1) & (gold == 0)))
    fn = float(np.sum((predicted == 0) & (gold == 1)))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def noisy(gold: np.ndarray, accuracy: float, rng: np.random.Generator) -> np.ndarray:
    """Return predictions that agree with ``gold`` on about ``accuracy`` of the items."""
    return np.where(rng.random(len(gold)) < accuracy, gold, 1 - gold)


def measure(predicted: np.ndarray, gold: np.ndarray) -> Callable[[np.ndarray], float]:
    """Return the F1 of ``predicted`` on the units an index array draws."""
    return lambda idx: f1(predicted[idx], gold[idx])


GOLD = np.random.default_rng(11).integers(0, 2, 400)


def test_bootstrap_accepts_a_clearly_better_run() -> None:
    rng = np.random.default_rng(12)
    weak, strong = noisy(GOLD, 0.6, rng), noisy(GOLD, 0.9, rng)
    first, second = bootstrap_ladder(
        [(7, measure(weak, GOLD)), (8, measure(strong, GOLD))], len(GOLD), decimals=4
    )
    assert first.replaced and first.released == round(f1(weak, GOLD), 4)
    assert first.p_value is None
    assert second.replaced and second.released == round(f1(strong, GOLD), 4)
    assert second.p_value is not None and second.p_value < 0.01
    assert second.value == f1(strong, GOLD)


def test_bootstrap_refuses_an_identical_or_worse_run() -> None:
    rng = np.random.default_rng(13)
    run, worse = noisy(GOLD, 0.8, rng), noisy(GOLD, 0.6, rng)
    decisions = bootstrap_ladder(
        [(1, measure(run, GOLD)), (2, measure(run.copy(), GOLD)), (3, measure(worse, GOLD))],
        len(GOLD),
        decimals=3,
    )
    assert [d.replaced for d in decisions] == [True, False, False]
    assert decisions[1].p_value == 1.0
    assert decisions[2].p_value is not None and decisions[2].p_value > 0.9
    assert decisions[2].released == decisions[0].released == round(f1(run, GOLD), 3)
    assert "not better than the released value" in decisions[2].reason


def test_bootstrap_is_reproducible_by_seed() -> None:
    rng = np.random.default_rng(14)
    best, new = noisy(GOLD, 0.7, rng), noisy(GOLD, 0.73, rng)

    def p(seed: int) -> float | None:
        return bootstrap_step(
            0.5, measure(best, GOLD), measure(new, GOLD), len(GOLD), seed=seed, decimals=2
        ).p_value

    assert p(5) == p(5)
    assert len({p(5), p(6), p(7)}) > 1  # the seed does choose the samples
    assert 0 < (p(5) or 0) < 1


def test_bootstrap_recomputes_the_measure_on_each_sample() -> None:
    seen: list[np.ndarray] = []

    def spy(idx: np.ndarray) -> float:
        seen.append(idx)
        return float(np.mean(GOLD[idx]))

    bootstrap_step(0.5, spy, spy, len(GOLD), seed=0, decimals=2, samples=30)
    # All units once, then each of the 30 samples for both runs, drawn with repeats.
    assert len(seen) == 1 + 1 + 1 + 2 * 30
    assert all(len(idx) == len(GOLD) for idx in seen)
    assert any(len(np.unique(idx)) < len(GOLD) for idx in seen)


def test_bootstrap_samples_without_a_value_are_no_evidence() -> None:
    units = 50

    def only_whole(idx: np.ndarray) -> float:
        # Like an F1 with nothing to count: defined on the whole set, NaN on every resample.
        return 1.0 if len(np.unique(idx)) == units else math.nan

    decision = bootstrap_step(0.5, lambda idx: 0.0, only_whole, units, seed=3, decimals=2)
    assert (decision.replaced, decision.p_value) == (False, 1.0)


@pytest.mark.parametrize(
    ("units", "kwargs", "message"),
    [
        (1, {}, "at least 2 units; the run has 1"),
        (10, {"alpha": 0}, "alpha must lie strictly between 0 and 1"),
        (10, {"seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_bootstrap_refuses_bad_input(units: int, kwargs: dict[str, float], message: str) -> None:
    options = {"seed": 1, "decimals": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        bootstrap_step(None, None, lambda idx: 0.5, units, **options)  # type: ignore[arg-type]


def test_bootstrap_refuses_a_non_finite_value_and_a_missing_best() -> None:
    with pytest.raises(ValueError, match="new run's value nan"):
        bootstrap_step(None, None, lambda idx: math.nan, 5, seed=1, decimals=2)
    with pytest.raises(ValueError, match="needs the measure of the run that set it"):
        bootstrap_step(0.5, None, lambda idx: 0.5, 5, seed=1, decimals=2)


def f1_rows(
    predicted: np.ndarray, gold: np.ndarray, weights: np.ndarray | None = None
) -> SummedRows:
    """Return a run's (weighted) F1 as summed rows (tp, fp, fn per item), as unit_rows gives it."""
    w = np.ones(len(gold)) if weights is None else weights
    rows = np.column_stack(
        [
            ((predicted == 1) & (gold == 1)) * w,
            ((predicted == 1) & (gold == 0)) * w,
            ((predicted == 0) & (gold == 1)) * w,
        ]
    )

    def finish(sums: np.ndarray) -> np.ndarray:
        tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)

    return SummedRows(rows, finish)


def weighted(
    predicted: np.ndarray, gold: np.ndarray, w: np.ndarray
) -> Callable[[np.ndarray], float]:
    """Return the weighted F1 of ``predicted`` on the units an index array draws."""

    def f(idx: np.ndarray) -> float:
        p, g, ww = predicted[idx], gold[idx], w[idx]
        tp = float(np.sum(((p == 1) & (g == 1)) * ww))
        fp = float(np.sum(((p == 1) & (g == 0)) * ww))
        fn = float(np.sum(((p == 0) & (g == 1)) * ww))
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    return f


@pytest.mark.parametrize("accuracy", [0.7, 0.72, 0.76, 0.9])
def test_varied_rows_are_drawn_exactly_as_the_bootstrap_step_draws(accuracy: float) -> None:
    rng = np.random.default_rng(int(accuracy * 100))
    best, new = noisy(GOLD, 0.7, rng), noisy(GOLD, accuracy, rng)
    w = rng.random(len(GOLD)) + 0.5  # every item its own weight: no two rows alike
    direct = bootstrap_step(
        0.5, weighted(best, GOLD, w), weighted(new, GOLD, w), len(GOLD), seed=9, decimals=4
    )
    rows = rows_step(0.5, f1_rows(best, GOLD, w), f1_rows(new, GOLD, w), seed=9, decimals=4)
    assert rows.p_value == pytest.approx(direct.p_value, abs=1e-12)
    assert (rows.replaced, rows.released, rows.value) == pytest.approx(
        (direct.replaced, direct.released, direct.value), abs=1e-12
    )


@pytest.mark.parametrize("accuracy", [0.7, 0.72, 0.74, 0.76, 0.9])
def test_few_distinct_rows_give_the_bootstrap_s_p_value_within_sampling_error(
    accuracy: float,
) -> None:
    rng = np.random.default_rng(int(accuracy * 100))
    best, new = noisy(GOLD, 0.7, rng), noisy(GOLD, accuracy, rng)
    # The index bootstrap's p on 20,000 samples: its own error is under 0.004.
    reference = bootstrap_step(
        0.5,
        measure(best, GOLD),
        measure(new, GOLD),
        len(GOLD),
        seed=3,
        decimals=4,
        samples=20_000,
    ).p_value
    drawn = rows_step(0.5, f1_rows(best, GOLD), f1_rows(new, GOLD), seed=3, decimals=4)
    assert reference is not None and drawn.p_value is not None
    # 1,000 samples: a standard error of at most 0.016; four of them.
    assert abs(drawn.p_value - reference) < 0.064
    assert drawn.value == pytest.approx(f1(new, GOLD), abs=1e-12)


def test_pattern_draws_are_reproducible_and_seeded() -> None:
    rng = np.random.default_rng(5)
    best, new = f1_rows(noisy(GOLD, 0.7, rng), GOLD), f1_rows(noisy(GOLD, 0.73, rng), GOLD)
    one = pattern_bootstrap(best, new, 4, 500)
    assert one is not None and one.shape == (500, 2)
    again = pattern_bootstrap(best, new, 4, 500)
    other = pattern_bootstrap(best, new, 5, 500)
    assert again is not None and other is not None
    assert np.array_equal(one, again) and not np.array_equal(one, other)
    # Rows all different: nothing to gain, the caller draws units instead.
    varied = f1_rows(noisy(GOLD, 0.7, rng), GOLD, rng.random(len(GOLD)) + 0.5)
    assert pattern_bootstrap(varied, varied, 4, 500) is None


def test_the_vectorized_step_rounds_in_shown_units() -> None:
    first = rows_step(None, None, f1_rows(GOLD, GOLD[::-1].copy()), seed=1, decimals=2, scale=100)
    expected = f1(GOLD, GOLD[::-1].copy())
    assert first.replaced and first.released == pytest.approx(round(expected * 100, 2) / 100)
