"""Hiding, showing and deleting a task: gone for everyone but organizers, and never back by init."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, DeletedTask, Phase, Run, Subtask, Task, TaskDataFile
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import api_upload, make_organizer, make_participant, oracle_run, token_for

T3 = "semeval2016-task3"
STS = "semeval2016-task1"
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


@pytest.fixture
def world(make_app: AppFactory) -> Flask:
    """The presets, a participant of Aurora, an organizer and a data file on subtask A."""
    app = make_app(clock=FixedClock(datetime(2016, 3, 1, 12, tzinfo=UTC)))
    make_participant(app, "Aurora", "alice@example.org")
    make_organizer(app, "org@example.org")
    return app


@pytest.fixture
def runner(world: Flask) -> FlaskCliRunner:
    return world.test_cli_runner()


def add_data(world: Flask, runner: FlaskCliRunner, tmp_path: Path) -> int:
    readme = tmp_path / "README.txt"
    readme.write_text("How to read the questions.\n")
    added = invoke(runner, "data", "add", T3, "A", str(readme), "--phase", "post-evaluation")
    assert added.exit_code == 0, added.output
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        return session.scalars(select(TaskDataFile.id)).one()


def participant(world: Flask) -> FlaskClient:
    client = world.test_client()
    login(client, "alice@example.org", "correct horse battery")
    return client


def organizer(world: Flask) -> FlaskClient:
    client = world.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def pages(data_id: int) -> list[str]:
    """Every public page of subtask A of the CQA task, its exports, charts and data."""
    a = f"/tasks/{T3}/A"
    return [
        f"/tasks/{T3}",
        a,
        f"{a}?set=dev",
        f"{a}/results.csv",
        f"{a}/results.json?view=live",
        f"{a}/progress.csv",
        f"{a}/data/{data_id}",
        f"{a}/submit",
    ]


def count(world: Flask, model: Any) -> int:
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def audit_actions(world: Flask) -> list[tuple[str, str | None]]:
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        events = session.scalars(select(AuditEvent).order_by(AuditEvent.id))
        kept = ("hide-task", "show-task", "delete-task")
        return [(e.action, e.task_slug) for e in events if e.action in kept]


@dataclass
class Hosted:
    """Subtask A with a data file and Alice's run, and the clients that look at it."""

    data_id: int
    run_id: int
    alice: FlaskClient
    anonymous: FlaskClient
    token: str

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def run_pages(self) -> list[str]:
        """The pages and API answers of Alice's run."""
        run = self.run_id
        return [
            f"/runs/{run}",
            f"/runs/{run}/queries",
            f"/api/v1/runs/{run}",
            f"/api/v1/runs/{run}/file",
        ]


@pytest.fixture
def hosted(world: Flask, runner: FlaskCliRunner, tmp_path: Path) -> Hosted:
    """Add a data file to subtask A and upload Alice's run to it."""
    data_id = add_data(world, runner, tmp_path)
    alice = participant(world)
    token = token_for(world, "alice@example.org")
    run_id = api_upload(alice, token, oracle_run()).get_json()["id"]
    return Hosted(data_id, run_id, alice, world.test_client(), token)


@pytest.fixture
def hidden(hosted: Hosted, runner: FlaskCliRunner) -> Hosted:
    """Hide the CQA task from the command line."""
    result = invoke(runner, "task", T3, "--hide")
    assert result.exit_code == 0, result.output
    return hosted


def test_every_page_of_a_task_answers_before_it_is_hidden(hosted: Hosted) -> None:
    for path in hosted.run_pages:
        assert hosted.alice.get(path, headers=hosted.bearer).status_code == 200, path
    # The participant may download the data, submit, ...
    for path in pages(hosted.data_id):
        assert hosted.alice.get(path).status_code == 200, path


def test_hiding_a_task_says_that_nothing_was_deleted(
    hosted: Hosted, runner: FlaskCliRunner
) -> None:
    hidden = invoke(runner, "task", T3, "--hide")
    assert hidden.exit_code == 0, hidden.output
    assert f"Task {T3} is hidden" in hidden.output and "nothing was deleted" in hidden.output


def test_a_hidden_task_is_gone_from_the_pages_of_participants_and_visitors(hidden: Hosted) -> None:
    for client in (hidden.anonymous, hidden.alice):
        for path in pages(hidden.data_id):
            resp = client.get(path)
            assert resp.status_code == 404, path
        home = client.get("/").get_data(as_text=True)
        assert f'href="/tasks/{T3}"' not in home and f'href="/tasks/{STS}"' in home
    page = hidden.anonymous.get(f"/tasks/{T3}/A").get_data(as_text=True)
    assert f"No task &#39;{T3}&#39;." in page


