"""``leaderboard score --json --per-query``: the values a measure is the mean of, when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from leaderboard.cli import leaderboard_group
from leaderboard.cli.offline import score_json
from leaderboard.formats.issues import Issue
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.families.base import Evaluation, MeasureResult, Verdict
from tests.runs import gold_lines, oracle_run

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


def test_the_command_prints_what_the_family_fills(tmp_path: Path) -> None:
    plain = _score(tmp_path, "--json")
    assert plain.exit_code == 0 and "per_query" not in json.loads(plain.output)
    result = _score(tmp_path, "--json", "--per-query")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    # CQA's MAP and MRR are means over questions; AvgRec, P, R, F1 and Acc are not.
    per_query = report["per_query"]
    assert set(per_query) == {"MAP", "MRR"}
    questions = [line[0] for line in gold_lines()]
    assert list(per_query["MAP"]) == list(dict.fromkeys(questions))
    # The oracle ranks a relevant candidate first wherever there is one; MAP is shown ×100.
    relevant = {line[0] for line in gold_lines() if line[4] == "true"}
    assert per_query["MAP"] == {q: 100.0 if q in relevant else 0.0 for q in per_query["MAP"]}
    assert per_query["MRR"] == per_query["MAP"]
    for m in ("MAP", "MRR"):
        mean = sum(per_query[m].values()) / len(per_query[m])
        assert mean == pytest.approx(report["measures"][m], rel=1e-12)


def test_per_query_without_json_is_a_usage_error(tmp_path: Path) -> None:
    result = _score(tmp_path, "--per-query")
    assert result.exit_code == 2 and "--json" in result.output


def test_an_undefined_measure_is_null_with_a_warning() -> None:
    scored = Evaluation(
        Verdict([], [], parsed=object()),
        {
            "MAP": MeasureResult(0.75, "0.7500"),
            "P": MeasureResult.undefined("the prediction is constant"),
        },
    )
    report = score_json(scored, SPECS)
    assert report["measures"] == {"MAP": 75.0, "P": None}
    assert report["official"] == {"MAP": "0.7500", "P": None}
    assert "notes" in report and report["notes"] == {}
    assert report["warnings"] == [
        {"line": None, "message": "P is undefined for this run: the prediction is constant"}
    ]


def test_the_command_names_each_bad_line_once(tmp_path: Path) -> None:
    lines = oracle_run().decode().splitlines()
    fields = lines[4].split("\t")
    fields[3] = "abc"
    lines[4] = "\t".join(fields)
    run = tmp_path / "run.txt"
    run.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), "--set", "test"]
    )
    assert result.exit_code == 1
    assert "error: line 5: score 'abc' is not a number.\n" in result.output
    assert "Line 5" not in result.output
