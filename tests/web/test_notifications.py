"""Notification mail: opt-outs on the account page, one-click unsubscribe links, each kind's recipients."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.clock import FixedClock
from leaderboard.models import NotificationOptOut, User
from leaderboard.services.notify.core import KINDS, notify
from tests.accounts import BASE
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.queued_mail import queued, recipients
from tests.helpers.teams import loose_participant
from tests.helpers.uploads import form_upload
from tests.runs import make_participant
from tests.smtp import MailServer

PASSWORD = "correct horse battery"
CHECKBOXES = (
    "notify_join_requests",
    "notify_results_released",
    "notify_deadline",
    "notify_rejected_api",
    "notify_organizer_messages",
)


def unsubscribe_path(message: EmailMessage) -> str:
    """Return the path of a mail's List-Unsubscribe link."""
    header = str(message["List-Unsubscribe"])
    assert header.startswith(f"<{BASE}/unsubscribe/") and header.endswith(">"), header
    return header[1 + len(BASE) : -1]


def off_kinds(app: Flask, email: str) -> set[str]:
    """Return the kinds a user turned off, read afresh."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        user = session.scalar(select(User).where(User.email == email))
        assert user is not None
        return set(
            session.scalars(
                select(NotificationOptOut.kind).where(NotificationOptOut.user_id == user.id)
            )
        )


def send_to(app: Flask, email: str, kind: str) -> bool:
    """Queue a notification of ``kind`` to a user through the service; return whether queued."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        user = session.scalar(select(User).where(User.email == email))
        assert user is not None
        sent = notify(session, user, kind, "Hello", "Something happened.")
        session.commit()
        return sent


@pytest.fixture
def mailing_app(make_app: AppFactory) -> Flask:
    """Return an app whose links start with BASE, with one participant (ann of Aurora)."""
    app = make_app(base_url=BASE)
    make_participant(app, "Aurora", "ann@example.org")
    return app


def checked(html: str, name: str) -> bool:
    """Return whether the checkbox ``name`` is ticked on a page."""
    import re

    tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert tag, f"no checkbox {name}"
    return "checked" in tag.group(0)


