"""The historical SemEval-2016 Task 3 subtask A primaries analysed end to end on MAP.

The 12 primaries and the baselines are imported as the organizers would; the analysis' p-values
are checked against an independent sign-flip test on the stored per-question AP values, its
intervals against scipy's bootstrap, and one run's per-question chart against the values.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from scipy import stats
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard import charts
from leaderboard.models import Score
from leaderboard.scoring.diagnostics import compare, summarize
from tests.shared_data import shared_path

pytestmark = pytest.mark.fidelity
SAMPLES = 4000


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def sign_flip_p(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> float:
    """Return an independent paired randomization p-value of mean(a) − mean(b)."""
    rng = np.random.RandomState(seed)
    d = a - b
    flips = rng.choice([-1.0, 1.0], size=(samples, len(d)))
    null = np.abs((flips * d).mean(axis=1))
    return float((np.count_nonzero(null >= abs(d.mean()) - 1e-9) + 1) / (samples + 1))


def map_per_question(app: Flask) -> dict[int, Any]:
    """Return each run's current per-question AP values (of MAP), by run id."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        scores = session.scalars(
            select(Score).where(Score.measure == "MAP", Score.current)
            .options(undefer(Score.per_query))
        ).all()  # fmt: skip
        return {s.run_id: s.per_query for s in scores}


