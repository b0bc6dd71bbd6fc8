"""Tasks defined only by a file: loading, refusing wrong definitions, and the whole flow."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from tests.runs import api_upload, make_participant, open_task, token_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"

# q1: c1 0.2, c2 0.9, c3 0.5 ranks c2 (false), c3 (true), c1 (true); q2 ranks c2 (true) first.
TINY_RUN = b"q1\tq1_c1\t0\t0.2\ttrue\nq1\tq1_c2\t0\t0.9\ttrue\nq1\tq1_c3\t0\t0.5\tfalse\nq2\tq2_c1\t0\t0.1\tfalse\nq2\tq2_c2\t0\t0.8\ttrue\n"


def add_task(runner: FlaskCliRunner, path: Path):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", "add-task", str(path)])


def test_a_task_defined_by_a_file_works_end_to_end(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    result = add_task(runner, FIXTURE / "task.toml")
    assert result.exit_code == 0, result.output
    assert "Task tiny-cqa is ready" in result.output
    assert "/tasks/tiny-cqa/main" in client.get("/").get_data(as_text=True)
    open_task(app, FIXTURE / "task.toml")

    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    resp = api_upload(client, token, TINY_RUN, path="/api/v1/tasks/tiny-cqa/main/runs")
    assert resp.status_code == 201, resp.get_json()
    # AP(q1) = (1/2 + 2/3) / 2, AP(q2) = 1; RR 1/2 and 1; TP 2, FP 1, FN 1, TN 1.
    assert resp.get_json()["official"] == {
        "MAP": "0.7917",
        "MRR": "75.0000",
        "P": "0.6667",
        "R": "0.6667",
        "F1": "0.6667",
        "Acc": "0.6000",
    }
    result = runner.invoke(args=["leaderboard", "add-baselines", "tiny-cqa", "main"])
    assert result.exit_code == 0, result.output
    # IR order: q1 c1 (true), c2, c3 (true) -> AP (1 + 2/3) / 2; q2 c1, c2 (true) -> AP 1/2.
    assert "Baseline 1 (IR): MAP 0.6667  MRR 75.0000" in result.output
    assert "Baseline 2 (random, seed 7)" in result.output
    table = json.loads(
        runner.invoke(args=["leaderboard", "table", "tiny-cqa", "main", "--format", "json"]).output
    )
    assert [c["key"] for c in table["columns"]] == ["MAP", "MRR", "P", "R", "F1", "Acc"]
    assert [r["label"] for r in table["rows"]] == [
        "Aurora-primary",
        "Baseline 1 (IR)",
        "Baseline 2 (random, seed 7)",
        "Baseline 3 (all 'true')",
    ]
    first = table["rows"][0]
    assert first["rank"] == 1 and first["bold"] is True
    assert first["cells"]["MAP"]["value"] == pytest.approx(100 * (0.5 + 2 / 3 + 2) / 4)
    assert (first["cells"]["MAP"]["display"], first["cells"]["MAP"]["rank"]) == ("79.17", 1)
    assert table["rows"][3]["cells"]["MAP"] is None


def test_adding_the_same_task_twice_updates_it(runner: FlaskCliRunner) -> None:
    assert add_task(runner, FIXTURE / "task.toml").exit_code == 0
    again = add_task(runner, FIXTURE / "task.toml")
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize(
    ("edit", "key", "message"),
    [
        (
            ('measures = ["MAP", "MRR", "P", "R", "F1", "Acc"]', 'measures = ["MAP", "nDCG"]'),
            "measures",
            "unknown measure 'nDCG'",
        ),
        (
            ('official_measure = "MAP"', 'official_measure = "AvgRec"'),
            "official_measure",
            "'AvgRec' is not among the measures",
        ),
        (
            ('gold = "gold.txt"', 'gold = "missing.txt"'),
            "subtasks[0].sets[0].gold",
            "file not found: missing.txt",
        ),
        (
            ('ranked_slots = ["primary"]', 'ranked_slots = ["primary", "run9"]'),
            "runs.ranked_slots",
            "'run9' is not one of runs.slots",
        ),
        (
            ('slots = ["primary", "contrastive1"]', 'slots = ["primary", "primary"]'),
            "runs.slots",
            "lists a slot twice",
        ),
        (('family = "cqa"', 'family = "chess"'), "family", "unknown family 'chess'"),
        (
            ('recipes = ["ir", "random", "true"]', 'recipes = ["oracle"]'),
            "baselines.recipes",
            "unknown recipe 'oracle'",
        ),
        (
            ('title = "Tiny reranking task"', 'title = "Tiny"\ncolour = "blue"'),
            "colour",
            "unknown key",
        ),
        (
            ('table_style = "semeval-cqa"', 'table_style = "trec"'),
            "table_style",
            "uses table style 'semeval-cqa'",
        ),
    ],
)
def test_wrong_definitions_are_refused_naming_the_key(
    tmp_path: Path, runner: FlaskCliRunner, edit: tuple[str, str], key: str, message: str
) -> None:
    folder = tmp_path / "task"
    shutil.copytree(FIXTURE, folder)
    text = (folder / "task.toml").read_text()
    assert edit[0] in text
    (folder / "task.toml").write_text(text.replace(edit[0], edit[1]))
    result = add_task(runner, folder / "task.toml")
    assert result.exit_code == 1
    assert re.search(rf"refused: {re.escape(key)}: .*{re.escape(message)}", result.output), (
        result.output
    )


def test_a_definition_that_is_not_toml_is_refused(tmp_path: Path, runner: FlaskCliRunner) -> None:
    bad = tmp_path / "task.toml"
    bad.write_text("slug = \n")
    result = add_task(runner, bad)
    assert result.exit_code == 1 and "not a valid TOML file" in result.output
