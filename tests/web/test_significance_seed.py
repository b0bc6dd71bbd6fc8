"""``leaderboard significance`` on the seed tasks' corpus-level measures: STS Pearson, CQA AvgRec.

Runs are uploaded through the API and baselines added, so what analysis reads is what the one
evaluation pipeline stored (STS predictions per pair, CQA counts per question); a run stored
without them (scored before they were kept) is refused until the set is re-scored.
"""

from __future__ import annotations

import json
import random

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select, update

from leaderboard.models import Run
from tests.helpers.sts import API_EN, EN_SETS, gold_as_output, noisy_output
from tests.runs import api_upload, gold_lines, make_participant, oracle_run, token_for

CQA_MEASURES = ("MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc")


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def report(runner: FlaskCliRunner, *args: str) -> dict:  # type: ignore[type-arg]
    result = invoke(runner, "significance", *args)
    assert result.exit_code == 0, result.output
    out: dict = json.loads(result.output)  # type: ignore[type-arg]
    return out


def refused(runner: FlaskCliRunner, *args: str) -> str:
    result = invoke(runner, "significance", *args)
    assert result.exit_code == 1, result.output
    return str(result.output)


@pytest.fixture
def sts(app: Flask, client: FlaskClient, runner: FlaskCliRunner) -> FlaskCliRunner:
    """Host STS 2016 English with a gold-valued run, a noisy one and the cosine baseline."""
    for team, email, files in (
        ("Aurora", "alice@example.org", {s: gold_as_output(s) for s in EN_SETS}),
        ("Borealis", "bob@example.org", {s: noisy_output(s) for s in EN_SETS}),
    ):
        make_participant(app, team, email)
        resp = api_upload(client, token_for(app, email), files, path=API_EN, slot="run1")
        assert resp.status_code == 201, resp.get_json()
    assert invoke(runner, "add-baselines", "semeval2016-task1", "en").exit_code == 0
    return runner


def test_sts_overall_and_parts_are_analysed(sts: FlaskCliRunner) -> None:
    body = report(sts, "semeval2016-task1", "en", "--samples", "400", "--seed", "2")
    assert body["measure"] == "ALL" and body["method"] == "randomization"
    assert len(body["runs"]) == 3 and len(body["pairs"]) == 3
    # The gold-valued run (r = 1 on every part) is significantly above both others.
    first = body["runs"][0]
    for pair in body["pairs"]:
        if pair["a"] == first:
            assert pair["diff"] > 0.05 and pair["p"] == pytest.approx(1 / 401), pair
    # Every run gets an interval on the overall and on every part.
    for run_id in body["run_ids"]:
        intervals = body["intervals"][str(run_id)]
        assert set(intervals) == {"ALL", *EN_SETS}
        value = body["values"][str(run_id)]
        low, high = intervals["ALL"]
        assert low <= value + 1e-12 and value - 1e-12 <= high
    part = report(sts, "semeval2016-task1", "en", "--measure", "headlines", "--method",
                  "bootstrap", "--samples", "300")  # fmt: skip
    assert part["measure"] == "headlines" and len(part["pairs"]) == 3
    # Pearson is not a mean over pairs: the per-query tests refuse it.
    assert "is not their mean" in refused(sts, "semeval2016-task1", "en", "--method", "t-test")


def test_sts_runs_scored_before_predictions_were_kept_need_a_re_score(
    app: Flask, sts: FlaskCliRunner
) -> None:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.execute(update(Run).values(item_values=None))
        session.commit()
    message = refused(sts, "semeval2016-task1", "en", "--samples", "100")
    assert "ALL cannot be resampled" in message and "re-score" in message
    result = invoke(sts, "rescore", "semeval2016-task1", "en")
    assert result.exit_code == 0, result.output
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        stored = session.scalars(select(Run.item_values)).all()
        assert all(values is not None and len(values) == 1186 for values in stored)
    assert len(report(sts, "semeval2016-task1", "en", "--samples", "100")["pairs"]) == 3


