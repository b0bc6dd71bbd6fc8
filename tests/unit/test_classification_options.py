"""scikit-learn's classification options: keys, hand-computed values, weights, refusals, rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn import metrics

from leaderboard.cli.references import load_set_gold, read_definition
from leaderboard.formats.items import LabelParser, parse_gold, parse_weight
from leaderboard.scoring.labels import (
    CLASSIFICATION_REGISTRY,
    check_measure,
    classification_measures,
    confusion_matrix,
)
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.scoring.resampling import SummedRows
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Evaluation, StoredScore

LABELS = ["low", "mid", "high"]
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"

# gold:      low low low mid mid high
# predicted: low low mid mid high high
GOLD = np.array([0, 0, 0, 1, 1, 2])
PREDICTED = np.array([0, 0, 1, 1, 2, 2])


def test_f_beta_by_hand() -> None:
    # Per label: TP (2, 1, 1), gold (3, 2, 1), predicted (2, 2, 2).
    keys = ["macro-F2", "F0.5[low]", "micro-F2[mid,high]", "weighted-F0.5", "macro-F1.0"]
    got = classification_measures(GOLD, PREDICTED, LABELS, keys)
    f2 = [5 * 2 / (4 * 3 + 2), 5 * 1 / (4 * 2 + 2), 5 * 1 / (4 * 1 + 2)]
    assert got["macro-F2"] == pytest.approx(sum(f2) / 3, abs=1e-15)
    assert got["F0.5[low]"] == pytest.approx(1.25 * 2 / (0.25 * 3 + 2), abs=1e-15)
    # micro over mid and high: TP 2, gold 3, predicted 4.
    assert got["micro-F2[mid,high]"] == pytest.approx(5 * 2 / (4 * 3 + 4), abs=1e-15)
    f05 = [1.25 * 2 / (0.25 * 3 + 2), 1.25 / (0.25 * 2 + 2), 1.25 / (0.25 + 2)]
    assert got["weighted-F0.5"] == pytest.approx((3 * f05[0] + 2 * f05[1] + f05[2]) / 6)
    assert (
        got["macro-F1.0"]
        == classification_measures(GOLD, PREDICTED, LABELS, ["macro-F1"])["macro-F1"]
    )


def test_micro_and_weighted_precision_and_recall_by_hand() -> None:
    keys = ["micro-P", "micro-R[low,mid]", "weighted-P", "weighted-R[mid,high]", "micro-P[high]"]
    got = classification_measures(GOLD, PREDICTED, LABELS, keys)
    assert got["micro-P"] == pytest.approx(4 / 6)
    assert got["micro-R[low,mid]"] == pytest.approx(3 / 5)  # TP 2 + 1 of gold 3 + 2
    assert got["weighted-P"] == pytest.approx((3 * 1 + 2 * 0.5 + 1 * 0.5) / 6)
    assert got["weighted-R[mid,high]"] == pytest.approx((2 * 0.5 + 1 * 1) / 3)
    assert got["micro-P[high]"] == pytest.approx(0.5)


def test_a_weighted_average_over_labels_absent_from_gold_is_zero() -> None:
    got = classification_measures(
        np.array([0, 0]), np.array([0, 2]), LABELS, ["weighted-R[mid,high]", "weighted-P[high]"]
    )
    assert got == {"weighted-R[mid,high]": 0.0, "weighted-P[high]": 0.0}


def test_weighted_kappa_by_hand() -> None:
    # Confusion rows gold, columns predicted: [[2,1,0],[0,1,1],[0,0,1]]; t = (3,2,1), p = (2,2,2).
    got = classification_measures(GOLD, PREDICTED, LABELS, ["kappa[linear]", "kappa[quadratic]"])
    observed_linear = 1 + 1  # two items one step off
    expected_linear = (
        sum(t * p * abs(i - j) for i, t in enumerate((3, 2, 1)) for j, p in enumerate((2, 2, 2)))
        / 6
    )
    assert got["kappa[linear]"] == pytest.approx(1 - observed_linear / expected_linear)
    expected_quadratic = (
        sum(t * p * (i - j) ** 2 for i, t in enumerate((3, 2, 1)) for j, p in enumerate((2, 2, 2)))
        / 6
    )
    assert got["kappa[quadratic]"] == pytest.approx(1 - 2 / expected_quadratic)
    # The order of the declared labels matters: reversed labels, same distances.
    flipped = classification_measures(2 - GOLD, 2 - PREDICTED, LABELS, ["kappa[linear]"])
    assert flipped["kappa[linear]"] == pytest.approx(got["kappa[linear]"])
    moved = classification_measures((GOLD + 1) % 3, (PREDICTED + 1) % 3, LABELS, ["kappa[linear]"])
    assert moved["kappa[linear]"] != pytest.approx(got["kappa[linear]"])


def test_weighted_kappa_is_undefined_on_one_same_label_and_named_alike() -> None:
    keys = ["kappa[linear]", "kappa[weights=quadratic]"]
    assert classification_measures(np.array([1, 1]), np.array([1, 1]), LABELS, keys) == {
        "kappa[linear]": None,
        "kappa[weights=quadratic]": None,
    }
    got = classification_measures(GOLD, PREDICTED, LABELS, ["kappa[quadratic]", *keys])
    assert got["kappa[weights=quadratic]"] == got["kappa[quadratic]"]


def test_item_weights_count_as_repeated_items() -> None:
    weights = np.array([2.0, 0.0, 1.0, 1.0, 3.0, 0.5])
    keys = ["Acc", "macro-F2", "MCC", "kappa[quadratic]", "weighted-R"]
    got = classification_measures(GOLD, PREDICTED, LABELS, keys, weights)
    doubled = classification_measures(GOLD, PREDICTED, LABELS, keys, weights * 2)
    assert got == pytest.approx(doubled)
    assert got["Acc"] == pytest.approx((2 + 0 + 0 + 1 + 0 + 0.5) / 7.5)
    assert got["MCC"] == pytest.approx(
        metrics.matthews_corrcoef(GOLD, PREDICTED, sample_weight=weights)
    )


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1, 1, 1, 1, 1, -1], "not negative"),
        ([1, 1, 1, 1, 1, np.nan], "finite"),
        ([0, 0, 0, 0, 0, 0], "one weight must be positive"),
        ([1, 1], "as long as the labels"),
    ],
)
def test_bad_weights_are_refused(weights: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        confusion_matrix(GOLD, PREDICTED, 3, np.array(weights, dtype=np.float64))


def test_keys_are_parsed_into_metric_average_beta_and_labels() -> None:
    parsed = check_measure("weighted-F0.5[high,low]", LABELS)
    assert (parsed.kind, parsed.metric, parsed.average, parsed.beta, parsed.labels) == (
        "weighted-F0.5",
        "F",
        "weighted",
        0.5,
        (2, 0),
    )
    one = check_measure("F2[mid]", LABELS)
    assert (one.kind, one.metric, one.average, one.beta, one.labels) == (
        "F2",
        "F",
        "macro",
        2.0,
        (1,),
    )
    assert check_measure("micro-R", LABELS).average == "micro"
    assert check_measure("kappa[quadratic]", LABELS).weights == "quadratic"
    assert check_measure("kappa[weights=linear]", LABELS).weights == "linear"
    assert check_measure("kappa", LABELS).weights == ""
    # A declared label may contain '=': it is a label, not an option.
    assert check_measure("P[a=b]", ["a=b", "c"]).labels == (0,)


def test_registry_entries_of_the_new_keys() -> None:
    for key in (
        "micro-P",
        "weighted-R",
        "micro-R[a,b]",
        "weighted-P[a]",
        "macro-F0.5",
        "weighted-F2[a,b]",
        "F2[a]",
        "kappa[linear]",
        "kappa[quadratic]",
        "kappa[weights=linear]",
    ):
        entry = CLASSIFICATION_REGISTRY.get(key)
        assert (entry.key, entry.label, entry.scale, entry.decimals) == (key, key, "fraction", 4)
        assert not entry.lower_is_better and entry.notes
    assert "beta 0.5" in CLASSIFICATION_REGISTRY.get("macro-F0.5").notes
    assert "weighted by gold support" in CLASSIFICATION_REGISTRY.get("weighted-F2[a,b]").notes
    assert "linear weights" in CLASSIFICATION_REGISTRY.get("kappa[linear]").notes


@pytest.mark.parametrize(
    ("key", "error", "words"),
    [
        ("kappa[cubic]", UnknownMeasure, "kappa's weights are linear or quadratic"),
        ("kappa[weights=cubic]", UnknownMeasure, "kappa's weights are linear or quadratic"),
        ("kappa[power=2]", UnknownMeasure, "does not take power; it takes: weights"),
        ("Acc[normalize=false]", UnknownMeasure, "does not take normalize; it takes: no options"),
        ("MCC[x=1]", UnknownMeasure, "does not take x; it takes: no options"),
        ("macro-F1[beta=2]", UnknownMeasure, "does not take beta; it takes: no options"),
        ("F2[low,zero_division=1]", UnknownMeasure, "does not take zero_division"),
        ("macro-F0", ValueError, "beta must be positive"),
        ("F0.0[low]", ValueError, "beta must be positive"),
        ("macro-F2000000", ValueError, "at most 1e+06"),
        ("weighted-F00", UnknownMeasure, "unknown measure"),
        ("macro-F.5", UnknownMeasure, "unknown measure"),
        ("macro-F-2", UnknownMeasure, "unknown measure"),
        ("macro-F2x", UnknownMeasure, "unknown measure"),
        ("macro-F", UnknownMeasure, "unknown measure"),
        ("F2", UnknownMeasure, "unknown measure"),
        ("samples-F1", UnknownMeasure, "unknown measure"),
        ("micro-R[low,low]", ValueError, "lists a label twice"),
        ("weighted-P[low,top]", ValueError, "not declared: 'top'"),
    ],
)
def test_wrong_keys_are_refused_saying_why(key: str, error: type, words: str) -> None:
    with pytest.raises(error, match=None) as raised:
        check_measure(key, LABELS)
    assert words in str(raised.value)


def test_an_unknown_key_lists_the_new_forms() -> None:
    with pytest.raises(
        UnknownMeasure, match="unknown measure 'F2' for family classification; known: Acc, "
    ) as raised:
        check_measure("F2", LABELS)
    for form in ("micro-P", "weighted-R", "kappa[linear]", "Fβ[a]", "macro-F0.5"):
        assert form in str(raised.value)


# ------------------------------------------------------------------------------- weighted gold

PARSER = LabelParser(LABELS)


def test_a_weighted_gold_reads_its_third_column_in_bulk_and_line_by_line() -> None:
    clean = b"# id label weight\na\tlow\t1\nb\tmid\t0\nc\thigh\t2.5\n"
    untidy = b"a low 1\n\n# comment\nb\tmid   0\r\nc\thigh\t2.5"
    for data in (clean, untidy):
        gold, errors = parse_gold(data, PARSER, weighted=True)
        assert gold is not None, errors
        assert gold.ids == ("a", "b", "c") and gold.values.tolist() == [0, 1, 2]
        assert gold.weights is not None and gold.weights.tolist() == [1.0, 0.0, 2.5]
    unweighted, _ = parse_gold(b"a\tlow\n", PARSER)
    assert unweighted is not None and unweighted.weights is None


def test_a_weighted_gold_reports_every_wrong_weight_with_its_line() -> None:
    data = b"a\tlow\t-1\nb\tmid\tx\nc\thigh\nd\tlow\t1\t2\ne\ttop\tnan\nf\tlow\t1e999\ng\tlow\t1\n"
    gold, errors = parse_gold(data, PARSER, weighted=True)
    assert gold is None
    said = [(e.line, e.message) for e in errors]
    assert said[0] == (1, "Line 1: weight '-1' is negative; a weight is 0 or more.")
    assert said[1] == (2, "Line 2: weight 'x' is not a decimal number.")
    assert said[2][0] == 3 and "expected 3 fields (id, value and weight" in said[2][1]
    assert said[3][0] == 4 and "found 4" in said[3][1]
    assert said[4][0] == 5 and "'top' is not declared" in said[4][1]
    assert said[5] == (5, "Line 5: weight 'nan' is not a decimal number.")
    assert said[6] == (6, "Line 6: weight '1e999' is beyond the range of a float.")
    assert len(said) == 7


def test_a_gold_whose_weights_are_all_zero_is_refused() -> None:
    for data in (b"a\tlow\t0\nb\tmid\t0.0\n", b"a low 0\nb mid -0\n"):
        gold, errors = parse_gold(data, PARSER, weighted=True)
        assert gold is None
        assert [e.message for e in errors] == [
            "Every weight is 0: at least one item needs a positive weight."
        ]


def test_a_repeated_id_in_a_weighted_gold_is_refused() -> None:
    gold, errors = parse_gold(b"a\tlow\t1\na\tmid\t2\n", PARSER, weighted=True)
    assert gold is None and "given twice (first on line 1)" in errors[0].message


def test_parse_weight() -> None:
    assert [parse_weight(t) for t in ("0", "1", ".5", "2e1", "-0")] == [0.0, 1.0, 0.5, 20.0, 0.0]
    for bad in ("-0.1", "", "inf", "1_0", "0x1"):
        with pytest.raises(ValueError, match="weight"):
            parse_weight(bad)
    assert parse_weight("1e12") == 1e12
    with pytest.raises(ValueError, match=r"weight '1\.5e12' is above the largest weight, 1e\+12"):
        parse_weight("1.5e12")


# ------------------------------------------------------------------------------ resampling rows


def evaluate(run: Path) -> tuple[Any, Any, Evaluation]:
    """Return the family, gold and evaluation of a run of the weighted example."""
    definition = read_definition(EXAMPLE / "task-weighted.toml")
    subtask = definition.subtasks[0]
    setdef = subtask.set(subtask.default_set)
    assert setdef is not None
    gold = load_set_gold(definition, subtask, setdef, 10 << 20)
    family = get_family("classification")
    ctx = Context(definition, subtask, setdef.slug, 10 << 20)
    inputs = family.inputs_from_path(run, ctx)
    try:
        evaluation = family.evaluate(inputs, gold, ctx, lenient=False, options={})
    finally:
        for stream in inputs.values():
            stream.close()
    assert evaluation.results is not None
    return family, gold, evaluation


def test_weighted_rows_give_back_each_measure_and_sklearn_on_a_sample() -> None:
    family, gold, evaluation = evaluate(EXAMPLE / "run-valid.tsv")
    assert evaluation.results is not None
    # A weighted accuracy is no mean of per-item values: it keeps none, like the others.
    assert evaluation.results["Acc"].per_query is None
    weight = dict(zip(gold.gold.ids, gold.gold.weights.tolist(), strict=True))
    truth = dict(
        zip(gold.gold.ids, (gold.extra["labels"][k] for k in gold.gold.values), strict=True)
    )
    assert evaluation.item_values is not None
    references = {
        "Acc": lambda t, p, w: metrics.accuracy_score(t, p, sample_weight=w),
        "weighted-F2": lambda t, p, w: metrics.fbeta_score(
            t,
            p,
            beta=2,
            labels=gold.extra["labels"],
            average="weighted",
            sample_weight=w,
            zero_division=0,
        ),
        "micro-R[positive,negative]": lambda t, p, w: metrics.recall_score(
            t,
            p,
            labels=["positive", "negative"],
            average="micro",
            sample_weight=w,
            zero_division=0,
        ),
        "kappa[quadratic]": lambda t, p, w: metrics.cohen_kappa_score(
            t, p, labels=gold.extra["labels"], weights="quadratic", sample_weight=w
        ),
    }
    for key, result in evaluation.results.items():
        stored = StoredScore(result.per_query, result.item_stats, evaluation.item_values)
        units, rows = family.unit_rows(key, gold, stored)
        assert isinstance(rows, SummedRows)
        assert rows.value() == pytest.approx(result.raw, rel=1e-12, abs=1e-12), key
        if key not in references:
            continue
        for seed in range(5):
            index = np.random.default_rng(seed).integers(0, len(units), len(units))
            chosen = [units[i] for i in index]
            if not any(weight[u] for u in chosen):
                continue
            expected = references[key](
                [truth[u] for u in chosen],
                [evaluation.item_values[u] for u in chosen],
                [weight[u] for u in chosen],
            )
            sampled = float(rows.finish(rows.rows[index].sum(axis=0)))
            assert sampled == pytest.approx(expected, abs=1e-12), (key, seed)
