"""The upload form takes each example family's run: scores on the verdict page, lines on refusal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select

from leaderboard.models import Run
from tests.conftest import login
from tests.helpers.uploads import form_upload
from tests.runs import make_participant, open_task

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

#: family folder, task/subtask, valid run, invalid run, a line the refusal must name.
CASES = [
    (
        "classification",
        "example-sentiment/A",
        "run-valid.tsv",
        "run-invalid.tsv",
        "line 3</span>: ",
    ),
    ("regression", "example-change/graded", "run-valid.tsv", "run-invalid.tsv", "line 2</span>: "),
    ("generation", "example-translation/en-de", "run-valid.de", "run-invalid.de", "segments"),
    ("trec", "example-adhoc/adhoc", "run-valid.txt", "run-invalid.txt", "line "),
]


@pytest.mark.parametrize(
    ("family", "path", "valid", "invalid", "named"), CASES, ids=[c[0] for c in CASES]
)
def test_the_form_scores_a_valid_run_and_names_the_lines_of_an_invalid_one(
    app: Flask,
    client: FlaskClient,
    runner: FlaskCliRunner,
    family: str,
    path: str,
    valid: str,
    invalid: str,
    named: str,
) -> None:
    folder = EXAMPLES / family
    hosted = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert hosted.exit_code == 0, hosted.output
    open_task(app, folder / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    login(client, "alice@example.org", "correct horse battery")
    url = f"/tasks/{path}/submit"

    refused = form_upload(client, (folder / invalid).read_bytes(), url=url)
    assert refused.status_code == 422
    assert named in refused.get_data(as_text=True)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.scalar(select(func.count()).select_from(Run)) == 0

    accepted = form_upload(client, (folder / valid).read_bytes(), url=url)
    assert accepted.status_code == 302, accepted.get_data(as_text=True)[:2000]
    page = client.get(accepted.headers["Location"]).get_data(as_text=True)
    assert "accepted and scored" in page
    cells = re.findall(r'<td class="num" title="([^"]+)">[^<]+</td>', page)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        run = session.scalars(select(Run)).one()
        stored = [s.official for s in run.scores]
    # Every measure of the run is on its page, with the official value as its title.
    assert sorted(cells) == sorted(stored)
