"""``leaderboard significance`` on hosted tasks: pairs in table order, p-values, clusters, formats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from scipy import stats
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard.models import Run, Score
from tests.helpers.cli import invoke, json_of
from tests.security import compile_latex


def report(runner: FlaskCliRunner, *args: str) -> dict:  # type: ignore[type-arg]
    out: dict = json_of(runner, "significance", "example-sentiment", "A", *args)  # type: ignore[type-arg]
    return out


def test_randomization_on_macro_f1_orders_pairs_and_clusters(hosted: FlaskCliRunner) -> None:
    body = report(hosted, "--samples", "2000", "--seed", "3")
    assert body["measure"] == "macro-F1" and body["method"] == "randomization"
    assert (body["samples"], body["seed"], body["correction"]) == (2000, 3, "holm")
    runs = body["runs"]
    assert len(runs) == 5  # two primaries and three baselines, all ranked
    assert len(body["pairs"]) == 10
    # The oracle is first; against the "All positive" baseline no sample reaches its margin.
    oracle = runs[0]
    pair = next(p for p in body["pairs"] if p["a"] == oracle and "All positive" in p["b"])
    assert pair["diff"] > 0.5 and pair["p"] == pytest.approx(1 / 2001)
    # Every pair's a is above its b; p_adjusted ≥ p; significance follows alpha.
    for p in body["pairs"]:
        assert runs.index(p["a"]) < runs.index(p["b"])
        assert p["p_adjusted"] >= p["p"]
        assert p["significant"] == (p["p_adjusted"] < 0.05)
    assert [label for group in body["clusters"] for label in group] == runs
    assert body["clusters"][0][0] == oracle
    # The same seed gives the same numbers; another seed other p-values.
    assert report(hosted, "--samples", "2000", "--seed", "3") == body
    other = report(hosted, "--samples", "2000", "--seed", "4")
    assert [p["p"] for p in other["pairs"]] != [p["p"] for p in body["pairs"]]


def test_t_test_is_scipys_on_the_stored_per_item_values(app: Flask, hosted: FlaskCliRunner) -> None:
    body = report(hosted, "--measure", "Acc", "--method", "t-test", "--correction", "none")
    assert body["samples"] is None and body["seed"] is None
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        scores = session.scalars(
            select(Score).join(Run).where(Score.measure == "Acc", Score.current, Run.status == "active")
            .options(undefer(Score.per_query))
        ).all()  # fmt: skip
        values = {s.run_id: s.per_query for s in scores}
        labels = {r.id: r for r in session.scalars(select(Run)).all()}
        by_label = {}
        for run_id, per_query in values.items():
            run = labels[run_id]
            key = next(label for label in body["runs"] if (run.label or run.team.name) in label)
            by_label[key] = per_query
    for pair in body["pairs"]:
        a, b = by_label[pair["a"]], by_label[pair["b"]]
        x = np.array([a[i] for i in a])
        y = np.array([b[i] for i in a])
        if np.array_equal(x, y):
            assert pair["p"] == 1.0
        else:
            assert pair["p"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)


def test_formats_and_refusals(hosted: FlaskCliRunner, tmp_path: Path) -> None:
    md = invoke(
        hosted, "significance", "example-sentiment", "A", "--samples", "500", "--format", "md"
    )
    assert md.exit_code == 0 and "| A | B | A − B | p |" in md.output and "\n1. " in md.output
    # Named by the titles, not the slugs.
    assert md.output.startswith(
        "Significance of Example message polarity classification — Subtask A: message polarity "
        "— Test, "
    )
    csv = invoke(
        hosted, "significance", "example-sentiment", "A", "--samples", "500", "--format", "csv"
    )
    assert csv.output.splitlines()[0] == "a,b,diff,p,p_adjusted,significant,cluster_a,cluster_b"
    assert len(csv.output.splitlines()) == 11
    tex = invoke(
        hosted, "significance", "example-sentiment", "A", "--samples", "500", "--format", "latex"
    )
    assert tex.exit_code == 0 and r"\begin{tabular}" in tex.output
    assert (
        r"\caption{Example message polarity classification --- Subtask A: message polarity --- "
        "Test: adjusted p-values of"
    ) in tex.output
    compiled = compile_latex(tex.output, tmp_path, "significance")
    assert compiled.returncode == 0, compiled.stdout[-2000:]
    # Refused: a t-test of a corpus-level F1, an unknown measure, bad numbers; exit 1, a message.
    for args, message in (
        (("--method", "t-test"), "is not their mean"),
        (("--measure", "BLEU"), "has no measure 'BLEU'"),
        (("--samples", "0"), "samples must be between"),
        (("--alpha", "1.5"), "alpha must be between"),
    ):
        result = invoke(hosted, "significance", "example-sentiment", "A", *args)
        assert result.exit_code == 1, (args, result.output)
        assert message in result.output, (args, result.output)


def test_baselines_are_walked_in_rank_order_and_counted_apart(hosted: FlaskCliRunner) -> None:
    # The table prints the baselines below the runs; the analysis walks everything by the measure.
    body = report(hosted, "--samples", "500")
    values = [body["values"][str(run_id)] for run_id in body["run_ids"]]
    assert values == sorted(values, reverse=True)
    assert [label for group in body["clusters"] for label in group] == body["runs"]
    assert sorted(body["baselines"]) == sorted(
        label for label in body["runs"] if not label.startswith(("Aurora", "Borealis"))
    )
    assert len(body["baselines"]) == 3