def noisy_cqa_run(seed: int) -> bytes:
    """Return a run whose scores and labels follow the gold with noise."""
    rng = random.Random(seed)
    lines = []
    for q, c, _pos, _ir, label in gold_lines():
        score = (1.0 if label == "true" else 0.0) + rng.gauss(0, 0.7)
        lines.append(f"{q}\t{c}\t0\t{score:.4f}\t{'true' if score > 0.5 else 'false'}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def cqa(app: Flask, client: FlaskClient, runner: FlaskCliRunner) -> FlaskCliRunner:
    """Host CQA 2016 subtask A with an oracle, a noisy run and the four baselines."""
    for team, email, run in (
        ("Aurora", "alice@example.org", oracle_run()),
        ("Borealis", "bob@example.org", noisy_cqa_run(3)),
    ):
        make_participant(app, team, email)
        resp = api_upload(client, token_for(app, email), run)
        assert resp.status_code == 201, resp.get_json()
    assert invoke(runner, "add-baselines", "semeval2016-task3", "A").exit_code == 0
    return runner


def test_cqa_avgrec_and_the_label_measures_are_analysed(cqa: FlaskCliRunner) -> None:
    body = report(cqa, "semeval2016-task3", "A", "--measure", "AvgRec", "--samples", "400")
    # The oracle, the noisy run, the IR and random baselines (the others show no AvgRec).
    assert body["measure"] == "AvgRec" and len(body["runs"]) == 4
    assert body["values"][str(body["run_ids"][0])] == pytest.approx(100.0)  # the oracle, in %
    # Intervals on every measure a row shows: all seven for the participants' runs.
    assert set(body["intervals"][str(body["run_ids"][0])]) == set(CQA_MEASURES)
    for run_id in body["run_ids"]:
        assert "AvgRec" in body["intervals"][str(run_id)]
    for measure in ("P", "F1", "Acc"):
        assert report(cqa, "semeval2016-task3", "A", "--measure", measure, "--samples", "200")
    # AvgRec is micro-averaged, P, R, F1 and Acc are over all rows: no per-query tests.
    for measure in ("AvgRec", "F1"):
        for method in ("t-test", "wilcoxon"):
            message = refused(
                cqa, "semeval2016-task3", "A", "--measure", measure, "--method", method
            )
            assert f"The {method} tests per-query values; {measure} is not their mean." in message
    # MAP is a mean over questions: the t-test stays available.
    body = report(cqa, "semeval2016-task3", "A", "--method", "t-test")
    assert body["measure"] == "MAP" and body["samples"] is None


def test_the_public_chart_shows_values_on_the_tables_scale(app: Flask, cqa: FlaskCliRunner) -> None:
    import csv
    import io

    body = report(cqa, "semeval2016-task3", "A", "--samples", "300")
    public = app.test_client()
    numbers = public.get("/tasks/semeval2016-task3/A/analysis/measure.csv").get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(numbers)))
    assert rows[0] == ["run", "MAP", "ci_low", "ci_high", "cluster"]
    table = public.get("/tasks/semeval2016-task3/A/results.json").get_json()
    shown = {r["label"]: r["cells"]["MAP"] for r in table["rows"] if r["cells"].get("MAP")}
    # MAP is stored as a fraction and shown ×100: the chart's numbers are the table's.
    for label, value, low, high, _cluster in rows[1:]:
        assert float(value) == pytest.approx(shown[label]["value"])
        assert [float(low), float(high)] == pytest.approx(shown[label]["ci"])
        run_id = str(body["run_ids"][body["runs"].index(label)])
        assert float(value) == pytest.approx(body["values"][run_id])


def test_an_analysis_stored_in_the_old_scale_is_read_in_the_tables(
    app: Flask, cqa: FlaskCliRunner
) -> None:
    import csv
    import io

    from leaderboard.models import Job

    body = report(cqa, "semeval2016-task3", "A", "--samples", "300")
    assert body["scale"] == "table"
    # The same analysis as stored before its numbers were in the table's scale: CQA's measures
    # as fractions, except MRR, which is stored ×100 already.
    old = {
        **{k: v for k, v in body.items() if k != "scale"},
        "values": {k: v / 100 for k, v in body["values"].items()},
        "pairs": [{**p, "diff": p["diff"] / 100} for p in body["pairs"]],
        "intervals": {
            run: {
                key: [x / (1 if key == "MRR" else 100) for x in pair]
                for key, pair in by_key.items()
            }
            for run, by_key in body["intervals"].items()
        },  # fmt: skip
    }
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.execute(update(Job).values(report=old))
        session.commit()
    public = app.test_client()
    table = public.get("/tasks/semeval2016-task3/A/results.json").get_json()
    ids = dict(zip(body["runs"], body["run_ids"], strict=True))
    checked = 0
    for row in table["rows"]:
        for key, cell in row["cells"].items():
            if cell and cell.get("ci") and row["label"] in ids:
                expected = body["intervals"][str(ids[row["label"]])][key]
                assert cell["ci"] == pytest.approx(expected, rel=1e-12), (row["label"], key)
                checked += 1
    assert checked >= len(body["runs"]) * 2
    chart = public.get("/tasks/semeval2016-task3/A/analysis/measure.csv").get_data(as_text=True)
    lines = list(csv.reader(io.StringIO(chart)))[1:]
    assert len(lines) == len(body["runs"])
    for label, value, low, high, _cluster in lines:
        run_id = str(ids[label])
        assert float(value) == pytest.approx(body["values"][run_id], rel=1e-12)
        assert [float(low), float(high)] == pytest.approx(body["intervals"][run_id]["MAP"])