def test_the_account_page_has_every_kind_ticked_by_default(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    html = client.get("/account").get_data(as_text=True)
    assert 'id="notifications"' in html
    assert all(checked(html, name) for name in CHECKBOXES)


def test_unticking_kinds_turns_them_off_and_ticking_turns_them_on(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    token = csrf_from(client.get("/account").get_data(as_text=True))
    keep = {
        "notify_join_requests": "y",
        "notify_rejected_api": "y",
        "notify_organizer_messages": "y",
    }
    resp = client.post("/account/notifications", data={**keep, "csrf_token": token})
    assert resp.status_code == 302
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released", "deadline"}
    html = client.get("/account").get_data(as_text=True)
    assert not checked(html, "notify_deadline") and checked(html, "notify_join_requests")
    everything = {name: "y" for name in CHECKBOXES}
    client.post("/account/notifications", data={**everything, "csrf_token": token})
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_the_settings_form_without_csrf_changes_nothing(mailing_app: Flask) -> None:
    client = mailing_app.test_client()
    login(client, "ann@example.org", PASSWORD)
    resp = client.post("/account/notifications", data={})
    assert resp.status_code == 400
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_a_notification_carries_one_click_unsubscribe_headers(mailing_app: Flask) -> None:
    assert send_to(mailing_app, "ann@example.org", "deadline")
    [message] = queued(mailing_app)
    assert message["To"] == "ann@example.org"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    path = unsubscribe_path(message)
    body = message.get_body(("plain",))
    assert body is not None and f"{BASE}{path}" in body.get_content()


def test_a_kind_turned_off_is_not_sent_and_others_still_are(mailing_app: Flask) -> None:
    assert send_to(mailing_app, "ann@example.org", "deadline")
    path = unsubscribe_path(queued(mailing_app)[0])
    assert mailing_app.test_client().post(path).status_code == 200
    assert not send_to(mailing_app, "ann@example.org", "deadline")
    assert queued(mailing_app) == []
    assert send_to(mailing_app, "ann@example.org", "organizer_messages")
    assert recipients(mailing_app) == ["ann@example.org"]


def test_unsubscribe_get_asks_and_post_turns_the_kind_off_without_csrf(mailing_app: Flask) -> None:
    send_to(mailing_app, "ann@example.org", "results_released")
    path = unsubscribe_path(queued(mailing_app)[0])
    client = mailing_app.test_client()
    page = client.get(path)
    assert page.status_code == 200
    assert "<button" in page.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == set()  # a GET changes nothing
    # As a mail client does it: the RFC 8058 body, no cookie, no CSRF token.
    resp = client.post(path, data={"List-Unsubscribe": "One-Click"})
    assert resp.status_code == 200
    assert 'id="unsubscribed"' in resp.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released"}
    assert client.post(path).status_code == 200  # twice: still off, no error
    assert off_kinds(mailing_app, "ann@example.org") == {"results_released"}


def test_a_forged_or_altered_unsubscribe_token_is_refused(mailing_app: Flask) -> None:
    send_to(mailing_app, "ann@example.org", "deadline")
    path = unsubscribe_path(queued(mailing_app)[0])
    client = mailing_app.test_client()
    payload, _, signature = path.rpartition(".")
    for forged in (
        "/unsubscribe/not-a-token",
        f"{payload}.{signature[::-1]}",
        path[:-3],
    ):
        for method in (client.get, client.post):
            resp = method(forged)
            assert resp.status_code == 400, forged
            assert "not valid" in resp.get_data(as_text=True)
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_a_token_signed_with_another_secret_is_refused(mailing_app: Flask) -> None:
    from leaderboard.services.notify.core import unsubscribe_token

    with mailing_app.extensions["leaderboard"]["sessionmaker"]() as session:
        ann = session.scalar(select(User).where(User.email == "ann@example.org"))
        assert ann is not None
        forged = unsubscribe_token("another secret", ann.id, "deadline")
    resp = mailing_app.test_client().post(f"/unsubscribe/{forged}")
    assert resp.status_code == 400
    assert off_kinds(mailing_app, "ann@example.org") == set()


def test_without_a_base_url_nothing_is_queued(make_app: AppFactory) -> None:
    app = make_app()
    make_participant(app, "Aurora", "ann@example.org")
    assert not send_to(app, "ann@example.org", "deadline")
    assert queued(app) == []


def test_every_kind_has_a_checkbox() -> None:
    assert {f"notify_{k}" for k in KINDS} == set(CHECKBOXES)


# ------------------------------------------------------------------ the campaign's kinds

T3 = "semeval2016-task3"


@pytest.fixture
def world(make_app: AppFactory) -> Flask:
    """Return an app with the teams of tests.notify_world, an organizer, and nothing queued."""
    from tests.notify_world import build
    from tests.runs import make_organizer

    app = make_app(base_url=BASE, clock=FixedClock(datetime(2020, 1, 10, tzinfo=UTC)))
    build(app)
    make_organizer(app, "org@example.org")
    queued(app)
    return app


def cli(app: Flask, *args: str) -> str:
    result = app.test_cli_runner().invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_join_request_mails_the_captain_and_the_decision_the_requester(
    make_app: AppFactory,
) -> None:
    from leaderboard.services.common import settings as site
    from leaderboard.unit_of_work import unit_of

    app = make_app(base_url=BASE)
    make_participant(app, "Aurora", "alice@example.org")  # the captain
    make_participant(app, "Aurora", "amy@example.org")
    with app.extensions["leaderboard"]["sessionmaker"]() as session, unit_of(session):
        site.set_value(session, "registration", "approval", actor="test")
    for email in ("newbie@example.org", "second@example.org"):
        loose_participant(app, email)
    queued(app)
    code = team_code(app, "Aurora")
    for email in ("newbie@example.org", "second@example.org"):
        client = app.test_client()
        login(client, email, PASSWORD)
        page = client.get(f"/teams/join/{code}")
        resp = client.post(
            f"/teams/join/{code}", data={"csrf_token": csrf_from(page.get_data(as_text=True))}
        )
        assert resp.status_code in (200, 302), resp.get_data(as_text=True)
    mails = queued(app)
    assert [m["To"] for m in mails] == ["alice@example.org", "alice@example.org"]
    assert "newbie@example.org" in mails[0].get_body(("plain",)).get_content()  # type: ignore[union-attr]
    captain = app.test_client()
    login(captain, "alice@example.org", PASSWORD)
    token = csrf_from(captain.get("/team").get_data(as_text=True))
    first, second = request_ids(app)
    assert (
        captain.post(f"/team/requests/{first}/accept", data={"csrf_token": token}).status_code
        == 302
    )
    assert (
        captain.post(f"/team/requests/{second}/decline", data={"csrf_token": token}).status_code
        == 302
    )
    accepted, declined = queued(app)
    assert accepted["To"] == "newbie@example.org" and "joined" in str(accepted["Subject"])
    assert declined["To"] == "second@example.org" and "declined" in str(declined["Subject"])


def test_join_mails_respect_the_opt_out(make_app: AppFactory) -> None:
    from leaderboard.services.common import settings as site
    from leaderboard.unit_of_work import unit_of
    from tests.notify_world import turn_off

    app = make_app(base_url=BASE)
    make_participant(app, "Aurora", "alice@example.org")
    with app.extensions["leaderboard"]["sessionmaker"]() as session, unit_of(session):
        site.set_value(session, "registration", "approval", actor="test")
    loose_participant(app, "newbie@example.org")
    turn_off(app, "alice@example.org", "join_requests")
    queued(app)
    client = app.test_client()
    login(client, "newbie@example.org", PASSWORD)
    code = team_code(app, "Aurora")
    page = client.get(f"/teams/join/{code}")
    client.post(f"/teams/join/{code}", data={"csrf_token": csrf_from(page.get_data(as_text=True))})
    assert request_ids(app)  # the request was filed ...
    assert queued(app) == []  # ... and the captain, who turned such mail off, got none


def team_code(app: Flask, name: str) -> str:
    from leaderboard.models import Team

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        team = session.scalar(select(Team).where(Team.name == name))
        assert team is not None
        if team.invite_code is None:
            from leaderboard.services.teams.members import new_invite_code

            team.invite_code = new_invite_code()
            session.commit()
        return str(team.invite_code)


def request_ids(app: Flask) -> list[int]:
    from leaderboard.models import JoinRequest

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return list(session.scalars(select(JoinRequest.id).order_by(JoinRequest.id)))


def test_a_run_refused_through_the_api_mails_its_uploader_the_verdict(world: Flask) -> None:
    from tests.runs import api_upload, token_for

    bad = b"not\ta\trun\nline two\n" * 30
    resp = api_upload(world.test_client(), token_for(world, "amy@example.org"), bad)
    assert resp.status_code == 422
    [message] = queued(world)
    assert message["To"] == "amy@example.org"
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    first = resp.get_json()["issues"][0]
    assert first["message"][:40] in text
    assert "more" in text  # 60 issues: the first 20 listed, the rest counted
    assert text.count("\n- ") <= 21


def test_a_refused_runs_mail_that_cannot_be_queued_leaves_the_refusal_as_it_is(
    world: Flask, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sqlalchemy.exc import OperationalError

    from leaderboard.web.api import routes
    from tests.runs import api_upload, token_for

    def broken(*_: object) -> bool:
        raise OperationalError("INSERT INTO outbox", {}, Exception("database is locked"))

    monkeypatch.setattr(routes, "run_refused", broken)
    resp = api_upload(world.test_client(), token_for(world, "amy@example.org"), b"bad\n")
    assert resp.status_code == 422
    assert resp.get_json()["issues"]
    assert queued(world) == []
    assert "the verdict mail of a refused run to user" in caplog.text


def test_a_run_refused_on_the_web_form_or_accepted_sends_nothing(world: Flask) -> None:
    from tests.runs import GOLD_TEST_A, api_upload, constant_run, token_for

    client = world.test_client()
    login(client, "amy@example.org", PASSWORD)
    assert form_upload(client, b"bad\n").status_code == 422
    resp = api_upload(
        world.test_client(),
        token_for(world, "amy@example.org"),
        constant_run(GOLD_TEST_A),
        slot="contrastive1",
    )
    assert resp.status_code == 201
    assert queued(world) == []


def test_the_refused_run_mail_respects_the_opt_out(world: Flask) -> None:
    from tests.notify_world import turn_off
    from tests.runs import api_upload, token_for

    turn_off(world, "amy@example.org", "rejected_api")
    resp = api_upload(world.test_client(), token_for(world, "amy@example.org"), b"bad\n")
    assert resp.status_code == 422
    assert queued(world) == []


RELEASED_TO = ["alice@example.org", "amy@example.org", "bob@example.org"]


def test_a_release_on_the_command_line_mails_every_member_of_teams_with_runs(world: Flask) -> None:
    from tests.notify_world import turn_off
    from tests.runs import post_evaluation_phases

    turn_off(world, "bob@example.org", "results_released")
    name = post_evaluation_phases(T3, "A")[0]
    cli(world, "phase", T3, "A", name, "--results", "hidden")
    assert queued(world) == []  # hiding is no release
    cli(world, "phase", T3, "A", name, "--results", "visible")
    assert recipients(world) == ["alice@example.org", "amy@example.org"]
    cli(world, "phase", T3, "A", name, "--results", "visible")  # visible already: no release
    assert queued(world) == []


def test_a_release_on_the_organizers_page_mails_the_teams(world: Flask) -> None:
    from tests.runs import post_evaluation_phases

    name = post_evaluation_phases(T3, "A")[0]
    cli(world, "phase", T3, "A", name, "--results", "hidden")
    client = world.test_client()
    login(client, "org@example.org", "organizer password")
    page = client.get(f"/organizer/tasks/{T3}/A")
    resp = client.post(
        f"/organizer/tasks/{T3}/A/phase",
        data={
            "csrf_token": csrf_from(page.get_data(as_text=True)),
            "name": name,
            "eval_set": "test",
            "late": "",
            "corrections": "",
            "results": "visible",
        },
    )
    assert resp.status_code in (302, 303), resp.get_data(as_text=True)
    assert recipients(world) == RELEASED_TO


def check(app: Flask, at: datetime) -> dict[str, int]:
    from leaderboard.worker.jobs import campaign_check

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return campaign_check(session, at)


def audit_actions(app: Flask, action: str) -> int:
    from leaderboard.models import AuditEvent

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return len(list(session.scalars(select(AuditEvent.id).where(AuditEvent.action == action))))


def test_a_scheduled_release_is_made_and_announced_once(world: Flask) -> None:
    from tests.runs import post_evaluation_phases

    name = post_evaluation_phases(T3, "A")[0]
    when = datetime(2030, 1, 1, tzinfo=UTC)
    out = cli(
        world, "phase", T3, "A", name, "--results", "hidden", "--release-at", when.isoformat()
    )
    assert "released at 2030-01-01 00:00 UTC" in out
    assert check(world, when - timedelta(seconds=1))["released"] == 0
    assert queued(world) == []
    assert check(world, when + timedelta(seconds=30)) == {
        "released": 1,
        "release_mails": 3,
        "deadline_mails": 0,
    }
    assert recipients(world) == RELEASED_TO
    assert audit_actions(world, "release-results") == 1
    with world.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.models import Phase
        from leaderboard.services.tasks.catalog import resolve

        subtask_id = resolve(session, T3, "A").subtask.id
        phase = session.scalar(
            select(Phase).where(Phase.name == name, Phase.subtask_id == subtask_id)
        )
        assert phase is not None and not phase.results_hidden
        assert phase.released_at == when + timedelta(seconds=30)
    assert check(world, when + timedelta(minutes=5))["released"] == 0
    assert queued(world) == []
    # Hidden again by the organizer: the spent schedule does not release them a second time.
    cli(world, "phase", T3, "A", name, "--results", "hidden")
    assert check(world, when + timedelta(minutes=10))["released"] == 0
    assert queued(world) == []


def test_a_phase_whose_release_fails_leaves_the_release_before_it_done(
    world: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.models import Phase
    from leaderboard.services.notify import notices
    from tests.runs import post_evaluation_phases

    when = datetime(2030, 1, 1, tzinfo=UTC)
    for subtask in ("A", "B"):
        name = post_evaluation_phases(T3, subtask)[0]
        cli(
            world,
            "phase",
            T3,
            subtask,
            name,
            "--results",
            "hidden",
            "--release-at",
            when.isoformat(),
        )
    release = notices.release_due
    calls: list[int] = []

    def second_fails(session: Session, phase: Phase, now: datetime) -> int | None:
        calls.append(phase.id)
        mails = release(session, phase, now)
        if len(calls) == 2:
            raise RuntimeError("the mail server's address book is gone")
        return mails

    monkeypatch.setattr(notices, "release_due", second_fails)
    with pytest.raises(RuntimeError, match="address book is gone"):
        check(world, when + timedelta(seconds=30))
    assert audit_actions(world, "release-results") == 1  # the second rolled back
    assert recipients(world) == RELEASED_TO
    monkeypatch.setattr(notices, "release_due", release)
    assert check(world, when + timedelta(minutes=1))["released"] == 1


def test_worker_once_runs_the_campaign_check(world: Flask) -> None:
    from tests.runs import post_evaluation_phases

    name = post_evaluation_phases(T3, "A")[0]
    clock = world.extensions["leaderboard"]["clock"]
    cli(
        world, "phase", T3, "A", name, "--results", "hidden", "--release-at", "2020-01-10T06:00:00Z"
    )
    clock.set(datetime(2020, 1, 10, 5, 59, tzinfo=UTC))
    assert "campaign" not in cli(world, "worker", "--once")
    clock.set(datetime(2020, 1, 10, 6, 1, tzinfo=UTC))
    assert "1 release(s); 3 notification(s) queued" in cli(world, "worker", "--once")
    assert "campaign" not in cli(world, "worker", "--once")


DEADLINE = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
WAITING = ["bob@example.org", "carl@example.org", "dora@example.org"]


def test_the_deadline_notice_goes_out_in_its_window_once(world: Flask) -> None:
    from tests.runs import post_evaluation_phases

    name = post_evaluation_phases(T3, "A")[0]
    cli(world, "phase", T3, "A", name, "--end", DEADLINE.isoformat())
    queued(world)
    assert check(world, DEADLINE - timedelta(hours=24, minutes=1))["deadline_mails"] == 0
    assert queued(world) == []
    assert check(world, DEADLINE - timedelta(hours=23, minutes=30))["deadline_mails"] == 3
    assert recipients(world) == WAITING
    assert check(world, DEADLINE - timedelta(hours=23, minutes=10))["deadline_mails"] == 0
    assert check(world, DEADLINE - timedelta(hours=2))["deadline_mails"] == 0
    assert queued(world) == []


def test_a_deadline_notice_whose_mails_fail_is_not_marked_sent(
    world: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.services.notify import notices
    from tests.runs import post_evaluation_phases

    name = post_evaluation_phases(T3, "A")[0]
    cli(world, "phase", T3, "A", name, "--end", DEADLINE.isoformat())
    queued(world)

    def broken(*_: object, **__: object) -> int:
        raise RuntimeError("no mail today")

    monkeypatch.setattr(notices, "notify_all", broken)
    with pytest.raises(RuntimeError, match="no mail today"):
        check(world, DEADLINE - timedelta(hours=23, minutes=30))
    monkeypatch.undo()
    # The notice's key rolled back with its phase: the next check sends it.
    assert check(world, DEADLINE - timedelta(hours=23, minutes=29))["deadline_mails"] == 3
    assert recipients(world) == WAITING


def test_the_deadline_notice_leaves_out_opted_out_members_and_a_late_check_sends_none(
    world: Flask,
) -> None:
    from tests.notify_world import turn_off
    from tests.runs import post_evaluation_phases

    turn_off(world, "carl@example.org", "deadline")
    name = post_evaluation_phases(T3, "A")[0]
    cli(world, "phase", T3, "A", name, "--end", DEADLINE.isoformat())
    queued(world)
    # Past the window (less than 23 hours left): too late for a "24 hours" notice.
    assert check(world, DEADLINE - timedelta(hours=22, minutes=59))["deadline_mails"] == 0
    assert check(world, DEADLINE - timedelta(hours=23, minutes=59))["deadline_mails"] == 2
    assert recipients(world) == ["bob@example.org", "dora@example.org"]


def test_a_delivered_notification_keeps_its_unsubscribe_link_whole(
    make_app: AppFactory, server: MailServer
) -> None:
    """Through the worker's task body and a real SMTP server, the long link is not folded away."""
    from tests import dispatch
    from tests.accounts import mailing

    app = make_app(**mailing(server))
    make_participant(app, "Aurora", "ann@example.org")
    assert send_to(app, "ann@example.org", "organizer_messages")
    dispatch.flush()
    [message] = server.inbox.wait_for("ann@example.org")
    raw = dict(message.raw_items())["List-Unsubscribe"]
    assert "=?" not in raw  # not an encoded word: mail clients would not read it
    path = unsubscribe_path(message)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert app.test_client().post(path).status_code == 200
    assert off_kinds(app, "ann@example.org") == {"organizer_messages"}
