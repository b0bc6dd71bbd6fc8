"""The historical SemEval-2016 Task 3 subtask A primaries analysed end to end on MAP.

The 12 primaries and the baselines are imported as the organizers would; the analysis' p-values
are checked against an independent sign-flip test on the stored per-question AP values, its
intervals against scipy's bootstrap, and one run's per-question chart against the values.
"""

from __future__ import annotations

import json
import math

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

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        scores = session.scalars(
            select(Score).where(Score.measure == "MAP", Score.current)
            .options(undefer(Score.per_query))
        ).all()  # fmt: skip
        per_run = {s.run_id: s.per_query for s in scores}
    by_label = dict(zip(runs, (per_run[i] for i in report["run_ids"]), strict=True))
    questions = list(by_label[runs[0]])
    assert len(questions) == 327
    values = {label: np.array([v[q] for q in questions]) for label, v in by_label.items()}

    # Every pair's p agrees with an independent sign-flip test within Monte Carlo error.
    for pair in report["pairs"]:
        expected = sign_flip_p(values[pair["a"]], values[pair["b"]], SAMPLES, 7)
        error = math.sqrt(max(expected * (1 - expected), 1e-3) / SAMPLES)
        assert abs(pair["p"] - expected) <= 5 * math.sqrt(2) * error + 2 / (SAMPLES + 1), pair
        assert pair["diff"] == pytest.approx(values[pair["a"]].mean() - values[pair["b"]].mean())
    assert [label for group in report["clusters"] for label in group] == runs
    assert len(report["clusters"]) >= 2  # KeLP and the random baseline are not one cluster

    # Intervals agree with scipy's percentile bootstrap on the per-question values.
    for label, run_id in zip(runs, report["run_ids"], strict=True):
        low, high = report["intervals"][str(run_id)]["MAP"]
        ref = stats.bootstrap(
            (values[label],), np.mean, n_resamples=SAMPLES, method="percentile", random_state=3
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
