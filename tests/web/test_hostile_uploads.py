"""Uploads larger than their task can need: refused fast and in bounded memory, leaving nothing."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from bench.hostile_uploads import measure
from leaderboard.models import AuditEvent, Run, Team
from tests.conftest import csrf_from, login
from tests.runs import GOLD_TEST_A, api_upload, make_organizer, make_participant, token_for


def counts(app: Flask) -> tuple[int, int, int]:
    """Return how many teams, runs and create-team audit events the database holds."""
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return (
            s.scalar(select(func.count()).select_from(Team)) or 0,
            s.scalar(select(func.count()).select_from(Run)) or 0,
            s.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.action == "create-team")
            )
            or 0,
        )


def test_hostile_uploads_through_gunicorn_get_a_clear_4xx_fast_in_bounded_memory(
    tmp_path: Path,
) -> None:
    results = measure(tmp_path)
    assert {r.upload.family for r in results} == {"cqa", "sts", "trec"}
    for r in results:
        label = f"{r.upload.family} {r.upload.what}"
        assert r.status == 422, (label, r.message)
        assert "lines" in r.message or "larger than" in r.message, (label, r.message)
        # CPU time of the worker, not wall time: steady whatever else the machine runs.
        assert r.worker_cpu < 5, (label, r.worker_cpu)
        assert r.worker_peak_mb < 300, (label, r.worker_peak_mb)


def test_api_verdict_counts_errors_beyond_those_kept(app: Flask) -> None:
    make_participant(app, "Alpha", "a@example.org")
    token = token_for(app, "a@example.org")
    resp = api_upload(
        app.test_client(),
        token,
        gzip.compress(b"not a run line\n" * 14_000),
        path="/api/v1/tasks/semeval2016-task3/C/runs",
        slot="primary",
    )
    assert resp.status_code == 422
    body = resp.get_json()
    assert body["error"] == "The run was rejected: 14,002 errors."
    assert len(body["issues"]) == 26
    assert body["issues"][-1]["message"] == "… and 13,977 more errors."


@pytest.fixture
def organizer(app: Flask):  # type: ignore[no-untyped-def]
    make_organizer(app, "org@example.org")
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def _import(client, team: str, content: bytes):  # type: ignore[no-untyped-def]
    page = "/organizer/tasks/semeval2016-task3/A"
    token = csrf_from(client.get(page).get_data(as_text=True))
    return client.post(
        page + "/import",
        data={
            "csrf_token": token,
            "eval_set": "test",
            "team": team,
            "slot": "primary",
            "mode": "strict",
            "file": (io.BytesIO(content), "run.txt"),
        },
        content_type="multipart/form-data",
    )


def test_refused_organizer_import_creates_no_team(app: Flask, organizer) -> None:  # type: ignore[no-untyped-def]
    before = counts(app)
    resp = _import(organizer, "Newcomers", b"Q1\tQ1_C1\t0\t1\n")
    assert resp.status_code == 422
    assert counts(app) == before
    good = "\n".join(
        f"{q}\t{c}\t0\t0.5\t{label}"
        for q, c, _p, _s, label in (
            line.split("\t") for line in GOLD_TEST_A.read_text().splitlines()
        )
    )
    assert _import(organizer, "Newcomers", good.encode() + b"\n").status_code == 302
    teams, runs, created = counts(app)
    assert (teams, runs, created) == (before[0] + 1, before[1] + 1, before[2] + 1)


def test_refused_cli_import_creates_no_team(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    bad = tmp_path / "run.txt"
    bad.write_bytes(b"Q1\tQ1_C1\t0\t1\n")
    before = counts(app)
    result = runner.invoke(
        args=[
            "leaderboard", "import-runs", "semeval2016-task3", "A",
            "--team", "Ghosts", "--slot", "primary", str(bad),
        ]
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "REJECTED Ghosts/run.txt" in result.output
    assert counts(app) == before


def test_offline_score_refuses_a_file_larger_than_the_task_needs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from leaderboard.cli import leaderboard_group

    run = tmp_path / "run.txt.gz"
    run.write_bytes(gzip.compress(b"Q1\tQ1_C1\t0\t1\ttrue\n" * 10_000))
    result = CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), "--json"]
    )
    assert result.exit_code == 1, result.output
    assert "The file has more than 6,640 lines; a run for subtask A (test)" in result.output
