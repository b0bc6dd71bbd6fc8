"""Charts are drawn once per analysis and audience, then served from the file store."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from leaderboard import charts
from leaderboard.models import ChartFile
from leaderboard.unit_of_work import opened
from tests.conftest import login
from tests.dispatch import draw_asked
from tests.runs import make_organizer

CHART = "/tasks/example-sentiment/A/analysis/measure.svg"


def _cli(runner: FlaskCliRunner, *args: str) -> str:
    result = runner.invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _forget(app: Flask) -> None:
    """Empty the worker's in-memory caches, as another worker would start."""
    app.extensions["leaderboard"]["pages"].clear()
    app.extensions["leaderboard"]["tables"].clear()


def test_each_audience_variant_is_drawn_once_and_stored(
    app: Flask,
    hosted: FlaskCliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[list[str]] = []
    draw = charts.measure_chart

    def counting(labels, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(list(labels))
        return draw(labels, *args, **kwargs)

    monkeypatch.setattr(charts, "measure_chart", counting)
    _cli(hosted, "phase", "example-sentiment", "A", "test", "--names", "anonymous")
    analysis = json.loads(
        _cli(hosted, "significance", "example-sentiment", "A", "--samples", "200")
    )
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")

    # Computed at once, drawn at once: the organizers' and the public charts, SVG and PDF.
    assert len(drawn) == 4
    assert drawn[0] == analysis["runs"]
    public_svgs = []
    for _ in range(3):
        resp = app.test_client().get(CHART)
        assert resp.status_code == 200 and resp.mimetype == "image/svg+xml"
        assert resp.headers["Cache-Control"] == "public, max-age=60"
        public_svgs.append(resp.data)
        _forget(app)
    assert len(drawn) == 4 and len(set(public_svgs)) == 1
    assert b"Aurora" not in public_svgs[0] and b"Borealis" not in public_svgs[0]
    assert b"Team 1" in public_svgs[0] and b"Team 2" in public_svgs[0]

    # A member's own variant (their team named) is drawn by the worker when first asked.
    first = alice.get(CHART)
    assert first.status_code == 404 and "being drawn" in first.get_data(as_text=True)
    assert draw_asked(app) == 1 and len(drawn) == 5
    own = [alice.get(CHART) for _ in range(2)]
    assert own[0].data == own[1].data and own[0].headers["Cache-Control"] == "private, max-age=60"
    assert b"Aurora" in own[0].data and b"Borealis" not in own[0].data

    path = "/organizer/analyses/1/measure.svg"
    named = [org.get(path).data for _ in range(2)]
    assert len(drawn) == 5 and named[0] == named[1]
    assert b"Aurora" in named[0] and b"Borealis" in named[0]
    # Downloads keep their routes and types; a PDF is one more stored variant.
    pdf = org.get("/organizer/analyses/1/measure.pdf")
    assert pdf.data.startswith(b"%PDF") and "attachment" in pdf.headers["Content-Disposition"]
    assert org.get("/organizer/analyses/1/measure.pdf").data == pdf.data
    assert len(drawn) == 5
    # The ETag is the chart's key: a browser holding it is told nothing changed.
    unchanged = org.get(path, headers={"If-None-Match": pdf.headers["ETag"]})
    assert unchanged.status_code == 200  # another file's tag
    etag = org.get(path).headers["ETag"]
    assert org.get(path, headers={"If-None-Match": etag}).status_code == 304
    with app.app_context():
        from leaderboard.web.common.context import db

        # 9 analysis charts, and the five runs' difference charts drawn with the set's summaries.
        assert db().scalar(select(func.count()).select_from(ChartFile)) == 9 + 5


def test_two_runs_sharing_team_and_tag_get_one_label_each_everywhere(
    app: Flask, runner: FlaskCliRunner
) -> None:
    """The table, the analysis, the chart and its CSV tell the two runs apart alike."""
    import csv
    import io
    from pathlib import Path

    from tests.runs import api_upload, make_participant, token_for

    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "trec"
    _cli(runner, "add-task", str(example / "task.toml"))
    _cli(runner, "phase", "example-adhoc", "adhoc", "open", "--start", "2000-01-01T00:00:00Z")
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    run = (example / "run-valid.txt").read_bytes()
    lines = run.decode().splitlines(keepends=True)
    # The same tag, another ranking: the first ten documents of every topic in reverse.
    other = "".join(lines[i] for i in range(len(lines) - 1, -1, -1)).encode()
    for slot, data in (("primary", run), ("contrastive1", other)):
        resp = api_upload(app.test_client(), token, data, path="/api/v1/tasks/example-adhoc/adhoc/runs",
                          slot=slot)  # fmt: skip
        assert resp.status_code == 201, resp.get_json()
    table = app.test_client().get("/tasks/example-adhoc/adhoc/results.json").get_json()
    labels = [row["label"] for row in table["rows"] if row["kind"] == "run"]
    assert sorted(labels) == ["Aurora-bm25-rerank (contrastive1)", "Aurora-bm25-rerank (primary)"]
    report = json.loads(
        _cli(runner, "significance", "example-adhoc", "adhoc", "--runs", "all", "--samples", "50")
    )
    assert sorted(report["runs"]) == sorted(labels)
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    numbers = org.get("/organizer/analyses/1/measure.csv").get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(numbers)))[1:]
    assert sorted(row[0] for row in rows) == sorted(labels)
    svg = org.get("/organizer/analyses/1/measure.svg").get_data(as_text=True)
    assert all(label in svg for label in labels)