def test_the_api_neither_lists_nor_shows_a_hidden_task(hidden: Hosted) -> None:
    tasks = hidden.alice.get("/api/v1/tasks", headers=hidden.bearer).get_json()["tasks"]
    listed = [t["slug"] for t in tasks]
    assert T3 not in listed and STS in listed
    table = hidden.alice.get(f"/api/v1/tasks/{T3}/A/table", headers=hidden.bearer)
    assert table.status_code == 404 and table.get_json()["error"] == f"No task '{T3}'."
    assert T3 not in hidden.alice.get("/api/openapi.json").get_data(as_text=True)


def test_uploads_to_a_hidden_task_are_refused_with_nothing_stored(
    world: Flask, hidden: Hosted
) -> None:
    refused = api_upload(hidden.alice, hidden.token, oracle_run())
    assert refused.status_code == 404 and refused.get_json()["error"] == f"No task '{T3}'."
    alice = hidden.alice
    form = {"csrf_token": csrf_from(alice.get("/").get_data(as_text=True)), "slot": "primary"}
    assert alice.post(f"/tasks/{T3}/A/submit", data=form).status_code == 404
    assert count(world, Run) == 1


def test_a_teams_own_run_goes_with_its_hidden_task(hidden: Hosted) -> None:
    for path in hidden.run_pages:
        assert hidden.alice.get(path, headers=hidden.bearer).status_code == 404, path
    assert hidden.alice.get("/api/v1/team/runs", headers=hidden.bearer).get_json()["runs"] == []


def test_organizers_still_see_a_hidden_task_told_that_it_is_hidden(
    world: Flask, hidden: Hosted
) -> None:
    org = organizer(world)
    for path in pages(hidden.data_id)[:-1]:
        assert org.get(path).status_code == 200, path
    task_page = org.get(f"/tasks/{T3}").get_data(as_text=True)
    assert "This task is hidden: only organizers see it, and uploads are refused." in task_page
    assert "(hidden: only organizers see it)" in org.get("/").get_data(as_text=True)
    assert "(hidden)" in org.get("/organizer/").get_data(as_text=True)
    assert 'id="task-hidden"' in org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)
    assert count(world, TaskDataFile) == 1


def test_init_leaves_a_hidden_task_hidden(hidden: Hosted, runner: FlaskCliRunner) -> None:
    # `leaderboard init` runs on every `make run`.
    init = invoke(runner, "init")
    assert init.exit_code == 0, init.output
    assert hidden.anonymous.get(f"/tasks/{T3}").status_code == 404


def test_a_task_shown_again_comes_back_whole(
    world: Flask, hidden: Hosted, runner: FlaskCliRunner
) -> None:
    shown = invoke(runner, "task", T3, "--show")
    assert shown.exit_code == 0 and f"Task {T3} is shown again" in shown.output
    for path in pages(hidden.data_id):
        assert hidden.alice.get(path).status_code == 200, path
    resp = api_upload(hidden.alice, hidden.token, oracle_run(), slot="contrastive1")
    assert resp.status_code == 201
    assert audit_actions(world) == [("hide-task", T3), ("show-task", T3)]


def test_the_organizer_hides_and_shows_with_the_buttons_on_the_task_page(world: Flask) -> None:
    org = organizer(world)
    page = org.get(f"/tasks/{T3}").get_data(as_text=True)
    assert f'action="/organizer/tasks/{T3}/hide"' in page
    token = csrf_from(page)
    hidden = org.post(
        f"/organizer/tasks/{T3}/hide", data={"csrf_token": token}, follow_redirects=True
    )
    assert hidden.status_code == 200
    text = hidden.get_data(as_text=True)
    assert f"Task {T3} is hidden: only organizers see it; uploads are refused" in text
    assert f'action="/organizer/tasks/{T3}/show"' in text
    assert world.test_client().get(f"/tasks/{T3}").status_code == 404
    shown = org.post(f"/organizer/tasks/{T3}/show", data={"csrf_token": token})
    assert shown.status_code == 302
    assert world.test_client().get(f"/tasks/{T3}").status_code == 200
    # Participants have no such button, and the action is refused to them.
    alice = participant(world)
    alice_page = alice.get(f"/tasks/{T3}").get_data(as_text=True)
    assert "/hide" not in alice_page
    refused = alice.post(f"/organizer/tasks/{T3}/hide", data={"csrf_token": csrf_from(alice_page)})
    assert refused.status_code == 403
    assert audit_actions(world) == [("hide-task", T3), ("show-task", T3)]


def test_a_task_with_runs_cannot_be_deleted(world: Flask, runner: FlaskCliRunner) -> None:
    alice = world.test_client()
    assert api_upload(alice, token_for(world, "alice@example.org"), oracle_run()).status_code == 201
    result = invoke(runner, "task", T3, "--delete")
    assert result.exit_code == 1
    assert f"Task {T3} has 1 run(s) (baselines included) and cannot be deleted" in result.output
    assert f"leaderboard task {T3} --hide" in result.output
    org = organizer(world)
    token = csrf_from(org.get(f"/tasks/{T3}").get_data(as_text=True))
    refused = org.post(f"/organizer/tasks/{T3}/delete", data={"csrf_token": token, "confirm": T3})
    assert refused.status_code == 409
    assert "cannot be deleted; hide it" in refused.get_data(as_text=True)
    assert count(world, Task) == 3 and count(world, Run) == 1
    assert audit_actions(world) == []


