"""Operations: health check, request logs, shared login rate limiting, backups, gunicorn config."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from bench._common import GUNICORN, server_env
from leaderboard.web import create_app
from tests.conftest import PG_URL, app_overrides, csrf_from, database_url
from tests.runs import api_upload, make_participant, oracle_run, token_for

REPO = Path(__file__).resolve().parents[2]


def test_healthz_reports_the_database(client: FlaskClient, tmp_path: Path) -> None:
    # No worker ever ran on this copy: degraded (see test_worker_health.py), yet 200.
    resp = client.get("/healthz")
    assert resp.status_code == 200
    assert resp.get_json()["database"] == "ok"
    broken = create_app(
        {
            **app_overrides(tmp_path / "x"),
            "database_url": "postgresql+psycopg://nobody@127.0.0.1:1/none",
        }
    )
    resp = broken.test_client().get("/healthz")
    assert resp.status_code == 503
    assert resp.get_json()["status"] == "unavailable"


def test_every_request_is_logged_as_one_json_line(
    client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    logger = logging.getLogger("leaderboard.access")
    logger.addHandler(caplog.handler)
    try:
        resp = client.get("/tasks/semeval2016-task3/A", headers={"X-Request-Id": "abc123"})
    finally:
        logger.removeHandler(caplog.handler)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "leaderboard.access"]
    assert resp.headers["X-Request-Id"] == "abc123"
    assert lines[-1]["request_id"] == "abc123"
    assert (lines[-1]["method"], lines[-1]["path"], lines[-1]["status"]) == (
        "GET",
        "/tasks/semeval2016-task3/A",
        200,
    )
    assert isinstance(lines[-1]["ms"], float)


def _attempt(client: FlaskClient, email: str, password: str):  # type: ignore[no-untyped-def]
    page = client.get("/login").get_data(as_text=True)
    return client.post(
        "/login", data={"email": email, "password": password, "csrf_token": csrf_from(page)}
    )


def test_failed_logins_are_limited_across_workers(app: Flask, tmp_path: Path) -> None:
    """Two app instances on one database stand for two gunicorn workers: they share the counts."""
    make_participant(app, "Aurora", "alice@example.org")
    other_worker = create_app(
        {**app_overrides(tmp_path / "other"), "database_url": database_url(app)}
    )
    one, two = app.test_client(), other_worker.test_client()
    for i in range(5):
        assert _attempt(one if i % 2 else two, "alice@example.org", "wrong").status_code == 401
    refused = _attempt(one, "alice@example.org", "correct horse battery")
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    assert "Too many failed log-ins" in refused.get_data(as_text=True)
    assert _attempt(two, "alice@example.org", "correct horse battery").status_code == 429
    other_worker.extensions["leaderboard"]["engine"].dispose()


def test_a_successful_login_clears_the_failures(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    for _ in range(4):
        assert _attempt(client, "alice@example.org", "wrong").status_code == 401
    assert _attempt(client, "alice@example.org", "correct horse battery").status_code == 302
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    for _ in range(4):
        assert _attempt(client, "alice@example.org", "wrong").status_code == 401
    assert _attempt(client, "alice@example.org", "correct horse battery").status_code == 302


def test_backup_copies_database_and_files(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    resp = api_upload(client, token, oracle_run())
    assert resp.status_code == 201
    sha = resp.get_json()["sha256"]
    dest = tmp_path / "backup"
    result = runner.invoke(args=["leaderboard", "backup", str(dest)])
    assert result.exit_code == 0, result.output
    stored = dest / "storage" / "objects" / sha[:2] / sha
    assert stored.read_bytes() == oracle_run()
    manifest = json.loads((dest / "BACKUP.json").read_text())
    if PG_URL:
        assert manifest["database"] == "leaderboard.pgdump"
        listing = subprocess.run(
            ["pg_restore", "--list", str(dest / "leaderboard.pgdump")],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "TABLE DATA public runs" in listing.stdout
    else:
        with sqlite3.connect(dest / "leaderboard.sqlite3") as conn:
            assert conn.execute("SELECT file_sha256 FROM runs").fetchall() == [(sha,)]
    again = runner.invoke(args=["leaderboard", "backup", str(dest)])
    assert again.exit_code == 1 and "is not empty" in again.output


def test_gunicorn_configuration_loads(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    env = server_env(
        instance, f"sqlite:///{instance / 'leaderboard.sqlite3'}", GUNICORN_WORKERS="3"
    )
    out = subprocess.run(
        [GUNICORN, "-c", str(REPO / "gunicorn.conf.py"), "--check-config", "wsgi:app"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
