"""The seed families' corpus-level measures resample exactly: CQA per question, STS per pair.

CQA (SemEval-2016 Task 3 gold shipped with the package): the rows of every measure give back
the stored value, and on bootstrap samples of questions they give AvgRec computed here from each
question's ranking, and scikit-learn's P, R, F1 and accuracy on the drawn questions' rows.

STS (SemEval-2016 Task 1 gold): the rows give back the stored overall and part r, on bootstrap
samples of pairs scipy's Pearson per part and the pair-weighted mean, and on randomization
samples (the same swap masks) the brute-force difference of two runs, hence the same p-value.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics

from leaderboard.cli.references import load_set_gold, read_definition
from leaderboard.formats.cqa import CqaRun, parse_gold
from leaderboard.scoring.resampling import (
    NotResampled,
    RecomputedRows,
    SummedRows,
    UnitRows,
    randomization_diffs,
    randomization_p,
    swap_masks,
)
from leaderboard.scoring.significance import compare_pairs
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Evaluation, MeasureResult, StoredScore
from leaderboard.tasks.families.cqa import CqaFamily
from tests.runs import GOLD_TEST_A, gold_lines

LIMIT = 10 << 20
TOP = 10


def on_sample(rows: UnitRows, index: np.ndarray) -> float:
    """Return the measure on the units ``index`` draws (with repeats)."""
    if isinstance(rows, SummedRows):
        return float(rows.finish(rows.rows[index].sum(axis=0)))
    return float(rows.measure(rows.rows[index]))


# --------------------------------------------------------------------------------------------
# CQA


def cqa_questions(lines: list[list[str]]) -> list[tuple[str, list[bool]]]:
    """Return each question's id and gold labels, in gold order (from the file's columns)."""
    out: list[tuple[str, list[bool]]] = []
    for question, _candidate, _position, _ir, label in lines:
        if not out or out[-1][0] != question:
            out.append((question, []))
        out[-1][1].append(label.strip() == "true")
    return out


def ranked_labels(labels: list[bool], scores: list[float]) -> list[bool]:
    """Return the gold labels in the run's order: score descending, ties in gold order."""
    order = sorted(range(len(labels)), key=lambda i: -scores[i])  # sorted() is stable
    return [labels[i] for i in order]


def avgrec(rankings: list[list[bool]]) -> float:
    """Return (1/10) Σ_k Σ_q hits_q(k) / Σ_q min(k, R_q); 0 when no question has a relevant."""
    if sum(sum(r) for r in rankings) == 0:
        return 0.0
    total = 0.0
    for k in range(1, TOP + 1):
        hits = sum(sum(r[:k]) for r in rankings)
        possible = sum(min(k, sum(r)) for r in rankings)
        total += hits / possible
    return total / TOP


SKLEARN = {
    "P": lambda t, p: metrics.precision_score(t, p, zero_division=0),
    "R": lambda t, p: metrics.recall_score(t, p, zero_division=0),
    "F1": lambda t, p: metrics.f1_score(t, p, zero_division=0),
    "Acc": metrics.accuracy_score,
}


def cqa_runs() -> dict[str, tuple[list[float], list[bool]]]:
    """Return runs over the official test gold: random, all 'true', all 'false', near-oracle."""
    lines = gold_lines(GOLD_TEST_A)
    truth = [line[4].strip() == "true" for line in lines]
    rng = random.Random(11)
    runs: dict[str, tuple[list[float], list[bool]]] = {}
    scores = [rng.random() for _ in truth]
    runs["random"] = (scores, [s > 0.5 for s in scores])
    runs["all-true"] = ([float(line[3]) for line in lines], [True] * len(truth))
    runs["all-false"] = ([float(line[3]) for line in lines], [False] * len(truth))
    noisy = [float(t) + rng.gauss(0, 0.6) for t in truth]
    runs["near-oracle"] = (noisy, [s > 0.5 for s in noisy])
    return runs