def test_deleting_a_preset_removes_it_and_init_never_brings_it_back(
    world: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    add_data(world, runner, tmp_path)
    org = organizer(world)
    token = csrf_from(org.get(f"/tasks/{T3}").get_data(as_text=True))
    # The confirmation is the task's name, typed.
    wrong = org.post(f"/organizer/tasks/{T3}/delete", data={"csrf_token": token, "confirm": "x"})
    assert wrong.status_code == 400
    assert f"Type the task&#39;s name {T3} in the field &#39;confirm&#39;" in wrong.get_data(
        as_text=True
    )
    assert count(world, Task) == 3
    deleted = org.post(
        f"/organizer/tasks/{T3}/delete",
        data={"csrf_token": token, "confirm": T3},
        follow_redirects=True,
    )
    assert deleted.status_code == 200
    assert f"Task {T3} was deleted; `leaderboard init` will not install it again." in (
        deleted.get_data(as_text=True)
    )
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.scalars(select(Task.slug).order_by(Task.slug)).all() == [
            STS,
            "trec-car-2017",
        ]
        assert session.scalar(select(DeletedTask.deleted_by)) == "org@example.org"
    assert count(world, TaskDataFile) == 0
    assert world.test_client().get(f"/tasks/{T3}").status_code == 404

    init = invoke(runner, "init")
    assert init.exit_code == 0, init.output
    assert T3 not in init.output
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.scalar(select(Task).where(Task.slug == T3)) is None

    # The CLI deletes too; the audit log keeps the task's lines and records each deletion.
    result = invoke(runner, "task", STS, "--delete")
    assert result.exit_code == 0, result.output
    assert f"Deleted task {STS}" in result.output
    assert count(world, Subtask) == 1 and count(world, Phase) == 1
    actions = audit_actions(world)
    assert ("delete-task", T3) in actions and ("delete-task", STS) in actions
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        kept = session.scalars(
            select(AuditEvent.action).where(
                AuditEvent.task_slug == T3, AuditEvent.action != "delete-task"
            )
        ).all()
    # The task's earlier lines stay, e.g. its installation and the data file added.
    assert "install-task" in kept and len(kept) >= 2


def test_a_deleted_task_added_again_is_kept_by_init(world: Flask, runner: FlaskCliRunner) -> None:
    definition = EXAMPLES / "classification" / "task.toml"
    assert invoke(runner, "add-task", str(definition)).exit_code == 0
    assert invoke(runner, "task", "example-sentiment", "--delete").exit_code == 0
    assert invoke(runner, "add-task", str(definition)).exit_code == 0
    assert count(world, DeletedTask) == 0
    assert invoke(runner, "task", "nonexistent", "--hide").output.endswith(
        "Error: No task 'nonexistent'.\n"
    )
    nothing = invoke(runner, "task", STS)
    assert nothing.exit_code == 1 and "one of --hide, --show or --delete" in nothing.output
    both = invoke(runner, "task", STS, "--hide", "--show")
    assert both.exit_code == 1 and "one of --hide, --show or --delete" in both.output


def test_a_task_with_a_frozen_ranking_cannot_be_deleted(
    world: Flask, runner: FlaskCliRunner
) -> None:
    assert invoke(runner, "freeze", STS, "en").exit_code == 0
    result = invoke(runner, "task", STS, "--delete")
    assert result.exit_code == 1
    assert f"Task {STS} has a frozen official ranking and cannot be deleted" in result.output
    assert count(world, Task) == 3


def test_a_hidden_tasks_release_mails_nobody(make_app: AppFactory) -> None:
    from leaderboard.services.notify.notices import results_released
    from tests.accounts import BASE
    from tests.notify_world import build

    app = make_app(base_url=BASE, clock=FixedClock(datetime(2020, 1, 10, tzinfo=UTC)))
    build(app)

    def release() -> int:
        with app.extensions["leaderboard"]["sessionmaker"]() as session:
            phase = session.scalars(
                select(Phase)
                .join(Subtask, Subtask.id == Phase.subtask_id)
                .join(Task, Task.id == Subtask.task_id)
                .where(Task.slug == T3, Subtask.slug == "A", Phase.name == "post-evaluation")
            ).one()
            sent = results_released(session, phase)
            session.commit()
            return sent

    runner = app.test_cli_runner()
    assert invoke(runner, "task", T3, "--hide").exit_code == 0
    assert release() == 0
    # Shown again, the same release is announced (it was not spent while hidden).
    assert invoke(runner, "task", T3, "--show").exit_code == 0
    assert release() > 0
