"""Build CQA runs for tests from the preset gold files (always present in the package)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update
from werkzeug.test import TestResponse

from leaderboard.models import Phase, Subtask, Task
from leaderboard.services.accounts import core as accounts
from leaderboard.services.tasks.catalog import POST_EVALUATION
from leaderboard.tasks.definition import preset_paths
from leaderboard.tasks.loading import load_definition_file
from leaderboard.unit_of_work import opened

PRESET = (
    Path(__file__).resolve().parents[1] / "leaderboard" / "tasks" / "presets" / "semeval2016-task3"
)
#: The API upload URL of SemEval-2016 Task 3, subtask A.
API_A = "/api/v1/tasks/semeval2016-task3/A/runs"
GOLD_TEST_A = (
    PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-QL-test-subtaskA.xml.subtaskA.relevancy"
)


def post_evaluation_phases(task: str, subtask: str) -> list[str]:
    """Return the names of the open phases a preset's subtask is installed with (one per set)."""
    for path in preset_paths():
        definition = load_definition_file(path)
        if definition.slug == task:
            sd = definition.subtask(subtask)
            assert sd is not None, f"{task} has no subtask {subtask}"
            return [
                POST_EVALUATION if s.slug == sd.default_set else f"{POST_EVALUATION}-{s.slug}"
                for s in sd.sets
            ]
    raise AssertionError(f"{task} is not a preset")


def own_campaign(
    server: Flask | Any, task: str = "semeval2016-task3", subtasks: tuple[str, ...] = ("A",)
) -> None:
    """Delete a preset's post-evaluation phases: the test runs its own campaign on these subtasks.

    ``server`` is a test app (the CLI runs in-process) or a live server (its ``cli`` method).
    Until the test opens a phase of its own, the subtasks are closed to participants.
    """
    for subtask in subtasks:
        for name in post_evaluation_phases(task, subtask):
            args = ("phase", task, subtask, name, "--delete")
            if isinstance(server, Flask):
                result = server.test_cli_runner().invoke(args=["leaderboard", *args])
                assert result.exit_code == 0, result.output
            else:
                server.cli(*args)


def open_phase(
    server: Flask | Any,
    task: str,
    subtask: str,
    name: str = "open",
    *options: str,
) -> None:
    """Open a phase (from 2000, no deadline) so a subtask from ``add-task`` takes uploads.

    A new subtask is closed until a phase opens it; ``options`` are more ``leaderboard phase``
    options (e.g. "--set", "dev").
    """
    args = ("phase", task, subtask, name, "--start", "2000-01-01T00:00:00Z", *options)
    if isinstance(server, Flask):
        result = server.test_cli_runner().invoke(args=["leaderboard", *args])
        assert result.exit_code == 0, result.output
    else:
        server.cli(*args)


def open_task(server: Flask | Any, definition: Path) -> None:
    """Open a phase on every set of every subtask of a task just added from ``definition``."""
    task = load_definition_file(definition)
    for sd in task.subtasks:
        for es in sd.sets:
            name = "open" if es.slug == sd.default_set else f"open-{es.slug}"
            open_phase(server, task.slug, sd.slug, name, "--set", es.slug)


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
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        session = unit.session
        try:
            accounts.find_team(session, team)
        except Exception:
            accounts.create_team(session, team, actor="test")
        accounts.create_user(
            session, email, role="participant", team=team, password=password, actor="test"
        )


def make_organizer(app: Flask, email: str, password: str = "organizer password") -> None:
    """Create an organizer."""
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        accounts.create_user(unit.session, email, role="organizer", password=password, actor="test")


def token_for(app: Flask, email: str) -> str:
    """Issue an API token."""
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        return accounts.issue_token(unit.session, email, actor="test")


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


def hide_results_until(app: Flask, task: str, subtask: str, at: datetime) -> str:
    """Hide a preset subtask's post-evaluation results until ``at``; return the phase's name."""
    name = post_evaluation_phases(task, subtask)[0]
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        subtask_id = session.scalar(
            select(Subtask.id).join(Task).where(Task.slug == task, Subtask.slug == subtask)
        )
        session.execute(
            update(Phase)
            .where(Phase.subtask_id == subtask_id, Phase.name == name)
            .values(results_hidden=True, release_at=at)
        )
        session.commit()
    return name