def cqa_score(scores: list[float], predicted: list[bool], rows: int | None = None) -> Any:
    gold = parse_gold(GOLD_TEST_A.read_bytes())
    n = len(scores) if rows is None else rows
    run = CqaRun(n, np.array(scores[:n]), np.array(predicted[:n], dtype=bool))
    return gold, CqaFamily().score(run, gold)


def stored(result: MeasureResult, item_values: Any = None) -> StoredScore:
    return StoredScore(result.per_query, result.item_stats, item_values)


@pytest.mark.parametrize("name", ["random", "all-true", "all-false", "near-oracle"])
def test_cqa_rows_give_back_every_stored_measure(name: str) -> None:
    scores, predicted = cqa_runs()[name]
    gold, results = cqa_score(scores, predicted)
    family = CqaFamily()
    for key, result in results.items():
        units, rows = family.unit_rows(key, gold, stored(result))
        assert units == list(gold.questions), key
        assert isinstance(rows, SummedRows)
        assert rows.value() == pytest.approx(result.raw, rel=0, abs=1e-12), key
        # Only MAP and MRR are means of per-question values (what t-tests may test).
        assert (rows.mean_of is not None) == (key in ("MAP", "MRR")), key


@pytest.mark.parametrize("seed", range(4))
def test_cqa_rows_on_a_sample_of_questions_are_the_measures_of_those_questions(seed: int) -> None:
    questions = cqa_questions(gold_lines(GOLD_TEST_A))
    family = CqaFamily()
    for name, (scores, predicted) in cqa_runs().items():
        gold, results = cqa_score(scores, predicted)
        rankings, truth, labels, start = [], [], [], 0
        for _question, gold_labels in questions:
            end = start + len(gold_labels)
            rankings.append(ranked_labels(gold_labels, scores[start:end])[:TOP])
            truth.append(gold_labels)
            labels.append(predicted[start:end])
            start = end
        index = np.random.default_rng(seed).integers(0, len(questions), len(questions))
        expected = {"AvgRec": avgrec([rankings[i] for i in index])}
        t = [label for i in index for label in truth[i]]
        p = [label for i in index for label in labels[i]]
        expected.update({key: reference(t, p) for key, reference in SKLEARN.items()})
        for key, value in expected.items():
            _units, rows = family.unit_rows(key, gold, stored(results[key]))
            assert on_sample(rows, index) == pytest.approx(value, rel=0, abs=1e-12), (name, key)


def small_gold() -> bytes:
    """Return a gold of three questions; only Q1 has relevant candidates."""
    labels = {"Q1": ["true", "false", "true"], "Q2": ["false", "false"], "Q3": ["false"] * 4}
    return "".join(
        f"{q}\t{q}_C{i}\t{i}\t0\t{label}\n"
        for q, row in labels.items()
        for i, label in enumerate(row, 1)
    ).encode()


def test_cqa_samples_without_relevant_or_predicted_true_follow_the_scorer() -> None:
    gold = parse_gold(small_gold())
    family = CqaFamily()
    # Q1: 'true' predicted on its first candidate only; Q2 and Q3: nothing predicted 'true'.
    predicted = np.array([True, False, False] + [False] * 6)
    scores = np.linspace(1.0, 0.1, 9)
    results = family.score(CqaRun(9, scores, predicted), gold)
    rows = {k: family.unit_rows(k, gold, stored(r))[1] for k, r in results.items()}
    truth = [[True, False, True], [False, False], [False] * 4]
    guess = [[True, False, False], [False, False], [False] * 4]
    for index in ([0, 1, 2], [1, 2, 2], [2, 2, 2], [1, 1, 0]):
        chosen = np.array(index)
        # Without Q1, Σ R_q = 0: AvgRec is 0 (the scorer's flagged case); P, R, F1 are 0.
        expected_avgrec = avgrec([[True, False, True] if i == 0 else [False] for i in index])
        assert on_sample(rows["AvgRec"], chosen) == pytest.approx(expected_avgrec, abs=1e-15)
        t = [x for i in index for x in truth[i]]
        p = [x for i in index for x in guess[i]]
        for key, reference in SKLEARN.items():
            assert on_sample(rows[key], chosen) == pytest.approx(reference(t, p), abs=1e-15)
    assert on_sample(rows["AvgRec"], np.array([1, 2])) == 0.0


