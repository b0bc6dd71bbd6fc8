"""scikit-learn's options in a hosted classification task: item weights and the new measures.

The weighted example (`docs/examples/classification/task-weighted.toml`) is hosted by
`add-task`, scored by `score --definition`, uploaded to, shown in its table and every export,
and tested for significance; definitions and gold files using the options wrongly are refused
naming the key, or the file, line and value.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sklearn import metrics
from sqlalchemy import func, select

from leaderboard.cli import leaderboard_group
from leaderboard.models import GoldFile, Task
from tests.helpers.item_tasks import check_exports, pairs, table
from tests.runs import api_upload, make_participant, open_task, token_for

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
DEFINITION = EXAMPLE / "task-weighted.toml"
TASK = "example-sentiment-weighted"
RUNS = f"/api/v1/tasks/{TASK}/A/runs"
LABELS = ["negative", "neutral", "positive"]
PN = ["positive", "negative"]


def weighted_gold() -> tuple[list[str], list[str], list[float]]:
    """Return the ids, labels and weights of the weighted gold file."""
    ids, labels, weights = [], [], []
    for line in (EXAMPLE / "gold-weighted.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            item, label, weight = line.split("\t")
            ids.append(item)
            labels.append(label)
            weights.append(float(weight))
    return ids, labels, weights


def expected_scores(run: dict[str, str]) -> dict[str, float]:
    """Return the example's measures of ``run`` as scikit-learn computes them."""
    ids, y, w = weighted_gold()
    p = [run[i] for i in ids]
    common = {"zero_division": 0, "sample_weight": w}
    return {
        "weighted-F1": metrics.f1_score(y, p, labels=LABELS, average="weighted", **common),
        "Acc": metrics.accuracy_score(y, p, sample_weight=w),
        "micro-P": metrics.precision_score(y, p, labels=LABELS, average="micro", **common),
        "micro-R[positive,negative]": metrics.recall_score(
            y, p, labels=PN, average="micro", **common
        ),
        "weighted-P": metrics.precision_score(y, p, labels=LABELS, average="weighted", **common),
        "weighted-R[positive,negative]": metrics.recall_score(
            y, p, labels=PN, average="weighted", **common
        ),
        "macro-F0.5": metrics.fbeta_score(y, p, beta=0.5, labels=LABELS, average="macro", **common),
        "weighted-F2": metrics.fbeta_score(
            y, p, beta=2, labels=LABELS, average="weighted", **common
        ),
        "F2[positive]": metrics.fbeta_score(
            y, p, beta=2, labels=["positive"], average="macro", **common
        ),
        "macro-F2[positive,negative]": metrics.fbeta_score(
            y, p, beta=2, labels=PN, average="macro", **common
        ),
        "MCC": metrics.matthews_corrcoef(y, p, sample_weight=w),
        "kappa[linear]": metrics.cohen_kappa_score(
            y, p, labels=LABELS, weights="linear", sample_weight=w
        ),
        "kappa[quadratic]": metrics.cohen_kappa_score(
            y, p, labels=LABELS, weights="quadratic", sample_weight=w
        ),
    }


