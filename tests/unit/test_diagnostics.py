"""Per-query best, median and worst over runs, and a run's queries sorted by shortfall."""

from __future__ import annotations

from leaderboard.scoring.diagnostics import compare, summarize


def test_best_median_worst_by_hand() -> None:
    runs = [{"q1": 0.2, "q2": 1.0}, {"q1": 0.6, "q2": 0.0}, {"q1": 0.4}]
    summary = summarize(runs)
    assert (summary["q1"].best, summary["q1"].median, summary["q1"].worst) == (0.6, 0.4, 0.2)
    assert (summary["q2"].best, summary["q2"].median, summary["q2"].worst) == (1.0, 0.5, 0.0)
    assert summary["q2"].runs == 2
    lower = summarize(runs, lower_is_better=True)
    assert (lower["q1"].best, lower["q1"].worst) == (0.2, 0.6)


def test_a_runs_queries_come_largest_shortfall_first() -> None:
    runs = [
        {"a": 0.9, "b": 0.1, "c": 0.5},
        {"a": 0.5, "b": 0.5, "c": 0.5},
        {"a": 0.1, "b": 0.9, "c": 0.5},
    ]
    summary = summarize(runs)
    rows = compare(runs[0], summary)
    assert [(r.query, round(r.difference, 9)) for r in rows] == [
        ("b", -0.4),
        ("c", 0.0),
        ("a", 0.4),
    ]
    assert rows[0].best == 0.9 and rows[0].median == 0.5
    # Lower is better: being above the median is the shortfall.
    rows = compare(runs[0], summarize(runs, lower_is_better=True), lower_is_better=True)
    assert [r.query for r in rows] == ["a", "c", "b"]
