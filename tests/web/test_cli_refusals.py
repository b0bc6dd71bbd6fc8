"""Definitions, gold and qrels files that cannot be read: one clear message, exit 1, no change."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from leaderboard.cli import leaderboard_group
from leaderboard.models import GoldFile, Task
from leaderboard.tasks.definition import PRESETS_DIR

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"
TREC = PRESETS_DIR / "trec-car-2017"
TREC_QRELS = "qrels.car17v1.5.benchmarkY1test.txt"


def _tiny(folder: Path, edit: Callable[[Path], None] = lambda _f: None) -> Path:
    shutil.copytree(TINY, folder)
    edit(folder)
    return folder / "task.toml"


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _bad_grade(path: Path) -> None:
    """Give line 3 of a qrels file the grade ``x1``."""
    lines = path.read_text().splitlines(keepends=True)
    fields = lines[2].split(" ")
    fields[3] = "x1\n"
    lines[2] = " ".join(fields)
    path.write_text("".join(lines))


def _trec(folder: Path) -> Path:
    shutil.copytree(TREC, folder)
    _replace(folder / "task.toml", 'slug = "trec-car-2017"', 'slug = "trec-copy"')
    _bad_grade(folder / TREC_QRELS)
    return folder / "task.toml"


#: Broken definitions: how to make one in a folder, and what the message must name.
DEFINITIONS: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "toml syntax": (
        lambda d: _tiny(d, lambda f: _replace(f / "task.toml", 'title = "Tiny', "title = Tiny")),
        ("task.toml", "not a valid TOML file", "line 3"),
    ),
    "unknown key": (
        lambda d: _tiny(
            d, lambda f: _replace(f / "task.toml", "[runs]", 'colour = "blue"\n[runs]')
        ),
        ("task.toml", "colour"),
    ),
    "bad key": (
        lambda d: _tiny(d, lambda f: _replace(f / "task.toml", '"MAP"', '"MAPP"')),
        ("task.toml", "official_measure"),
    ),
    "missing gold": (
        lambda d: _tiny(d, lambda f: (f / "gold.txt").unlink()),
        ("task.toml", "subtasks[0].sets[0].gold", "not found: gold.txt"),
    ),
    "cqa gold line": (
        lambda d: _tiny(d, lambda f: _replace(f / "gold.txt", "\ttrue\n", "\tmaybe\n")),
        ("gold.txt", "Line 1", "maybe"),
    ),
    "cqa gold encoding": (
        lambda d: _tiny(d, lambda f: (f / "gold.txt").write_bytes(b"q1\tq1_c1\t1\t1\t\xff\n")),
        ("gold.txt", "UTF-8"),
    ),
    "trec qrels grade": (_trec, (TREC_QRELS, "Line 3", "x1")),
    "missing markdown file": (
        lambda d: _tiny(
            d, lambda f: _replace(f / "task.toml", "[runs]", 'overview = { file = "o.md" }\n[runs]')
        ),
        ("task.toml", "overview.file", "file not found: 'o.md'"),
    ),
    "markdown file outside": (
        lambda d: _tiny(
            d,
            lambda f: _replace(f / "task.toml", "[runs]", 'terms = { file = "../t.md" }\n[runs]'),
        ),
        ("task.toml", "terms.file", "'../t.md' may not leave the definition's folder"),
    ),
}


def _clean_refusal(result: Result, *named: str) -> None:
    """Assert exit 1 with an ``Error:`` naming everything in ``named``, and no traceback."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stderr.startswith("Error: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for part in named:
        assert part in result.stderr, (part, result.stderr)
    assert "Traceback" not in result.output


def _count(app: Flask, model: type) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return s.scalar(select(func.count()).select_from(model)) or 0