def test_subtask_a_primaries_on_map(app: Flask, runner: FlaskCliRunner) -> None:
    submissions = shared_path("semeval2016-task3", "submissions")
    result = invoke(runner, "import-runs", "semeval2016-task3", "A", "--lenient", str(submissions))
    assert result.exit_code == 0, result.output
    assert invoke(runner, "add-baselines", "semeval2016-task3", "A").exit_code == 0
    result = invoke(
        runner, "significance", "semeval2016-task3", "A", "--samples", str(SAMPLES), "--seed", "1"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["measure"] == "MAP"
    runs = report["runs"]
    assert runs[0] == "Kelp-primary"  # the official winner, 79.19 MAP
    assert all("primary" in label or "Baseline" in label for label in runs)

    per_run = map_per_question(app)
    by_label = dict(zip(runs, (per_run[i] for i in report["run_ids"]), strict=True))
    questions = list(by_label[runs[0]])
    assert len(questions) == 327
    values = {label: np.array([v[q] for q in questions]) for label, v in by_label.items()}

    # Every pair's p agrees with an independent sign-flip test within Monte Carlo error.
    for pair in report["pairs"]:
        expected = sign_flip_p(values[pair["a"]], values[pair["b"]], SAMPLES, 7)
        error = math.sqrt(max(expected * (1 - expected), 1e-3) / SAMPLES)
        assert abs(pair["p"] - expected) <= 5 * math.sqrt(2) * error + 2 / (SAMPLES + 1), pair
        # MAP is shown in percent: the difference too.
        expected = 100 * (values[pair["a"]].mean() - values[pair["b"]].mean())
        assert pair["diff"] == pytest.approx(expected)
    assert [label for group in report["clusters"] for label in group] == runs
    assert len(report["clusters"]) >= 2  # KeLP and the random baseline are not one cluster

    # Intervals agree with scipy's percentile bootstrap on the per-question values.
    for label, run_id in zip(runs, report["run_ids"], strict=True):
        low, high = report["intervals"][str(run_id)]["MAP"]
        ref = stats.bootstrap(
            (100 * values[label],),
            np.mean,
            n_resamples=SAMPLES,
            method="percentile",
            random_state=3,
        ).confidence_interval
        width = ref.high - ref.low
        assert low == pytest.approx(ref.low, abs=0.08 * width), label
        assert high == pytest.approx(ref.high, abs=0.08 * width), label

    # One run's per-question chart: its values against the median of the ranked runs.
    summary = summarize([by_label[label] for label in runs])
    rows = compare(by_label[runs[0]], summary)
    assert len(rows) == 327
    differences = [r.difference for r in rows]
    assert differences == sorted(differences)
    median_q = float(np.median([values[label][0] for label in runs]))
    assert next(r for r in rows if r.query == questions[0]).median == pytest.approx(median_q)
    svg = charts.difference_chart([r.query for r in rows], differences, measure="AP")
    assert svg.startswith(b"<?xml") and b"AP \xe2\x88\x92 median of runs" in svg


def twelve_digits(values: np.ndarray) -> np.ndarray:
    """Return values to 12 significant digits through numpy's own scientific formatting."""
    return np.array([float(np.format_float_scientific(v, precision=11)) for v in values])


def test_every_method_reports_in_the_tables_scale(app: Flask, runner: FlaskCliRunner) -> None:
    submissions = shared_path("semeval2016-task3", "submissions")
    result = invoke(runner, "import-runs", "semeval2016-task3", "A", "--lenient", str(submissions))
    assert result.exit_code == 0, result.output
    table = app.test_client().get("/tasks/semeval2016-task3/A/results.json").get_json()
    cells = {r["label"]: r["cells"]["MAP"]["value"] for r in table["rows"] if r["cells"].get("MAP")}
    # The pair: the table shows 79.19 and 77.66 MAP.
    assert round(cells["Kelp-primary"], 2) == 79.19 and round(cells["ConvKN-primary"], 2) == 77.66

    reports = {}
    for method in ("randomization", "bootstrap", "t-test", "wilcoxon"):
        args = ["--method", method, "--samples", "200", "--correction", "none"]
        result = invoke(runner, "significance", "semeval2016-task3", "A", *args)
        assert result.exit_code == 0, result.output
        report = reports[method] = json.loads(result.output)
        ids = dict(zip(report["runs"], report["run_ids"], strict=True))
        for pair in report["pairs"]:
            expected = cells[pair["a"]] - cells[pair["b"]]
            assert pair["diff"] == pytest.approx(expected, rel=1e-12, abs=1e-12), (method, pair)
        for label, run_id in ids.items():
            assert report["values"][str(run_id)] == pytest.approx(cells[label], rel=1e-12)
            low, high = report["intervals"][str(run_id)]["MAP"]
            assert low <= cells[label] <= high and high - low < 10, (method, label)
        pair = next(
            p for p in report["pairs"] if (p["a"], p["b"]) == ("Kelp-primary", "ConvKN-primary")
        )
        assert format(pair["diff"], ".2f") == "1.53"

    # The exports print the same differences.
    for fmt in ("csv", "md"):
        args = ["--method", "t-test", "--correction", "none", "--format", fmt]
        result = invoke(runner, "significance", "semeval2016-task3", "A", *args)
        assert result.exit_code == 0, result.output
        pair = next(
            p
            for p in reports["t-test"]["pairs"]
            if (p["a"], p["b"]) == ("Kelp-primary", "ConvKN-primary")
        )
        shown = repr(pair["diff"]) if fmt == "csv" else format(pair["diff"], ".6g")
        assert shown.startswith("1.53") and shown in result.output, fmt

    # The Wilcoxon test ranks the per-question differences to 12 significant digits.
    per_run = map_per_question(app)
    ids = dict(zip(reports["wilcoxon"]["runs"], reports["wilcoxon"]["run_ids"], strict=True))
    kelp, convkn = per_run[ids["Kelp-primary"]], per_run[ids["ConvKN-primary"]]
    raw = np.array([kelp[q] - convkn[q] for q in kelp])
    pair = next(
        p
        for p in reports["wilcoxon"]["pairs"]
        if (p["a"], p["b"]) == ("Kelp-primary", "ConvKN-primary")
    )
    assert format(pair["p"], ".4f") == "0.2416"
    assert pair["p"] == pytest.approx(stats.wilcoxon(twelve_digits(raw)).pvalue, rel=1e-12)
    # Values rounded, then subtracted, leave float noise in the differences: other ranks.
    a, b = (twelve_digits(np.array([v[q] for q in kelp])) for v in (kelp, convkn))
    assert format(stats.wilcoxon(a, b).pvalue, ".4f") == "0.2454"
    pair = next(
        p
        for p in reports["t-test"]["pairs"]
        if (p["a"], p["b"]) == ("Kelp-primary", "ConvKN-primary")
    )
    assert pair["p"] == pytest.approx(stats.ttest_1samp(twelve_digits(raw), 0).pvalue, rel=1e-9)


def test_per_question_diagnostics_are_in_the_tables_scale(
    app: Flask, runner: FlaskCliRunner
) -> None:
    from leaderboard.models import Run
    from leaderboard.services.results.diagnostics import run_diagnostics
    from leaderboard.worker.jobs import summarize_set

    submissions = shared_path("semeval2016-task3", "submissions")
    result = invoke(runner, "import-runs", "semeval2016-task3", "A", "--lenient", str(submissions))
    assert result.exit_code == 0, result.output
    ext = app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        score = session.scalars(
            select(Score).where(Score.measure == "MAP", Score.current)
            .options(undefer(Score.per_query))
        ).first()  # fmt: skip
        assert score is not None
        run = session.get(Run, score.run_id)
        assert run is not None
        assert summarize_set(session, ext["store"], run.eval_set_id) >= 1
        found = run_diagnostics(session, ext["store"], run, "MAP")
        assert len(found.rows) == 327
        # AP per question is stored as a fraction; the table shows MAP in percent, so do these.
        for row in found.rows:
            assert row.value == pytest.approx(100 * score.per_query[row.query], rel=1e-12)
            assert row.difference == pytest.approx(row.value - row.median, abs=1e-9)
            assert 0 <= row.median <= row.best <= 100
        assert max(r.value for r in found.rows) > 1
