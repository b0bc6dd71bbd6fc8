"""Build CQA runs for tests from the preset gold files (always present in the package)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from leaderboard.services import accounts

PRESET = (
    Path(__file__).resolve().parents[1] / "leaderboard" / "tasks" / "presets" / "semeval2016-task3"
)
#: The API upload URL of SemEval-2016 Task 3, subtask A.
API_A = "/api/v1/tasks/semeval2016-task3/A/runs"
GOLD_TEST_A = (
    PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-QL-test-subtaskA.xml.subtaskA.relevancy"
)


def gold_lines(path: Path = GOLD_TEST_A) -> list[list[str]]:
    """Return the gold file's lines split into their 5 columns."""
    return [line.split("\t") for line in path.read_text().splitlines()]


def oracle_run(path: Path = GOLD_TEST_A) -> bytes:
    """Return a run scoring 1 for every `true` gold candidate and 0 otherwise."""
    out = []
    for q, c, _pos, _ir, label in gold_lines(path):
        out.append(f"{q}\t{c}\t0\t{1 if label == 'true' else 0}\t{label}")
    return ("\n".join(out) + "\n").encode()


def constant_run(path: Path = GOLD_TEST_A, label: str = "false") -> bytes:
    """Return a run giving every candidate the same score and label."""
    return (
        "\n".join(f"{q}\t{c}\t0\t0.5\t{label}" for q, c, *_ in gold_lines(path)) + "\n"
    ).encode()


def make_participant(
    app: Flask, team: str, email: str, password: str = "correct horse battery"
) -> None:
    """Create a team (if needed) and a participant in it."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        try:
            accounts.find_team(session, team)
        except Exception:
            accounts.create_team(session, team, actor="test")
        accounts.create_user(
            session, email, role="participant", team=team, password=password, actor="test"
        )


def make_organizer(app: Flask, email: str, password: str = "organizer password") -> None:
    """Create an organizer."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        accounts.create_user(session, email, role="organizer", password=password, actor="test")


def token_for(app: Flask, email: str) -> str:
    """Issue an API token."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return accounts.issue_token(session, email, actor="test")


def api_upload(
    client: FlaskClient,
    token: str,
    files: bytes | Mapping[str, bytes],
    *,
    path: str = API_A,
    slot: str | None = "primary",
    filenames: Mapping[str, str] | None = None,
    **form: str,
) -> TestResponse:
    """Upload a run through the API with a bearer token, as every test does.

    ``files`` is the run file (field "file") or the file of each field, ``path`` the upload
    URL of a task and subtask (default: SemEval-2016 Task 3, subtask A) and ``form`` the other
    fields (name, description, set); ``slot=None`` sends no slot.
    """
    parts = {"file": files} if isinstance(files, bytes) else files
    data: dict[str, object] = dict(form) if slot is None else {"slot": slot, **form}
    for field, content in parts.items():
        data[field] = (io.BytesIO(content), (filenames or {}).get(field, f"{field}.txt"))
    return client.post(
        path,
        data=data,
        headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data",
    )


def accepted(response: TestResponse) -> dict[str, Any]:
    """Return the body of an accepted (201) upload; fail with the body of any other answer."""
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert isinstance(body, dict)
    return body
