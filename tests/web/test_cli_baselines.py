"""``leaderboard import-runs --baseline``: a run file stored as a labelled baseline row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from leaderboard.models import Run
from leaderboard.tasks.definition import PRESETS_DIR
from tests.runs import oracle_run

STS_PARTS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")


def _table(runner: FlaskCliRunner, task: str, subtask: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(args=["leaderboard", "table", task, subtask, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _baseline_row(table: dict, label: str) -> dict:  # type: ignore[type-arg]
    (row,) = [r for r in table["rows"] if r["label"] == label]
    assert row["kind"] == "baseline", row
    return row


def _runs(app: Flask) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return s.scalar(select(func.count()).select_from(Run)) or 0


def _import(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", "import-runs", *args])


def test_a_cqa_file_becomes_a_baseline_row(runner: FlaskCliRunner, tmp_path: Path) -> None:
    run = tmp_path / "oracle.txt"
    run.write_bytes(oracle_run())
    result = _import(runner, "semeval2016-task3", "A", "--baseline", "Oracle", str(run))
    assert result.exit_code == 0, result.output
    assert "as baseline 'Oracle'" in result.output and "MAP 0.9633" in result.output
    row = _baseline_row(_table(runner, "semeval2016-task3", "A"), "Oracle")
    assert row["rank"] is None


def test_an_sts_folder_becomes_a_baseline_row(runner: FlaskCliRunner, tmp_path: Path) -> None:
    english = PRESETS_DIR / "semeval2016-task1" / "english"
    folder = tmp_path / "gold-copy"
    folder.mkdir()
    for part in STS_PARTS:
        gold = (english / f"STS2016.gs.{part}.txt").read_bytes()
        # Unscored pairs have an empty gold line; a run needs a score on every line.
        (folder / f"STS2016.OUTPUT.{part}.txt").write_bytes(gold.replace(b"\n\n", b"\n2.5\n"))
    result = _import(
        runner, "semeval2016-task1", "en", "--baseline", "Gold copy", "--lenient", str(folder)
    )
    assert result.exit_code == 0, result.output
    _baseline_row(_table(runner, "semeval2016-task1", "en"), "Gold copy")


def test_a_trec_file_becomes_a_baseline_row(runner: FlaskCliRunner, tmp_path: Path) -> None:
    qrels = PRESETS_DIR / "trec-car-2017" / "qrels.car17v1.5.benchmarkY1test.txt"
    rows = [line.split() for line in qrels.read_text().splitlines()]
    run = tmp_path / "oracle.run"
    run.write_text(
        "".join(f"{q} Q0 {d} {i + 1} {1000 - i} oracle\n" for i, (q, _, d, _g) in enumerate(rows))
    )
    result = _import(runner, "trec-car-2017", "passage", "--baseline", "Oracle", str(run))
    assert result.exit_code == 0, result.output
    row = _baseline_row(_table(runner, "trec-car-2017", "passage"), "Oracle")
    assert row["cells"]["automatic/MAP"]["display"].startswith("1.0"), row


def test_a_refused_baseline_file_stores_nothing(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    before = _runs(app)
    bad = tmp_path / "bad.txt"
    bad.write_text("Q1\tQ1_C1\n")
    result = _import(runner, "semeval2016-task3", "A", "--baseline", "Bad", str(bad))
    assert result.exit_code == 1 and "REJECTED baseline 'Bad'" in result.output
    assert "Traceback" not in result.output and "line 1" in result.output.lower()
    assert _runs(app) == before
    assert all(r["label"] != "Bad" for r in _table(runner, "semeval2016-task3", "A")["rows"])


@pytest.mark.parametrize(
    "extra",
    [("--team", "Kelp"), ("--slot", "primary"), ("--team", "Kelp", "--slot", "primary"), ("TWO",)],
)
def test_baseline_with_a_team_slot_or_several_files_is_a_usage_error(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    run = tmp_path / "oracle.txt"
    run.write_bytes(oracle_run())
    args = [str(run) if a == "TWO" else a for a in extra]
    result = _import(runner, "semeval2016-task3", "A", "--baseline", "X", *args, str(run))
    assert result.exit_code == 2, result.output
    assert "--baseline" in result.output
    assert _runs(app) == 0


def test_a_folder_of_runs_is_refused_where_the_family_has_no_layout(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    result = _import(runner, "semeval2016-task1", "en", str(tmp_path))
    assert result.exit_code == 1 and "not imported from folders" in result.output
    assert isinstance(result.exception, SystemExit) and _runs(app) == 0
