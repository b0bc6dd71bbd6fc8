"""Fixtures of the web tests: the loopback SMTP server, and the sentiment example hosted with runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner

from tests import dispatch
from tests.helpers.cli import invoke
from tests.helpers.sentiment import PATH, SENTIMENT
from tests.runs import api_upload, make_participant, open_phase, token_for
from tests.smtp import MailServer, smtp_server


@pytest.fixture
def server() -> Iterator[MailServer]:
    """Run an SMTP server on loopback; mail still being sent is flushed before it stops."""
    with smtp_server() as running:
        yield running
    dispatch.flush()


@pytest.fixture
def hosted(app: Flask, runner: FlaskCliRunner) -> FlaskCliRunner:
    """Host the sentiment example with an oracle, a noisy run and the three baselines."""
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    open_phase(app, "example-sentiment", "A", "test")
    gold = [
        line.split("\t")
        for line in (SENTIMENT / "gold.tsv").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    client = app.test_client()
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    oracle = "".join(f"{i}\t{label}\n" for i, label in gold).encode()
    flip = {"positive": "negative", "negative": "neutral", "neutral": "positive"}
    noisy = "".join(
        f"{i}\t{flip[label] if k % 3 == 0 else label}\n" for k, (i, label) in enumerate(gold)
    ).encode()
    for email, run in (("alice@example.org", oracle), ("bob@example.org", noisy)):
        resp = api_upload(client, token_for(app, email), run, path=PATH)
        assert resp.status_code == 201, resp.get_json()
    assert invoke(runner, "add-baselines", "example-sentiment", "A").exit_code == 0
    return runner