@pytest.mark.parametrize("case", sorted(DEFINITIONS))
def test_add_task_refuses_and_stores_nothing(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, case: str
) -> None:
    make, named = DEFINITIONS[case]
    tasks, golds = _count(app, Task), _count(app, GoldFile)
    result = runner.invoke(args=["leaderboard", "add-task", str(make(tmp_path / "task"))])
    _clean_refusal(result, *named)
    assert (_count(app, Task), _count(app, GoldFile)) == (tasks, golds)


@pytest.mark.parametrize("case", sorted(DEFINITIONS))
def test_score_with_a_definition_refuses(tmp_path: Path, case: str) -> None:
    make, named = DEFINITIONS[case]
    definition = make(tmp_path / "task")
    run = tmp_path / "run.txt"
    run.write_text("q1\tq1_c1\t0\t0.2\ttrue\n")
    subtask = "passage" if case.startswith("trec") else "main"
    result = CliRunner().invoke(
        leaderboard_group, ["score", "x", subtask, str(run), "--definition", str(definition)]
    )
    _clean_refusal(result, *named)


GOLD_FILES: dict[str, tuple[list[str], Callable[[Path], Path], tuple[str, ...]]] = {
    "cqa gold line": (
        ["semeval2016-task3", "A"],
        lambda d: _write(d / "fixed.relevancy", b"Q1\tQ1_C1\t1\t1\ttrue\nQ1\tQ1_C2\t2\n"),
        ("fixed.relevancy", "Line 2"),
    ),
    "cqa gold encoding": (
        ["semeval2016-task3", "A"],
        lambda d: _write(d / "fixed.relevancy", b"Q1\tQ1_C1\t1\t1\ttrue\n\xff\n"),
        ("fixed.relevancy", "UTF-8"),
    ),
    "trec qrels grade": (
        ["trec-car-2017", "passage", "--variant", "manual"],
        lambda d: _copy_bad_qrels(d / "manual.qrels"),
        ("manual.qrels", "Line 3", "x1"),
    ),
}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _copy_bad_qrels(path: Path) -> Path:
    shutil.copyfile(TREC / TREC_QRELS, path)
    _bad_grade(path)
    return path


@pytest.mark.parametrize("case", sorted(GOLD_FILES))
def test_set_gold_refuses_and_stores_no_version(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, case: str
) -> None:
    target, make, named = GOLD_FILES[case]
    golds = _count(app, GoldFile)
    result = runner.invoke(
        args=["leaderboard", "set-gold", *target[:2], str(make(tmp_path)), *target[2:]]
    )
    _clean_refusal(result, *named)
    assert _count(app, GoldFile) == golds


def test_set_gold_of_a_missing_file_is_a_usage_error(
    runner: FlaskCliRunner, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.relevancy"
    result = runner.invoke(args=["leaderboard", "set-gold", "semeval2016-task3", "A", str(missing)])
    assert result.exit_code == 2 and "nowhere.relevancy" in result.output
    assert isinstance(result.exception, SystemExit)


def test_score_with_a_definition_prints_every_problem(tmp_path: Path) -> None:
    """An unknown key, an unknown measure and a bad gold line: three lines, the first as before."""

    def spoil(folder: Path) -> None:
        _replace(folder / "task.toml", "[runs]", 'colour = "blue"\n[runs]')
        _replace(folder / "task.toml", '"Acc"]', '"Acc", "NDCG@x"]')
        _replace(folder / "gold.txt", "\ttrue\n", "\tmaybe\n")

    definition = _tiny(tmp_path / "task", spoil)
    run = tmp_path / "run.txt"
    run.write_text("q1\tq1_c1\t0\t0.2\ttrue\n")
    result = CliRunner().invoke(
        leaderboard_group, ["score", "x", "main", str(run), "--definition", str(definition)]
    )
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == f"Error: {definition}: the task definition was refused: colour: unknown key"
    assert lines[1].startswith(f"Error: {definition}: measures: unknown measure")
    assert "'NDCG@x'" in lines[1]
    assert lines[2].startswith(f"Error: {tmp_path / 'task' / 'gold.txt'}:1: subtask main (test):")
    assert "maybe" in lines[2] and len(lines) == 3
