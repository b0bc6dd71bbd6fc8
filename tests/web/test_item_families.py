"""The classification and regression examples hosted end to end, scored as scikit-learn and scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from scipy import stats
from sklearn import metrics
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard.models import Run
from tests.helpers.item_tasks import check_exports, pairs, table
from tests.runs import api_upload, make_participant, open_task, token_for

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SENTIMENT = EXAMPLES / "classification"
CHANGE = EXAMPLES / "regression"
LABELS = ["positive", "negative", "neutral"]


def host(runner: FlaskCliRunner, app: Flask, folder: Path) -> str:
    """Host an example task; return a participant's API token."""
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, folder / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    return token_for(app, "alice@example.org")


def test_classification_example_scored_as_scikit_learn(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    token = host(runner, app, SENTIMENT)
    path = "/api/v1/tasks/example-sentiment/A/runs"
    resp = api_upload(client, token, (SENTIMENT / "run-valid.tsv").read_bytes(), path=path)
    body = resp.get_json()
    assert resp.status_code == 201, body
    gold, run = pairs(SENTIMENT / "gold.tsv"), pairs(SENTIMENT / "run-valid.tsv")
    y_true = [gold[i] for i in gold]
    y_pred = [run[i] for i in gold]
    expected = {
        "macro-F1": metrics.f1_score(y_true, y_pred, labels=LABELS, average="macro"),
        "Acc": metrics.accuracy_score(y_true, y_pred),
        "macro-F1[positive,negative]": metrics.f1_score(
            y_true, y_pred, labels=["positive", "negative"], average="macro"
        ),
        "macro-R": metrics.recall_score(y_true, y_pred, labels=LABELS, average="macro"),
        "kappa": metrics.cohen_kappa_score(y_true, y_pred, labels=LABELS),
    }
    for key, value in expected.items():
        assert body["scores"][key] == pytest.approx(value, abs=1e-12), key
        assert body["official"][key] == format(value, ".4f"), key

    resp = api_upload(
        client, token, (SENTIMENT / "run-invalid.tsv").read_bytes(), path=path, slot="contrastive1"
    )
    assert resp.status_code == 422
    messages = {i["line"]: i["message"] for i in resp.get_json()["issues"]}
    assert "'POSITIVE!' is not declared" in messages[3]
    assert "'tw-999' is not in the gold data" in messages[6]
    assert "expected 2 fields" in messages[10]
    assert "given twice (first on line 1)" in messages[60]
    assert "3 gold ids (of 60) are missing" in messages[None]

    result = runner.invoke(args=["leaderboard", "add-baselines", "example-sentiment", "A"])
    assert result.exit_code == 0, result.output
    shown = table(client, token, "example-sentiment", "A")
    assert [c["key"] for c in shown["columns"]] == list(expected)
    runs = [r for r in shown["rows"] if r["kind"] == "run"]
    assert [r["team"] for r in runs] == ["Aurora"] and runs[0]["rank"] == 1
    baselines = {r["label"]: r for r in shown["rows"] if r["kind"] == "baseline"}
    counts = {label: y_true.count(label) for label in LABELS}
    majority = max(LABELS, key=lambda label: counts[label])
    assert set(baselines) == {f"Majority ({majority})", "Random (seed 7)", "All positive"}
    all_positive = baselines["All positive"]["cells"]["Acc"]["value"]
    assert all_positive == pytest.approx(counts["positive"] / len(y_true))
    # kappa of a constant prediction is 0 (scikit-learn), not undefined: the gold varies.
    assert baselines["All positive"]["cells"]["kappa"]["value"] == 0.0
    check_exports(client, "example-sentiment", "A", tmp_path)


def test_regression_example_scored_as_scipy(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    token = host(runner, app, CHANGE)
    path = "/api/v1/tasks/example-change/graded/runs"
    resp = api_upload(client, token, (CHANGE / "run-valid.tsv").read_bytes(), path=path)
    body = resp.get_json()
    assert resp.status_code == 201, body
    gold, run = pairs(CHANGE / "gold.tsv"), pairs(CHANGE / "run-valid.tsv")
    x = np.array([float(gold[i]) for i in gold])
    y = np.array([float(run[i]) for i in gold])
    expected = {
        "Spearman": stats.spearmanr(x, y).statistic,
        "Pearson": stats.pearsonr(x, y).statistic,
        "Kendall": stats.kendalltau(x, y).statistic,
        "MSE": float(np.mean((x - y) ** 2)),
        "MAE": float(np.mean(np.abs(x - y))),
    }
    for key, value in expected.items():
        assert body["scores"][key] == pytest.approx(value, abs=1e-9), key

    resp = api_upload(
        client, token, (CHANGE / "run-invalid.tsv").read_bytes(), path=path, slot="contrastive1"
    )
    assert resp.status_code == 422
    messages = {i["line"]: i["message"] for i in resp.get_json()["issues"]}
    assert "'nan' is not a decimal number" in messages[2]
    assert "'0,5' is not a decimal number" in messages[5]

    # A constant prediction is accepted; its correlations are undefined, shown "—".
    constant = "".join(f"{i}\t0.5\n" for i in gold).encode()
    resp = api_upload(client, token, constant, path=path, slot="contrastive1")
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["scores"]["Pearson"] is None
    result = runner.invoke(args=["leaderboard", "add-baselines", "example-change", "graded"])
    assert result.exit_code == 0, result.output
    shown = table(client, token, "example-change", "graded")
    rows = {r["label"]: r for r in shown["rows"]}
    assert rows["Gold mean"]["cells"]["Spearman"] is None
    assert rows["Gold mean"]["cells"]["MSE"]["value"] == pytest.approx(float(np.var(x)))
    constant_row = next(r for r in shown["rows"] if r["slot"] == "contrastive1")
    assert constant_row["cells"]["Pearson"] is None
    assert any("Undefined here: Kendall, Pearson, Spearman." in n for n in shown["footnotes"])
    # MSE is lower-is-better: the better (smaller) error ranks first among primaries.
    primary = next(r for r in shown["rows"] if r["slot"] == "primary")
    assert primary["cells"]["MSE"]["rank"] == 1
    check_exports(client, "example-change", "graded", tmp_path)


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (('"kappa"]', '"kappa", "F1[mixed]"]'), "subtasks[0].measures", "'mixed'"),
        (('"kappa"]', '"kappa", "BLEU"]'), "subtasks[0].measures", "unknown measure"),
        (('"all:positive"', '"all:sarcastic"'), "baselines.recipes", "does not declare"),
        (("random_seed = 7", "random_seed = 7\nthreshold = 2"), "subtasks[0].threshold", "unknown"),
        (('pos = "positive"', 'pos = "positiv"'), "label_aliases", "not a declared label"),
    ],
)
def test_wrong_classification_definitions_are_refused_naming_the_key(
    runner: FlaskCliRunner, tmp_path: Path, change: tuple[str, str], key: str, words: str
) -> None:
    text = (SENTIMENT / "task.toml").read_text()
    assert change[0] in text
    (tmp_path / "gold.tsv").write_bytes((SENTIMENT / "gold.tsv").read_bytes())
    (tmp_path / "task.toml").write_text(text.replace(change[0], change[1]))
    result = runner.invoke(args=["leaderboard", "add-task", str(tmp_path / "task.toml")])
    assert result.exit_code == 1
    assert key in result.output and words in result.output, result.output