def test_cqa_a_truncated_run_has_rows_for_the_questions_it_covers() -> None:
    scores, predicted = cqa_runs()["random"]
    gold, results = cqa_score(scores, predicted, rows=25)
    covered = sorted({line[0] for line in gold_lines(GOLD_TEST_A)[:25]}, key=gold.questions.index)
    for key, result in results.items():
        units, rows = CqaFamily().unit_rows(key, gold, stored(result))
        assert units == covered, key
        assert rows.value() == pytest.approx(result.raw, abs=1e-12), key


def test_cqa_runs_scored_before_the_counts_were_kept_are_not_resampled() -> None:
    gold = parse_gold(GOLD_TEST_A.read_bytes())
    for key in ("AvgRec", "P", "R", "F1", "Acc"):
        with pytest.raises(NotResampled, match="re-score"):
            CqaFamily().unit_rows(key, gold, StoredScore())


# --------------------------------------------------------------------------------------------
# STS

PRESET = Path(__file__).resolve().parents[2] / "leaderboard" / "tasks" / "presets"
STS = PRESET / "semeval2016-task1"


def sts_target(subtask: str = "en") -> tuple[Any, Any, Context]:
    """Return the family, the loaded gold and the context of an STS 2016 subtask's test set."""
    definition = read_definition(STS / "task.toml")
    sub = next(s for s in definition.subtasks if s.slug == subtask)
    setdef = sub.set("test")
    assert setdef is not None
    gold = load_set_gold(definition, sub, setdef, LIMIT)
    return get_family("sts"), gold, Context(definition, sub, "test", LIMIT)


def gold_files(subtask: str = "en") -> dict[str, list[str]]:
    """Return each part's gold lines as written (empty: unscored), read here from the files."""
    definition = read_definition(STS / "task.toml")
    sub = next(s for s in definition.subtasks if s.slug == subtask)
    setdef = sub.set("test")
    assert setdef is not None
    return {
        str(part["slug"]): (STS / setdef.files[f"gold:{part['slug']}"]).read_text().splitlines()
        for part in setdef.options["parts"]
    }


def sts_run(seed: int, noise: float, constant: str | None = None) -> dict[str, np.ndarray]:
    """Return an English run: gold plus noise per line; ``constant``'s scored lines all 2.5."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for slug, lines in gold_files().items():
        gold = np.array([float(v) if v.strip() else 2.5 for v in lines])
        values = np.round(gold + rng.normal(0, noise, len(gold)), 3)
        if slug == constant:
            scored = np.array([bool(v.strip()) for v in lines])
            values[scored] = 2.5
            values[~scored] = rng.uniform(0, 5, int((~scored).sum())).round(2)
        out[slug] = values
    return out


def render(run: dict[str, np.ndarray]) -> dict[str, bytes]:
    """Return the run's files, every value written exactly (Python's shortest repr)."""
    return {
        slug: "".join(f"{float(v)!r}\n" for v in values).encode() for slug, values in run.items()
    }


def sts_evaluate(run: dict[str, np.ndarray], subtask: str = "en") -> tuple[Any, Any, Evaluation]:
    family, gold, ctx = sts_target(subtask)
    evaluation = family.evaluate(
        family.memory_inputs(render(run)), gold, ctx, lenient=False, options={}
    )
    assert evaluation.results is not None, evaluation.verdict.errors
    return family, gold, evaluation


def sts_rows(family: Any, gold: Any, evaluation: Evaluation, key: str) -> tuple[list[str], Any]:
    assert evaluation.results is not None
    result = evaluation.results[key]
    return family.unit_rows(key, gold, stored(result, evaluation.item_values))  # type: ignore[no-any-return]


def scipy_r(x: np.ndarray, y: np.ndarray) -> float:
    """Return scipy's r, 0 where the scorer counts 0 (a constant side, fewer than 2 pairs)."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(stats.pearsonr(x, y).statistic)


