"""Data routes (JSON, CSV, charts) answer their errors as data, never as an HTML page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from flask import Flask
from flask.testing import FlaskClient

from leaderboard.clock import FixedClock
from tests.conftest import AppFactory
from tests.runs import accepted, api_upload, make_participant, oracle_run, token_for

T3 = "/tasks/semeval2016-task3/A"
HIDDEN = "The results of phase test are hidden until the organizers release them."


@pytest.fixture
def hidden(make_app: AppFactory) -> tuple[Flask, int]:
    """An app whose test set of subtask A hides its results, with one run in it."""
    app = make_app(clock=FixedClock(datetime(2016, 1, 12, 8, 0, tzinfo=UTC)))
    result = app.test_cli_runner().invoke(
        args=[
            "leaderboard", "phase", "semeval2016-task3", "A", "test", "--set", "test",
            "--start", "2016-01-10T00:00:00Z", "--end", "2016-01-31T00:00:00Z",
            "--results", "hidden",
        ]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    make_participant(app, "Aurora", "alice@example.org")
    run = accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run()))
    return app, int(run["id"])


def test_hidden_results_json_answers_a_json_403(hidden: tuple[Flask, int]) -> None:
    app, _ = hidden
    resp = app.test_client().get(f"{T3}/results.json")
    assert resp.status_code == 403
    assert resp.mimetype == "application/json"
    assert resp.get_json() == {"error": HIDDEN}


@pytest.mark.parametrize("ext", ["csv", "md", "tex"])
def test_hidden_exports_answer_a_plain_text_403(hidden: tuple[Flask, int], ext: str) -> None:
    app, _ = hidden
    resp = app.test_client().get(f"{T3}/results.{ext}")
    assert resp.status_code == 403
    assert resp.mimetype == "text/plain"
    assert resp.get_data(as_text=True) == HIDDEN + "\n"


def test_chart_and_per_query_files_answer_in_their_kind(hidden: tuple[Flask, int]) -> None:
    app, run_id = hidden
    client: FlaskClient = app.test_client()
    chart = client.get(f"{T3}/analysis/measure.csv?set=dev")
    assert chart.status_code == 404 and chart.mimetype == "text/plain"
    assert "No analysis" in chart.get_data(as_text=True)
    queries = client.get(f"/runs/{run_id}/queries.csv")
    assert queries.status_code in (403, 404) and queries.mimetype == "text/plain"
    assert "<html" not in queries.get_data(as_text=True).lower()
    unknown = client.get("/tasks/no-such-task/A/results.json")
    assert unknown.status_code == 404 and "error" in unknown.get_json()
    # Pages keep their HTML error page.
    page = client.get("/tasks/no-such-task/A")
    assert page.status_code == 404 and page.mimetype == "text/html"