def test_a_historical_classification_file_is_imported_leniently(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    host(runner, app, SENTIMENT)
    run = pairs(SENTIMENT / "run-valid.tsv")
    # A header line, CRLF endings, spaces for TABs, an alias and no final newline.
    lines = [f"{item}   {'pos' if label == 'positive' else label}" for item, label in run.items()]
    path = tmp_path / "old.txt"
    path.write_bytes(("#id label\r\n" + "\r\n".join(lines)).encode())
    args = ["leaderboard", "import-runs", "example-sentiment", "A", "--team", "Old", "--slot"]
    strict = runner.invoke(args=[*args, "primary", str(path)])
    assert "REJECTED" not in strict.output, strict.output  # spaces and CRLF are only warnings
    lenient = runner.invoke(args=[*args, "contrastive1", "--lenient", str(path)])
    assert lenient.exit_code == 0, lenient.output
    for said in ("header or comment line", "line endings were read as Unix", "no final newline"):
        assert said in lenient.output, lenient.output


def stored_predictions(app: Flask) -> dict[str, dict[str, object] | None]:
    """Return each stored run's item values by its slot (baselines by their role)."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(Run).options(undefer(Run.item_values))).all()
        return {r.slot: r.item_values for r in rows if r.status == "active"}


def test_predictions_are_stored_per_item_with_every_run(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    token = host(runner, app, SENTIMENT)
    gold = pairs(SENTIMENT / "gold.tsv")
    ids = list(gold)
    # Aliases are stored under the declared label they stand for.
    aliases = {"positive": "pos", "negative": "neg", "neutral": "neu"}
    predicted = {i: LABELS[k % 3] for k, i in enumerate(ids)}
    run = "".join(
        f"{i}\t{aliases[predicted[i]] if k % 2 else predicted[i]}\n" for k, i in enumerate(ids)
    )
    path = "/api/v1/tasks/example-sentiment/A/runs"
    assert api_upload(client, token, run.encode(), path=path).status_code == 201
    assert stored_predictions(app)["primary"] == predicted
    result = runner.invoke(args=["leaderboard", "add-baselines", "example-sentiment", "A"])
    assert result.exit_code == 0, result.output
    stored = stored_predictions(app)
    assert set(stored["all-positive"].values()) == {"positive"}  # type: ignore[union-attr]
    assert set(stored["all-positive"]) == set(ids)  # type: ignore[arg-type]
    # Re-scoring stores them again, from the stored file.
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        primary = session.scalars(select(Run).where(Run.slot == "primary")).one()
        primary.item_values = None
        session.commit()
    result = runner.invoke(args=["leaderboard", "rescore", "example-sentiment", "A"])
    assert result.exit_code == 0, result.output
    assert stored_predictions(app)["primary"] == predicted


def test_regression_predictions_are_the_numbers_of_the_file(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    token = host(runner, app, CHANGE)
    path = "/api/v1/tasks/example-change/graded/runs"
    assert (
        api_upload(client, token, (CHANGE / "run-valid.tsv").read_bytes(), path=path).status_code
        == 201
    )
    expected = {i: float(v) for i, v in pairs(CHANGE / "run-valid.tsv").items()}
    assert stored_predictions(app)["primary"] == expected
