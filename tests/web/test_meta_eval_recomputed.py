"""``leaderboard meta-eval`` on the regression example: Spearman recomputed on each half, MSE lower.

The expected numbers are computed here from scratch: the ranked runs' stored predictions and
the gold file, each half's measure by scipy (or numpy), scipy's Kendall tau-b between the halves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from scipy import stats
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard.models import Run
from leaderboard.scoring.meta_evaluation import half_masks
from tests.helpers.cli import invoke
from tests.runs import api_upload, make_participant, open_phase, token_for

REGRESSION = Path(__file__).resolve().parents[2] / "docs" / "examples" / "regression"
PATH = "/api/v1/tasks/example-change/graded/runs"


def gold() -> tuple[list[str], np.ndarray]:
    """Return the example's words and gold values, in file order."""
    text = (REGRESSION / "gold.tsv").read_text()
    lines = [x.split("\t") for x in text.splitlines() if x and not x.startswith("#")]
    pairs = [(w, float(v)) for w, v in lines]
    return [w for w, _ in pairs], np.array([v for _, v in pairs])


@pytest.fixture
def change(app: Flask, runner: FlaskCliRunner) -> FlaskCliRunner:
    """Host the regression example with three teams' runs of growing noise and the baselines."""
    assert invoke(runner, "add-task", str(REGRESSION / "task.toml")).exit_code == 0
    open_phase(app, "example-change", "graded")
    words, truth = gold()
    rng = np.random.default_rng(4)
    for k, (team, noise) in enumerate((("Aurora", 0.05), ("Borealis", 0.15), ("Cirrus", 0.3))):
        email = f"p{k}@example.org"
        make_participant(app, team, email)
        predicted = truth + rng.normal(0, noise, len(truth))
        run = "".join(f"{w}\t{v:.6f}\n" for w, v in zip(words, predicted, strict=True)).encode()
        resp = api_upload(app.test_client(), token_for(app, email), run, path=PATH)
        assert resp.status_code == 201, resp.get_json()
    assert invoke(runner, "add-baselines", "example-change", "graded").exit_code == 0
    return runner


def meta(runner: FlaskCliRunner, *args: str) -> dict:  # type: ignore[type-arg]
    result = invoke(runner, "meta-eval", "example-change", "graded", "--splits", "60", *args)
    assert result.exit_code == 0, result.output
    out: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return out


def expected(
    app: Flask, runner: FlaskCliRunner, measure: str, on_half: Callable[..., float], lower: bool
) -> tuple[int, float, float, float]:
    """Return the runs, tau_mean, tau_p05 and top_stable computed here for 60 splits, seed 0."""
    analysed = invoke(
        runner, "significance", "example-change", "graded", "--measure", measure,
        "--samples", "100",
    )  # fmt: skip
    assert analysed.exit_code == 0, analysed.output
    run_ids = json.loads(analysed.stdout)["run_ids"]
    words, truth = gold()
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        runs = session.scalars(
            select(Run).where(Run.id.in_(run_ids)).options(undefer(Run.item_values))
        ).all()
        predicted = {r.id: np.array([float(r.item_values[w]) for w in words]) for r in runs}
    taus, tops = [], []
    for mask in np.concatenate(list(half_masks(0, 60, len(words)))):
        halves = [
            np.array([on_half(truth[h], predicted[i][h]) for i in run_ids]) for h in (mask, ~mask)
        ]
        a, b = (-h if lower else h for h in halves)
        taus.append(stats.kendalltau(a, b).statistic)
        tops.append(a.argmax() == b.argmax())
    return len(run_ids), float(np.mean(taus)), float(np.percentile(taus, 5)), float(np.mean(tops))


def test_spearman_is_recomputed_on_each_half(app: Flask, change: FlaskCliRunner) -> None:
    before = meta(change)
    # The constant "Gold mean" baseline has no Spearman: not ranked by it.
    assert before["runs"] == 4 and before["units"] == 40
    assert before["pairs_significant"] is None
    runs, tau_mean, tau_p05, top = expected(
        app, change, "Spearman", lambda t, p: stats.spearmanr(t, p).statistic, lower=False
    )
    body = meta(change)
    assert body["runs"] == runs
    assert body["tau_mean"] == pytest.approx(tau_mean, rel=1e-12)
    assert body["tau_p05"] == pytest.approx(tau_p05, rel=1e-12)
    assert body["top_stable"] == top and body["pairs_significant"] is not None


def test_a_lower_is_better_measure_ranks_the_lowest_first(
    app: Flask, change: FlaskCliRunner
) -> None:
    # An analysis of the official measure says nothing of MSE's pairs.
    assert invoke(change, "significance", "example-change", "graded").exit_code == 0
    assert meta(change, "--measure", "MSE")["pairs_significant"] is None
    runs, tau_mean, tau_p05, top = expected(
        app, change, "MSE", lambda t, p: float(np.mean((t - p) ** 2)), lower=True
    )
    body = meta(change, "--measure", "MSE")
    assert body["runs"] == runs == 5
    assert body["tau_mean"] == pytest.approx(tau_mean, rel=1e-12)
    assert body["tau_p05"] == pytest.approx(tau_p05, rel=1e-12)
    assert body["top_stable"] == top
    # The analysis of MSE by name gives its pairs.
    assert body["pairs_significant"] is not None
