"""Organizer messages: the two-step form, each audience's recipients, the audit log, refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from leaderboard.models import AuditEvent
from leaderboard.services.notify.messages import MAX_BODY, MAX_SUBJECT
from tests.accounts import BASE
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.queued_mail import queued, recipients
from tests.notify_world import PASSWORD, T3, build, sessions, turn_off
from tests.runs import make_organizer

NEW = "/organizer/messages/new"
MEMBERS = [
    "alice@example.org",
    "amy@example.org",
    "bob@example.org",
    "carl@example.org",
    "dora@example.org",
]


@pytest.fixture
def world(make_app: AppFactory) -> Flask:
    """Return an app with the teams of tests.notify_world and an organizer."""
    app = make_app(base_url=BASE)
    build(app)
    make_organizer(app, "org@example.org")
    queued(app)  # forget whatever the set-up queued
    return app


def organizer(app: Flask) -> FlaskClient:
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def post(client: FlaskClient, **fields: str) -> tuple[int, str]:
    """POST the message form with its CSRF token; return the status and the page."""
    token = csrf_from(client.get(NEW).get_data(as_text=True))
    data = {"task": T3, "audience": "members", "subject": "Hello", "body": "Hi *all*.", **fields}
    resp = client.post(NEW, data={**data, "csrf_token": token})
    return resp.status_code, resp.get_data(as_text=True)


def count_in(page: str) -> int:
    found = re.search(r'id="recipient-count">(\d+)<', page)
    assert found, page
    return int(found.group(1))


def audit(app: Flask) -> list[AuditEvent]:
    with sessions(app)() as session:
        return list(session.scalars(select(AuditEvent).where(AuditEvent.action == "send-message")))


AUDIENCES = {
    "members": MEMBERS,
    "captains": ["alice@example.org", "bob@example.org", "carl@example.org", "dora@example.org"],
    "with-primary": ["alice@example.org", "amy@example.org"],
    "without-primary": ["bob@example.org", "carl@example.org", "dora@example.org"],
    "pending-teams": ["fay@example.org"],
}


@pytest.mark.parametrize("audience", list(AUDIENCES))
def test_each_audience_previews_and_sends_to_exactly_its_people(
    world: Flask, audience: str
) -> None:
    client = organizer(world)
    status, page = post(client, audience=audience, subtask="A")
    assert status == 200
    assert count_in(page) == len(AUDIENCES[audience])
    assert queued(world) == []  # a preview sends nothing
    status, _ = post(client, audience=audience, subtask="A", confirm="send")
    assert status == 302
    assert recipients(world) == sorted(AUDIENCES[audience])


def test_the_preview_renders_the_markdown_safely(world: Flask) -> None:
    body = "Read **this** <script>alert(1)</script> [x](javascript:alert(1))"
    status, page = post(organizer(world), body=body)
    assert status == 200
    assert "<strong>this</strong>" in page
    assert "<script>alert(1)" not in page
    assert 'href="javascript:' not in page


def test_the_mail_has_the_markdown_source_and_an_html_part(world: Flask) -> None:
    post(organizer(world), audience="captains", confirm="send", body="Read **this**.")
    mails = queued(world)
    assert len(mails) == 4
    plain = mails[0].get_body(("plain",))
    html = mails[0].get_body(("html",))
    assert plain is not None and "Read **this**." in plain.get_content()
    assert html is not None and "<strong>this</strong>" in html.get_content()
    assert mails[0]["Subject"].endswith("Hello")
    assert str(mails[0]["List-Unsubscribe"]).startswith(f"<{BASE}/unsubscribe/")


def test_people_who_turned_messages_off_are_neither_counted_nor_sent(world: Flask) -> None:
    turn_off(world, "amy@example.org", "organizer_messages")
    turn_off(world, "bob@example.org", "deadline")  # another kind: bob still gets messages
    client = organizer(world)
    _, page = post(client)
    assert count_in(page) == 4
    post(client, confirm="send")
    assert recipients(world) == [m for m in MEMBERS if m != "amy@example.org"]


def test_sending_records_an_audit_event(world: Flask) -> None:
    post(organizer(world), audience="with-primary", subtask="A", subject="Deadline", confirm="send")
    [event] = audit(world)
    assert event.actor == "org@example.org"
    assert event.task_slug == T3 and event.subtask_slug == "A"
    assert event.details["audience"] == "with-primary"
    assert event.details["recipients"] == 2
    assert event.details["subject"] == "Deadline"


@pytest.mark.parametrize(
    ("fields", "status", "says"),
    [
        ({"subject": ""}, 400, "subject"),
        ({"subject": "x" * (MAX_SUBJECT + 1)}, 400, "subject"),
        ({"body": "  "}, 400, "body"),
        ({"body": "x" * (MAX_BODY + 1)}, 400, "body"),
        ({"audience": "everyone"}, 400, "audience"),
        ({"task": "no-such-task"}, 404, "no-such-task"),
        ({"task": ""}, 400, "task"),
        ({"audience": "with-primary", "subtask": ""}, 400, "subtask"),
        ({"audience": "without-primary", "subtask": "Z"}, 404, "subtask"),
        # A subtask of another task (the page lists every task's) is not the chosen task's.
        (
            {"audience": "with-primary", "subtask": "en"},
            404,
            "has no subtask &#39;en&#39; (field subtask)",
        ),
        ({"audience": "pending-teams", "task": "semeval2016-task1", "subject": ""}, 400, "subject"),
    ],
)
def test_a_refused_message_says_why_and_queues_nothing(
    world: Flask, fields: dict[str, str], status: int, says: str
) -> None:
    client = organizer(world)
    for confirm in ("", "send"):
        got, page = post(client, confirm=confirm, **fields)
        assert got == status, page
        assert says in page
        assert 'id="recipient-count"' not in page
    assert queued(world) == []
    assert audit(world) == []


def test_the_form_chooses_no_task_and_offers_each_tasks_subtasks(world: Flask) -> None:
    page = organizer(world).get(NEW).get_data(as_text=True)
    task = re.search(r'<select[^>]*name="task".*?</select>', page, re.S)
    assert task is not None
    options = re.findall(r"<option([^>]*)>([^<]*)</option>", task.group(0))
    # The placeholder comes first and is the one selected: no task is chosen for the organizer.
    assert options[0] == (' selected value=""', "Choose a task")
    assert [o for o in options if "selected" in o[0]] == [options[0]]
    subtask = re.search(r'<select[^>]*name="subtask".*?</select>', page, re.S)
    assert subtask is not None
    groups = re.findall(
        r'<optgroup label="([^"]+)" data-task="\1">(.*?)</optgroup>', subtask.group(0), re.S
    )
    offered = {g: re.findall(r'<option value="([^"]+)"', body) for g, body in groups}
    assert offered == {
        "semeval2016-task1": ["en", "es-en"],
        "semeval2016-task3": ["A", "B", "C", "D"],
        "trec-car-2017": ["passage"],
    }
    assert 'src="/static/message-form.js"' in page


def test_the_preview_keeps_the_chosen_subtask_of_the_chosen_task(world: Flask) -> None:
    status, page = post(organizer(world), audience="with-primary", subtask="A")
    assert status == 200 and count_in(page) == 2
    form = page[page.index('id="message-form"') :]
    assert re.findall(r'<option value="(\w+)" selected>', form) == ["A"]
    assert re.search(r'data-task="semeval2016-task3">\s*<option value="A" selected>', form)
    assert f'<option selected value="{T3}">' in form or f'<option value="{T3}" selected>' in form


def test_leaving_the_task_unchosen_is_refused(world: Flask) -> None:
    client = organizer(world)
    token = csrf_from(client.get(NEW).get_data(as_text=True))
    data = {"audience": "members", "subject": "Hello", "body": "Hi.", "csrf_token": token}
    resp = client.post(NEW, data=data)
    assert resp.status_code == 400
    assert "Choose the task whose participants get the message (field task)." in resp.get_data(
        as_text=True
    )
    assert queued(world) == []


def test_a_message_nobody_would_get_is_refused(world: Flask) -> None:
    turn_off(world, "fay@example.org", "organizer_messages")
    client = organizer(world)
    _, page = post(client, audience="pending-teams")
    assert count_in(page) == 0
    status, page = post(client, audience="pending-teams", confirm="send")
    assert status == 400 and "Nobody" in page
    assert queued(world) == [] and audit(world) == []


def test_the_form_without_csrf_is_refused(world: Flask) -> None:
    client = organizer(world)
    resp = client.post(
        NEW,
        data={"task": T3, "audience": "members", "subject": "s", "body": "b", "confirm": "send"},
    )
    assert resp.status_code == 400
    assert queued(world) == [] and audit(world) == []


def test_participants_may_not_send_messages(world: Flask) -> None:
    client = world.test_client()
    login(client, "alice@example.org", PASSWORD)
    assert client.get(NEW).status_code == 403
    assert client.post(NEW, data={}).status_code in (400, 403)
    assert queued(world) == []


def test_the_dashboard_links_the_message_form(world: Flask) -> None:
    page = organizer(world).get("/organizer/").get_data(as_text=True)
    assert f'href="{NEW}"' in page


def test_downloading_task_data_makes_a_team_a_participant(world: Flask, tmp_path: Path) -> None:
    from leaderboard.models import TaskDataFile
    from tests.notify_world import TEAMS
    from tests.runs import post_evaluation_phases

    client = organizer(world)
    _, page = post(client)
    assert count_in(page) == len(MEMBERS)
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("some input\n")
    name = post_evaluation_phases(T3, "A")[0]
    added = world.test_cli_runner().invoke(
        args=["leaderboard", "data", "add", T3, "A", str(inputs), "--phase", name]
    )
    assert added.exit_code == 0, added.output
    with sessions(world)() as session:
        file_id = session.scalar(select(TaskDataFile.id))
    ed = world.test_client()
    login(ed, TEAMS["Eridanus"][0], PASSWORD)
    for _ in range(2):  # downloaded twice: recorded once
        assert ed.get(f"/tasks/{T3}/A/data/{file_id}").status_code == 200
    _, page = post(client)
    assert count_in(page) == len(MEMBERS) + 1