def test_the_worker_draws_a_finished_analysis_charts_so_pages_only_read_them(
    app: Flask,
    hosted: FlaskCliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from leaderboard.jobqueue import DRAW_CHARTS
    from leaderboard.services.jobs.analyses import request_analysis
    from leaderboard.services.results.chart_data import job_charts
    from leaderboard.services.results.significance import Request
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.worker.jobs import draw_all
    from tests.dispatch import LocalDispatcher

    _cli(hosted, "phase", "example-sentiment", "A", "test", "--names", "anonymous")
    ext = app.extensions["leaderboard"]
    with opened(ext["sessionmaker"]) as unit:
        target = resolve(unit.session, "example-sentiment", "A")
        job = request_analysis(unit.session, target, Request(samples=200), actor="org").id
    assert _cli(hosted, "worker", "--once") == f"analysis {job}: done\n"
    # The finished job sent its charts to the workers ...
    dispatcher: LocalDispatcher = ext["dispatcher"]
    assert (DRAW_CHARTS, (job,)) in dispatcher.sent
    # ... which draw the organizers' and the public variant of both charts, SVG and PDF.
    # (``worker --once`` drew them already, as the task would: found, not drawn again.)
    with ext["sessionmaker"]() as session:
        assert draw_all(session, ext["store"], job_charts(session, ext["store"], job)) == 8
        # (with the five runs' difference charts, drawn when --once summarized the set)
        assert session.scalar(select(func.count()).select_from(ChartFile)) == 8 + 5

    def refuse(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a page drew a chart the worker had drawn")

    monkeypatch.setattr(charts, "measure_chart", refuse)
    monkeypatch.setattr(charts, "pvalue_matrix", refuse)
    public = app.test_client()
    for name in ("measure", "matrix"):
        resp = public.get(f"/tasks/example-sentiment/A/analysis/{name}.svg")
        assert resp.status_code == 200 and resp.mimetype == "image/svg+xml"
    assert b"Aurora" not in public.get(CHART).data
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    named = org.get(f"/organizer/analyses/{job}/measure.svg")
    assert named.status_code == 200 and b"Aurora" in named.data


def test_a_chart_row_waits_for_the_callers_commit_and_a_rivals_row_is_no_error(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.services.results import chart_files
    from leaderboard.unit_of_work import unit_of

    ext = app.extensions["leaderboard"]
    data = chart_files.difference_data(["q1", "q2"], [0.25, -0.5], measure="MAP", unit="questions")
    key = chart_files.chart_key("difference", "svg", data)
    with ext["sessionmaker"]() as session:
        # The service commits nothing: the entry point's rollback drops the row (not the file).
        chart_files.draw_chart(session, ext["store"], "difference", "svg", data)
        session.rollback()
        assert session.get(ChartFile, key) is None

    draw = chart_files._draw

    def drawn_while_a_rival_stores_it(*args):  # type: ignore[no-untyped-def]
        body = draw(*args)
        with opened(ext["sessionmaker"]) as rival:
            rival.session.add(ChartFile(key=key, sha256="0" * 64, storage_key="theirs"))
        return body

    monkeypatch.setattr(chart_files, "_draw", drawn_while_a_rival_stores_it)
    with ext["sessionmaker"]() as session:
        with unit_of(session):
            body = chart_files.draw_chart(session, ext["store"], "difference", "svg", data)
        assert body.startswith(b"<?xml") or b"<svg" in body[:500]
        # The rival's row stays (it names the same bytes in practice); ours was not inserted.
        row = session.get(ChartFile, key)
        assert row is not None and row.storage_key == "theirs"