class Reference:
    """The English STS measures on any pairs, from the gold files and a run's own arrays."""

    def __init__(self) -> None:
        self.gold = gold_files()
        # The official weights: each part's number of scored pairs.
        self.weights = {s: sum(1 for v in lines if v.strip()) for s, lines in self.gold.items()}

    def pair(self, unit: str, run: dict[str, np.ndarray]) -> tuple[str, float, float]:
        slug, line = unit.rsplit(":", 1)
        return slug, float(run[slug][int(line) - 1]), float(self.gold[slug][int(line) - 1])

    def measures(self, units: list[str], run: dict[str, np.ndarray]) -> dict[str, float]:
        """Return r per part over the given pairs (with repeats) and the weighted overall."""
        xs: dict[str, list[float]] = {s: [] for s in self.gold}
        ys: dict[str, list[float]] = {s: [] for s in self.gold}
        for unit in units:
            slug, x, y = self.pair(unit, run)
            xs[slug].append(x)
            ys[slug].append(y)
        r = {s: scipy_r(np.array(xs[s]), np.array(ys[s])) for s in self.gold}
        total = sum(self.weights.values())
        return {"ALL": sum(self.weights[s] * r[s] for s in r) / total, **r}


def test_sts_item_values_are_the_predictions_on_the_scored_pairs() -> None:
    run = sts_run(1, 0.8)
    _family, _gold, evaluation = sts_evaluate(run)
    values = evaluation.item_values
    assert values is not None
    reference = Reference()
    assert len(values) == sum(reference.weights.values())
    for unit, value in values.items():
        slug, x, _y = reference.pair(unit, run)
        assert value == x and reference.gold[slug][int(unit.rsplit(":", 1)[1]) - 1].strip()


@pytest.mark.parametrize("constant", [None, "headlines"])
def test_sts_rows_give_back_the_stored_overall_and_part_values(constant: str | None) -> None:
    family, gold, evaluation = sts_evaluate(sts_run(2, 1.0, constant))
    assert evaluation.results is not None
    for key, result in evaluation.results.items():
        units, rows = sts_rows(family, gold, evaluation, key)
        assert isinstance(rows, SummedRows), key
        assert rows.mean_of is None
        assert rows.value() == pytest.approx(result.raw, rel=0, abs=1e-12), key
        weights = Reference().weights
        assert len(units) == (sum(weights.values()) if key == "ALL" else weights[key])
    if constant:
        assert evaluation.results[constant].raw == 0.0
        assert evaluation.results[constant].flags == ("constant-on-scored",)


def test_sts_rows_with_a_mapping_give_back_the_stored_values() -> None:
    # es-en: the multisource part's scored pairs are run lines named by a mapping file.
    family, gold, ctx = sts_target("es-en")
    rng = np.random.default_rng(5)
    files = render({spec.slug: rng.uniform(0, 5, spec.lines) for spec in gold.specs})
    evaluation = family.evaluate(family.memory_inputs(files), gold, ctx, lenient=False, options={})
    assert evaluation.results is not None
    for key, result in evaluation.results.items():
        _units, rows = sts_rows(family, gold, evaluation, key)
        assert rows.value() == pytest.approx(result.raw, rel=0, abs=1e-12), key


@pytest.mark.parametrize("seed", range(3))
def test_sts_rows_on_a_bootstrap_sample_are_scipys_pearson_and_weighted_mean(seed: int) -> None:
    reference = Reference()
    for run in (sts_run(3, 0.9), sts_run(4, 1.5, constant="postediting")):
        family, gold, evaluation = sts_evaluate(run)
        for key in ("ALL", "answer-answer", "postediting"):
            units, rows = sts_rows(family, gold, evaluation, key)
            # A small sample too, where a part may draw fewer than two pairs.
            size = len(units) if seed < 2 else 12
            index = np.random.default_rng(seed).integers(0, len(units), size)
            expected = reference.measures([units[i] for i in index], run)[key]
            assert on_sample(rows, index) == pytest.approx(expected, rel=0, abs=1e-12), key