def test_score_with_the_definition_gives_scikit_learns_weighted_values() -> None:
    result = CliRunner().invoke(
        leaderboard_group,
        [
            "score",
            TASK,
            "A",
            str(EXAMPLE / "run-valid.tsv"),
            "--definition",
            str(DEFINITION),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    expected = expected_scores(pairs(EXAMPLE / "run-valid.tsv"))
    assert list(report["measures"]) == list(expected)
    for key, value in expected.items():
        assert report["measures"][key] == pytest.approx(value, abs=1e-12), key
        assert report["official"][key] == format(value, ".4f"), key
    # The weights matter: the unweighted accuracy of this run is another number.
    _ids, y, _w = weighted_gold()
    run = pairs(EXAMPLE / "run-valid.tsv")
    plain = metrics.accuracy_score(y, [run[i] for i in _ids])
    assert report["measures"]["Acc"] != pytest.approx(plain, abs=1e-6)


@pytest.fixture
def weighted_runs(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> dict[str, dict[str, str]]:
    """Host the weighted example; return the labels by item Aurora and Borealis upload."""
    result = runner.invoke(args=["leaderboard", "add-task", str(DEFINITION)])
    assert result.exit_code == 0, result.output
    open_task(app, DEFINITION)
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    run = pairs(EXAMPLE / "run-valid.tsv")
    shifted = {
        i: LABELS[(LABELS.index(label) + k % 2) % 3] for k, (i, label) in enumerate(run.items())
    }
    return {"alice@example.org": run, "bob@example.org": shifted}


@pytest.fixture
def ranked(
    app: Flask,
    client: FlaskClient,
    runner: FlaskCliRunner,
    weighted_runs: dict[str, dict[str, str]],
) -> dict[str, dict[str, str]]:
    """Upload both runs and add the baselines."""
    for email, labels in weighted_runs.items():
        body = "".join(f"{i}\t{label}\n" for i, label in labels.items()).encode()
        resp = api_upload(client, token_for(app, email), body, path=RUNS)
        assert resp.status_code == 201, resp.get_json()
    result = runner.invoke(args=["leaderboard", "add-baselines", TASK, "A"])
    assert result.exit_code == 0, result.output
    return weighted_runs


def test_an_upload_to_the_weighted_task_gets_scikit_learns_weighted_scores(
    app: Flask, client: FlaskClient, weighted_runs: dict[str, dict[str, str]]
) -> None:
    for email, labels in weighted_runs.items():
        body = "".join(f"{i}\t{label}\n" for i, label in labels.items()).encode()
        resp = api_upload(client, token_for(app, email), body, path=RUNS)
        assert resp.status_code == 201, resp.get_json()
        got = resp.get_json()["scores"]
        for key, value in expected_scores(labels).items():
            assert got[key] == pytest.approx(value, abs=1e-12), (email, key)


def test_the_weighted_table_shows_every_measure_and_the_heaviest_majority(
    app: Flask, client: FlaskClient, ranked: dict[str, dict[str, str]]
) -> None:
    shown = table(client, token_for(app, "alice@example.org"), TASK, "A")
    measures = list(expected_scores(ranked["alice@example.org"]))
    assert [c["key"] for c in shown["columns"]] == measures
    assert [c["label"] for c in shown["columns"]] == measures
    # The majority baseline is the label of most weight.
    _, gold_labels, weights = weighted_gold()
    weight = dict.fromkeys(LABELS, 0.0)
    for label, w in zip(gold_labels, weights, strict=True):
        weight[label] += w
    heaviest = max(LABELS, key=lambda label: weight[label])
    labels_shown = {r["label"] for r in shown["rows"] if r["kind"] == "baseline"}
    assert labels_shown == {f"Majority ({heaviest})", "All positive"}
    primaries = [r for r in shown["rows"] if r["kind"] == "run"]
    assert [r["team"] for r in primaries] == ["Aurora", "Borealis"]


def test_the_weighted_task_is_exported_with_its_bracketed_measures(
    client: FlaskClient, ranked: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    csv = client.get(f"/tasks/{TASK}/A/results.csv").get_data(as_text=True)
    assert "kappa[quadratic]" in csv and "weighted-R[positive,negative]" in csv
    check_exports(client, TASK, "A", tmp_path)


def test_a_corrected_weighted_gold_is_described_with_its_total_weight(
    runner: FlaskCliRunner, ranked: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    fixed = tmp_path / "fixed.tsv"
    fixed.write_text((EXAMPLE / "gold-weighted.tsv").read_text().replace("\t0\n", "\t0.25\n"))
    result = runner.invoke(args=["leaderboard", "set-gold", TASK, "A", str(fixed)])
    assert result.exit_code == 0, result.output
    _, _, weights = weighted_gold()
    total = sum(0.25 if w == 0 else w for w in weights)
    assert f"60 items, weights summing to {total:g}." in result.output, result.output


def test_weighted_measures_are_resampled(
    runner: FlaskCliRunner, ranked: dict[str, dict[str, str]]
) -> None:
    # Acc among them, from the stored predictions.
    for measure in ("Acc", "kappa[linear]", "weighted-F2"):
        for method in ("randomization", "bootstrap"):
            options = ["--measure", measure, "--method", method, "--samples", "200"]
            result = runner.invoke(args=["leaderboard", "significance", TASK, "A", *options])
            assert result.exit_code == 0, result.output
            body = json.loads(result.output)
            assert body["measure"] == measure and len(body["pairs"]) == 6


def test_no_per_item_test_applies_to_a_weighted_accuracy(
    runner: FlaskCliRunner, ranked: dict[str, dict[str, str]]
) -> None:
    # A weighted accuracy is not the mean of per-item values.
    result = runner.invoke(
        args=["leaderboard", "significance", TASK, "A", "--measure", "Acc", "--method", "t-test"]
    )
    assert result.exit_code == 1 and "Acc is not their mean" in result.output, result.output


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "task"
    shutil.copytree(EXAMPLE, folder)
    return folder / "task-weighted.toml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _count(app: Flask, model: type) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            '"kappa[linear]",',
            '"kappa[lineal]",',
            ("measures", "kappa's weights are linear or quadratic"),
        ),
        (
            '"kappa[linear]",',
            '"kappa[scale=linear]",',
            ("does not take scale", "it takes: weights"),
        ),
        ('"MCC",', '"MCC[adjusted=true]",', ("does not take adjusted", "it takes: no options")),
        ('"macro-F0.5",', '"macro-F0",', ("measures", "beta must be positive")),
        ('"macro-F0.5",', '"macro-F-2",', ("measures", "unknown measure")),
        ('"weighted-F2",', '"weighted-F2[positive,beta=2]",', ("does not take beta",)),
        ('"F2[positive]",', '"F2[positiv]",', ("not declared: 'positiv'",)),
        ("weights = true", 'weights = "yes"', ("weights: must be true or false",)),
        (
            'gold = "gold-weighted.tsv"',
            'gold = "gold-weighted.tsv"\nweight = true',
            ("sets[0].weight", "weights"),
        ),
    ],
)
def test_wrong_options_in_a_definition_are_refused_naming_them(
    app: Flask,
    runner: FlaskCliRunner,
    tmp_path: Path,
    old: str,
    new: str,
    words: tuple[str, ...],
) -> None:
    definition = _copy(tmp_path)
    _edit(definition, old, new)
    tasks = _count(app, Task)
    result = runner.invoke(args=["leaderboard", "add-task", str(definition)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output
    assert _count(app, Task) == tasks


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("tw-004\tnegative\t-1\n", ("Line 5", "weight '-1' is negative")),
        ("tw-004\tnegative\tmuch\n", ("Line 5", "weight 'much' is not a decimal number")),
        ("tw-004\tnegative\n", ("Line 5", "expected 3 fields (id, value and weight")),
    ],
)
def test_a_gold_with_a_wrong_weight_is_refused_naming_line_and_value(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, line: str, words: tuple[str, ...]
) -> None:
    definition = _copy(tmp_path)
    gold = definition.parent / "gold-weighted.tsv"
    lines = gold.read_text().splitlines(keepends=True)
    assert lines[4].startswith("tw-004\t")
    lines[4] = line
    gold.write_text("".join(lines))
    counts = _count(app, Task), _count(app, GoldFile)
    result = runner.invoke(args=["leaderboard", "add-task", str(definition)])
    assert result.exit_code == 1, result.output
    assert "gold-weighted.tsv" in result.output and "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output
    assert (_count(app, Task), _count(app, GoldFile)) == counts


def test_weights_may_be_set_per_set_and_a_zero_weight_gold_is_refused(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    definition = _copy(tmp_path)
    _edit(definition, "weights = true\n", "")
    _edit(definition, 'gold = "gold-weighted.tsv"', 'gold = "gold-weighted.tsv"\nweights = true')
    run = definition.parent / "run-valid.tsv"
    args = ["score", TASK, "A", str(run), "--definition", str(definition), "--json"]
    result = CliRunner().invoke(leaderboard_group, args)
    assert result.exit_code == 0, result.output
    expected = expected_scores(pairs(run))
    assert json.loads(result.output)["measures"]["Acc"] == pytest.approx(expected["Acc"])
    # Without weights = true the third column is refused as an extra field.
    _edit(definition, "weights = true", "weights = false")
    result = CliRunner().invoke(leaderboard_group, args)
    assert result.exit_code == 1 and "expected 2 fields" in result.output, result.output
    # Every weight 0: nothing to score.
    _edit(definition, "weights = false", "weights = true")
    gold = definition.parent / "gold-weighted.tsv"
    zeroed = [
        line if line.startswith("#") else line.rsplit("\t", 1)[0] + "\t0\n"
        for line in gold.read_text().splitlines(keepends=True)
    ]
    gold.write_text("".join(zeroed))
    result = CliRunner().invoke(leaderboard_group, args)
    assert result.exit_code == 1 and "Every weight is 0" in result.output, result.output
