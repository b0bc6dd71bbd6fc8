"""A freeze stores the analysis of the frozen table; verify recomputes it and reports differences."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select, text

from leaderboard.clock import FixedClock
from leaderboard.models import FrozenTable
from tests.conftest import AppFactory
from tests.runs import api_upload, make_participant, open_phase, token_for

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SENTIMENT = EXAMPLES / "classification"
PATH = "/api/v1/tasks/example-sentiment/A/runs"
FLIP = {"positive": "negative", "negative": "neutral", "neutral": "positive"}


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def gold_items() -> list[list[str]]:
    return [
        line.split("\t")
        for line in (SENTIMENT / "gold.tsv").read_text().splitlines()
        if line and not line.startswith("#")
    ]


def noisy_run(every: int) -> bytes:
    """Return a run that mislabels every ``every``-th item of the gold."""
    return "".join(
        f"{i}\t{FLIP[label] if k % every == 0 else label}\n"
        for k, (i, label) in enumerate(gold_items())
    ).encode()


@pytest.fixture
def app(make_app: AppFactory) -> Flask:
    return make_app(clock=FixedClock(datetime(2016, 1, 20, 12, tzinfo=UTC)))


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


def host(app: Flask, runner: FlaskCliRunner, *, baselines: bool = True) -> None:
    """Host the sentiment example with two on-time primaries (and the three baselines)."""
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    open_phase(app, "example-sentiment", "A", "test")
    client = app.test_client()
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    for email, run in (("alice@example.org", noisy_run(50)), ("bob@example.org", noisy_run(3))):
        resp = api_upload(client, token_for(app, email), run, path=PATH)
        assert resp.status_code == 201, resp.get_json()
    if baselines:
        assert invoke(runner, "add-baselines", "example-sentiment", "A").exit_code == 0


def add_late_run(app: Flask, runner: FlaskCliRunner) -> None:
    """Close the phase before the clock's time, open late runs, and upload a late primary."""
    phase = invoke(
        runner,
        *("phase", "example-sentiment", "A", "test"),
        *("--start", "2016-01-01T00:00:00Z", "--end", "2016-01-10T00:00:00Z", "--late"),
    )
    assert phase.exit_code == 0, phase.output
    make_participant(app, "Cirrus", "carl@example.org")
    late = api_upload(
        app.test_client(), token_for(app, "carl@example.org"), noisy_run(7), path=PATH
    )
    assert late.status_code == 201 and late.get_json()["late"] is True


def significance(runner: FlaskCliRunner, *args: str) -> dict[str, Any]:
    result = invoke(runner, "significance", "example-sentiment", "A", *args)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.output)
    return out


def snapshot(app: Flask) -> FrozenTable:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        found = session.scalar(select(FrozenTable))
        assert found is not None
        session.expunge(found)
        return found


def table(runner: FlaskCliRunner, *args: str) -> dict[str, Any]:
    result = invoke(runner, "table", "example-sentiment", "A", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.output)
    return out