def test_sts_randomization_agrees_with_a_brute_force_loop_over_the_same_swaps() -> None:
    reference = Reference()
    run_a, run_b = sts_run(6, 0.9), sts_run(7, 1.0, constant="plagiarism")
    family, gold, eval_a = sts_evaluate(run_a)
    _family, _gold, eval_b = sts_evaluate(run_b)
    units, rows_a = sts_rows(family, gold, eval_a, "ALL")
    units_b, rows_b = sts_rows(family, gold, eval_b, "ALL")
    assert units == units_b
    seed, samples = 3, 400
    pairs_a = [reference.pair(u, run_a) for u in units]
    pairs_b = [reference.pair(u, run_b) for u in units]
    brute: list[float] = []
    for mask in swap_masks(seed, samples, len(units)):
        for swap in mask:
            mixed_a = {s: run_a[s].copy() for s in run_a}
            mixed_b = {s: run_b[s].copy() for s in run_b}
            for k in np.flatnonzero(swap):
                slug, line = units[k].rsplit(":", 1)
                mixed_a[slug][int(line) - 1] = pairs_b[k][1]
                mixed_b[slug][int(line) - 1] = pairs_a[k][1]
            brute.append(
                reference.measures(units, mixed_a)["ALL"]
                - reference.measures(units, mixed_b)["ALL"]
            )
    diffs = randomization_diffs([rows_a, rows_b], [(0, 1)], seed, samples)[:, 0]
    assert np.allclose(diffs, brute, rtol=0, atol=1e-12)
    observed = reference.measures(units, run_a)["ALL"] - reference.measures(units, run_b)["ALL"]
    (result,) = compare_pairs(
        [rows_a, rows_b], [(0, 1)], method="randomization", seed=seed, samples=samples,
        tolerance=1e-9,
    )  # fmt: skip
    hits = sum(1 for d in brute if abs(d) >= abs(observed) - 1e-9)
    assert result.p == (hits + 1) / (samples + 1) == randomization_p(observed, diffs, 1e-9)
    assert 0.0 < result.p < 1.0


def test_sts_a_run_far_from_the_gold_scale_is_recomputed_exactly() -> None:
    # Almost constant far from the gold mean: sums would lose r to cancellation.
    reference = Reference()
    near = sts_run(8, 1.0)
    far = {s: 1000.0 + v / 1e3 for s, v in sts_run(9, 1.0).items()}
    family, gold, eval_near = sts_evaluate(near)
    _family, _gold, eval_far = sts_evaluate(far)
    units, summed = sts_rows(family, gold, eval_near, "ALL")
    _units, recomputed = sts_rows(family, gold, eval_far, "ALL")
    assert isinstance(summed, SummedRows) and isinstance(recomputed, RecomputedRows)
    assert eval_far.results is not None
    assert recomputed.value() == pytest.approx(eval_far.results["ALL"].raw, rel=0, abs=1e-12)
    index = np.random.default_rng(1).integers(0, len(units), len(units))
    expected = reference.measures([units[i] for i in index], far)["ALL"]
    assert on_sample(recomputed, index) == pytest.approx(expected, abs=1e-12)
    diffs = randomization_diffs([summed, recomputed], [(0, 1)], seed=1, samples=20)[:, 0]
    for swap, diff in zip(next(swap_masks(1, 20, len(units))), diffs, strict=True):
        mixed_near = {s: v.copy() for s, v in near.items()}
        mixed_far = {s: v.copy() for s, v in far.items()}
        for k in np.flatnonzero(swap):
            slug, line = units[k].rsplit(":", 1)
            i = int(line) - 1
            mixed_near[slug][i], mixed_far[slug][i] = far[slug][i], near[slug][i]
        expected = (
            reference.measures(units, mixed_near)["ALL"]
            - reference.measures(units, mixed_far)["ALL"]
        )
        assert diff == pytest.approx(expected, abs=1e-12)


def test_sts_runs_scored_before_predictions_were_kept_are_not_resampled() -> None:
    family, gold, _ctx = sts_target()
    for key in ("ALL", "headlines"):
        with pytest.raises(NotResampled, match="re-score"):
            family.unit_rows(key, gold, StoredScore())
