"""``leaderboard score --json --per-query``: the values a measure is the mean of, when asked."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leaderboard.cli import leaderboard_group
from leaderboard.cli.offline import score_json
from leaderboard.formats.issues import Issue
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.families.base import Evaluation, MeasureResult, Verdict
from leaderboard.tasks.families.cqa import CqaFamily
from tests.runs import oracle_run

SPECS = [MeasureSpec("MAP", "MAP", scale=100), MeasureSpec("P", "P", scale=100)]
SCORED = Evaluation(
    Verdict([], [], parsed=object()),
    {
        "MAP": MeasureResult(0.75, "0.7500", per_query={"Q1": 0.5, "Q2": 1.0}),
        "P": MeasureResult(0.5, "0.5000"),
    },
)


def test_per_query_values_only_when_asked() -> None:
    assert "per_query" not in score_json(SCORED, SPECS)
    report = score_json(SCORED, SPECS, per_query=True)
    # The table's scale, as in "measures"; P is not a mean over queries, so it has none.
    assert report["per_query"] == {"MAP": {"Q1": 50.0, "Q2": 100.0}}
    assert report["measures"] == {"MAP": 75.0, "P": 50.0}


def test_a_rejected_run_has_no_per_query_values() -> None:
    rejected = Evaluation(Verdict([Issue(1, "Line 1: bad")], []), None)
    assert score_json(rejected, SPECS, per_query=True)["per_query"] == {}
    assert "per_query" not in score_json(rejected, SPECS)


def _score(tmp_path: Path, *options: str):  # type: ignore[no-untyped-def]
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    return CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), *options]
    )


def test_the_command_prints_what_the_family_fills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _score(tmp_path, "--json")
    assert plain.exit_code == 0 and "per_query" not in json.loads(plain.output)
    scored = CqaFamily.score

    def with_per_query(self: CqaFamily, parsed: Any, gold: Any) -> dict[str, MeasureResult]:
        results = scored(self, parsed, gold)
        results["MAP"] = replace(results["MAP"], per_query={"Q268": 1.0, "Q269": 0.5})
        return results

    monkeypatch.setattr(CqaFamily, "score", with_per_query)
    result = _score(tmp_path, "--json", "--per-query")
    assert result.exit_code == 0, result.output
    # MAP is stored as a fraction and shown ×100.
    assert json.loads(result.output)["per_query"] == {"MAP": {"Q268": 100.0, "Q269": 50.0}}


def test_per_query_without_json_is_a_usage_error(tmp_path: Path) -> None:
    result = _score(tmp_path, "--per-query")
    assert result.exit_code == 2 and "--json" in result.output