def test_freeze_analyses_the_official_table_as_the_current_analysis_was_made(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    add_late_run(app, runner)
    live = significance(runner, "--samples", "2000", "--seed", "5")
    assert "Cirrus-primary" in live["runs"] and len(live["runs"]) == 6

    frozen = invoke(runner, "freeze", "example-sentiment", "A")
    assert frozen.exit_code == 0, frozen.output
    assert "Analysis frozen with it (randomization, 2,000 samples, seed 5; holm-adjusted" in (
        frozen.output
    )
    analysis = snapshot(app).manifest["analysis"]
    # The frozen table's own runs: the late run is not in the official ranking.
    assert analysis["runs"] == [r for r in live["runs"] if r != "Cirrus-primary"]
    assert (analysis["method"], analysis["samples"], analysis["seed"]) == ("randomization", 2000, 5)
    assert len(analysis["pairs"]) == 10
    # Every pair is tested on the same samples, so a pair's raw p-value does not depend on the
    # other runs; Holm's adjustment does (fewer pairs, smaller or equal adjusted p).
    live_pairs = {(p["a"], p["b"]): p for p in live["pairs"]}
    for pair in analysis["pairs"]:
        assert pair["p"] == live_pairs[(pair["a"], pair["b"])]["p"]
        assert pair["p_adjusted"] <= live_pairs[(pair["a"], pair["b"])]["p_adjusted"]
    assert len(analysis["clusters"]) >= 2

    # The official table shows the frozen clusters and intervals; the live table keeps its own.
    official = table(runner, "--official")
    cluster_of = {label: n for n, group in enumerate(analysis["clusters"], 1) for label in group}
    ranked = [r for r in official["rows"] if r["label"] in cluster_of]
    assert len(ranked) == 5
    for row in ranked:
        assert row["cluster"] == cluster_of[row["label"]]
        run_id = str(analysis["run_ids"][analysis["runs"].index(row["label"])])
        low, high = analysis["intervals"][run_id]["macro-F1"]
        # macro-F1 is shown as stored (scale 1).
        assert row["cells"]["macro-F1"]["ci"] == pytest.approx([low, high])
        assert low <= row["cells"]["macro-F1"]["value"] <= high
    latex = invoke(runner, "table", "example-sentiment", "A", "--official", "--format", "latex")
    body = latex.output.split("\\midrule", 1)[1]
    assert body.count("\\midrule") == len(analysis["clusters"]) - 1
    # A freeze changes no score: the live analysis stays current and keeps the late run.
    live_table = table(runner)
    late_row = next(r for r in live_table["rows"] if r["label"] == "Cirrus-primary")
    assert late_row["cluster"] is not None

    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output
    assert "its analysis recomputes to the same p-values, clusters and intervals" in (
        verified.output
    )


def test_freeze_without_a_current_analysis_takes_the_defaults(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    analysis = snapshot(app).manifest["analysis"]
    assert (analysis["method"], analysis["samples"], analysis["seed"]) == (
        "randomization",
        10_000,
        0,
    )
    assert (analysis["alpha"], analysis["correction"], analysis["measure"]) == (
        0.05,
        "holm",
        "macro-F1",
    )
    # The same as the significance command on the same runs with the same defaults.
    again = significance(runner)
    assert again["pairs"] == analysis["pairs"] and again["clusters"] == analysis["clusters"]
    assert again["intervals"] == analysis["intervals"]


def reseal(app: Flask, change: Any) -> None:
    """Change a snapshot's manifest or table and store it with a matching hash (a forgery).

    The database refuses changes to frozen tables, so the forger first drops that trigger.
    """
    from leaderboard.services.freeze.core import _canonical, _sha256

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(
                text("ALTER TABLE frozen_tables DISABLE TRIGGER frozen_tables_immutable")
            )
        else:
            session.execute(text("DROP TRIGGER frozen_tables_no_update"))
        found = session.scalar(select(FrozenTable))
        assert found is not None
        manifest = json.loads(json.dumps(found.manifest))
        frozen_table = json.loads(json.dumps(found.table))
        change(manifest, frozen_table)
        found.manifest, found.table = manifest, frozen_table
        found.manifest_sha256 = _sha256(
            _canonical({"manifest": manifest, "table": frozen_table, "renders": found.renders})
        )
        session.commit()


def test_verify_reports_a_frozen_analysis_that_does_not_recompute(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A", "--set", "test").exit_code == 0
    first = snapshot(app).manifest["analysis"]["pairs"][0]

    def forge_p(manifest: dict[str, Any], _table: dict[str, Any]) -> None:
        manifest["analysis"]["pairs"][0]["p"] = 0.5

    reseal(app, forge_p)
    result = invoke(runner, "verify", "example-sentiment", "A")
    assert result.exit_code == 1
    assert (
        f"DIFFERENCE: analysis: p of {first['a']} / {first['b']} is {first['p']!r}, "
        "the snapshot says 0.5"
    ) in result.output


def test_verify_reports_a_frozen_table_whose_clusters_were_changed(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0

    def forge_cluster(_manifest: dict[str, Any], frozen_table: dict[str, Any]) -> None:
        ranked = [r for r in frozen_table["rows"] if r.get("cluster") is not None]
        ranked[-1]["cluster"] = 99

    reseal(app, forge_cluster)
    result = invoke(runner, "verify", "example-sentiment", "A")
    assert result.exit_code == 1
    assert "the table rebuilt from the re-scored runs differs from the frozen table" in (
        result.output
    )


def test_a_freeze_of_one_ranked_run_says_why_it_has_no_analysis(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner, baselines=False)
    # Withdraw Borealis' run: one ranked run is left, which nothing can be compared with.
    client = app.test_client()
    bob = token_for(app, "bob@example.org")
    runs = client.get("/api/v1/team/runs", headers={"Authorization": f"Bearer {bob}"}).get_json()
    run_id = runs["runs"][0]["id"]
    withdrawn = client.post(
        f"/api/v1/runs/{run_id}/withdraw", headers={"Authorization": f"Bearer {bob}"}
    )
    assert withdrawn.status_code == 200, withdrawn.get_json()
    frozen = invoke(runner, "freeze", "example-sentiment", "A")
    assert frozen.exit_code == 0, frozen.output
    assert "No analysis frozen with it: At least two runs with a value of the measure" in (
        frozen.output
    )
    assert "cluster" not in json.dumps(table(runner, "--official")["footnotes"]).lower()
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output


def test_a_queued_freeze_fails_with_the_reason_when_the_set_was_frozen_meanwhile(
    app: Flask, runner: FlaskCliRunner
) -> None:
    from leaderboard.services.jobs.analyses import request_job
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import opened

    host(app, runner)
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        target = resolve(unit.session, "example-sentiment", "A", None)
        job = request_job(unit.session, target, "freeze", actor="org@example.org").id
        # A second request while it waits is the same job.
        assert request_job(unit.session, target, "freeze", actor="org@example.org").id == job
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    worker = invoke(runner, "worker", "--once")
    assert worker.output.startswith(f"freeze {job}: failed (example-sentiment A (test) was frozen")
    assert "an official ranking is frozen once." in worker.output


def test_a_queued_freeze_records_how_the_worker_analysed_the_table(
    app: Flask, runner: FlaskCliRunner
) -> None:
    from leaderboard.models import Job
    from leaderboard.services.jobs.analyses import request_job
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import opened

    host(app, runner)
    significance(runner, "--method", "bootstrap", "--samples", "500", "--seed", "7")
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        target = resolve(unit.session, "example-sentiment", "A", None)
        job = request_job(unit.session, target, "freeze", actor="org@example.org").id
    worker = invoke(runner, "worker", "--once")
    assert worker.output == f"freeze {job}: done\n"
    analysis = snapshot(app).manifest["analysis"]
    assert (analysis["method"], analysis["samples"], analysis["seed"]) == ("bootstrap", 500, 7)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        row = session.get(Job, job)
        assert row is not None
        assert (row.purpose, row.method, row.samples, row.seed) == ("freeze", "bootstrap", 500, 7)
        assert row.report == analysis


def test_the_results_page_charts_the_analysis_its_view_shows(
    app: Flask, runner: FlaskCliRunner
) -> None:
    import csv
    import io

    host(app, runner)
    add_late_run(app, runner)
    public = app.test_client()
    base = "/tasks/example-sentiment/A"
    # Nothing analysed yet: no chart, and the chart answers 404.
    assert 'id="significance"' not in public.get(base).get_data(as_text=True)
    assert public.get(f"{base}/analysis/measure.csv").status_code == 404
    live = significance(runner, "--samples", "500")
    page = public.get(base).get_data(as_text=True)
    assert 'id="significance"' in page and f"{base}/analysis/measure.svg?set=test" in page

    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    frozen = snapshot(app).manifest["analysis"]
    page = public.get(base).get_data(as_text=True)
    assert "view=official" in page.split('id="significance"')[1]

    def chart_runs(query: str) -> list[str]:
        resp = public.get(f"{base}/analysis/measure.csv{query}")
        assert resp.status_code == 200, resp.get_data(as_text=True)
        return [row[0] for row in csv.reader(io.StringIO(resp.get_data(as_text=True)))][1:]

    # Once frozen, the official view (the default) charts the frozen analysis: no late run ...
    assert chart_runs("") == frozen["runs"] == chart_runs("?view=official")
    assert "Cirrus-primary" not in frozen["runs"]
    # ... and the live view the live analysis, late run included.
    assert chart_runs("?view=live") == live["runs"] and "Cirrus-primary" in live["runs"]
    matrix = public.get(f"{base}/analysis/matrix.csv?view=official").get_data(as_text=True)
    assert len(matrix.strip().splitlines()) == 1 + len(frozen["pairs"])
    assert public.get(f"{base}/analysis/measure.svg").mimetype == "image/svg+xml"
    assert public.get(f"{base}/analysis/measure.csv?view=sideways").status_code == 400


def test_an_analysed_table_shows_rank_intervals_in_every_export(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    add_late_run(app, runner)
    report = significance(runner, "--samples", "500", "--seed", "3")
    ranks = report["rank_intervals"]
    # Every ranked row: the on-time primaries, the late one and the baselines "as if".
    assert sorted(ranks, key=int) == sorted(map(str, report["run_ids"]), key=int)
    assert report["interval_samples"] == 500
    # The same seed and samples: the same intervals, computed again.
    assert significance(runner, "--samples", "500", "--seed", "3")["rank_intervals"] == ranks

    live = table(runner)
    shown = {}
    for row in live["rows"]:
        if row.get("cluster") is None:
            assert "rank_interval" not in row
            continue
        run_id = str(report["run_ids"][report["runs"].index(row["label"])])
        assert row["rank_interval"] == ranks[run_id]
        low, high = row["rank_interval"]
        assert 1 <= low <= high
        if row["rank"] is not None:
            assert low <= row["rank"] <= high
            shown[row["label"]] = (row["rank"], low, high)
    assert "Cirrus-primary" in shown and len(shown) == 3
    note = "Rank interval (lo–hi): 2.5th–97.5th percentile of the run's rank over 500 bootstrap"
    assert any(n.startswith(note) for n in live["footnotes"])

    def export(fmt: str) -> str:
        result = invoke(runner, "table", "example-sentiment", "A", "--format", fmt)
        assert result.exit_code == 0, result.output
        return str(result.output)

    markdown, latex = export("md"), export("latex")
    html = app.test_client().get("/tasks/example-sentiment/A").get_data(as_text=True)
    for label, (rank, low, high) in shown.items():
        assert re.search(rf"\| (\*\*)?{rank}\*? \({low}–{high}\)(\*\*)? \|", markdown), label
        assert re.search(rf"{rank}\*? \({low}--{high}\)", latex), label
        assert re.search(
            rf">{rank}(</strong>)?(<span class=\"marker\">\*</span>)? "
            rf'<span class="rank-interval" title="rank interval: [^"]+">\({low}–{high}\)</span>',
            html,
        ), label
    assert note in markdown and note.replace("–", "--") in latex
    assert "2.5th–97.5th percentile of the run&#39;s rank over 500 bootstrap" in html


def test_verify_reports_a_frozen_table_or_analysis_whose_rank_interval_was_changed(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    frozen = snapshot(app)
    analysis = frozen.manifest["analysis"]
    rows = [r for r in frozen.table["rows"] if "rank_interval" in r]
    # The frozen table carries the frozen analysis' rank intervals on every ranked row.
    assert len(rows) == len(analysis["run_ids"]) == 5
    for row in rows:
        run_id = str(analysis["run_ids"][analysis["runs"].index(row["label"])])
        assert row["rank_interval"] == analysis["rank_intervals"][run_id]
    assert invoke(runner, "verify", "example-sentiment", "A").exit_code == 0

    def forge_table(_manifest: dict[str, Any], frozen_table: dict[str, Any]) -> None:
        ranked = [r for r in frozen_table["rows"] if "rank_interval" in r]
        ranked[0]["rank_interval"] = [1, 5]

    reseal(app, forge_table)
    result = invoke(runner, "verify", "example-sentiment", "A")
    assert result.exit_code == 1
    assert "the table rebuilt from the re-scored runs differs from the frozen table" in (
        result.output
    )


def test_verify_names_a_frozen_analysis_whose_rank_interval_was_changed(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    ranks = snapshot(app).manifest["analysis"]["rank_intervals"]
    run_id = min(ranks, key=int)

    def forge_analysis(manifest: dict[str, Any], _table: dict[str, Any]) -> None:
        manifest["analysis"]["rank_intervals"][run_id] = [1, 5]

    reseal(app, forge_analysis)
    result = invoke(runner, "verify", "example-sentiment", "A")
    assert result.exit_code == 1
    assert (
        f"DIFFERENCE: analysis: the rank interval of run {run_id} is {ranks[run_id]}, "
        "the snapshot says [1, 5]"
    ) in result.output


def test_a_snapshot_frozen_before_rank_intervals_still_verifies(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0

    def as_before(manifest: dict[str, Any], frozen_table: dict[str, Any]) -> None:
        del manifest["analysis"]["rank_intervals"], manifest["analysis"]["interval_samples"]
        for row in frozen_table["rows"]:
            row.pop("rank_interval", None)
        frozen_table["footnotes"] = [
            n for n in frozen_table["footnotes"] if not n.startswith("Rank interval")
        ]

    reseal(app, as_before)
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output
