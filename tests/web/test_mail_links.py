"""Links in mail start with the configured base URL, never with the request's Host header."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from flask import Flask
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, User
from tests import dispatch
from tests.accounts import BASE, PASSWORD, last_link, mails_to, sign_up, user_row
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.queued_mail import queued
from tests.runs import make_organizer, make_participant
from tests.smtp import MailServer, link_in

ALICE = "alice@example.org"
NEW = "dana@example.org"
ORG = "org@example.org"
EVIL = {"Host": "evil.example"}
T3 = "semeval2016-task3"
NOW = datetime(2020, 1, 10, tzinfo=UTC)
DEADLINE = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)


def _unconfigured(make_app: AppFactory, server: MailServer) -> Flask:
    """An app mailing through the loopback server, with neither a base nor a site URL."""
    app = make_app(mail_url=f"smtp://{server.host}:{server.port}")
    make_participant(app, "Aurora", ALICE, PASSWORD)
    make_organizer(app, ORG)
    return app


def _says_why(text: str) -> bool:
    return "no base URL" in text and "LEADERBOARD_BASE_URL" in text


def _audit(app: Flask) -> list[str]:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return list(session.scalars(select(AuditEvent.action)))


def test_a_forged_host_never_reaches_a_reset_link(make_app: AppFactory, server: MailServer) -> None:
    app = _unconfigured(make_app, server)
    client = app.test_client()
    page = client.get("/password/forgot", headers=EVIL)
    assert page.status_code == 503 and _says_why(page.get_data(as_text=True))
    # The session cookie is the forged host's, as a client sending that header would get it.
    token = csrf_from(client.get("/login", headers=EVIL).get_data(as_text=True))
    resp = client.post("/password/forgot", data={"email": ALICE, "csrf_token": token}, headers=EVIL)
    assert resp.status_code == 503 and _says_why(resp.get_data(as_text=True))
    assert mails_to(server.inbox, ALICE) == []


def test_without_a_base_url_sign_up_and_resend_refuse_and_store_nothing(
    make_app: AppFactory, server: MailServer
) -> None:
    app = _unconfigured(make_app, server)
    client = app.test_client()
    for path in ("/signup", "/verify/resend"):
        page = client.get(path)
        assert page.status_code == 503 and _says_why(page.get_data(as_text=True)), path
    token = csrf_from(client.get("/login").get_data(as_text=True))
    form = {
        "email": NEW,
        "display_name": "Dana",
        "password": PASSWORD,
        "password_confirm": PASSWORD,
        "csrf_token": token,
    }
    assert client.post("/signup", data=form).status_code == 503
    assert (
        client.post("/verify/resend", data={"email": NEW, "csrf_token": token}).status_code == 503
    )
    assert user_row(app, NEW) is None
    assert mails_to(server.inbox, NEW) == []


def test_without_a_base_url_the_organizer_cannot_invite_or_resend(
    make_app: AppFactory, server: MailServer
) -> None:
    app = _unconfigured(make_app, server)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.services.accounts.core import find_user

        find_user(session, ALICE).verified_at = None
        alice_id = find_user(session, ALICE).id
        session.commit()
    org = app.test_client()
    login(org, ORG, "organizer password")
    before = _audit(app)
    for path, data in (
        ("/organizer/users/invite", {"email": NEW}),
        (f"/organizer/users/{alice_id}/resend", {}),
    ):
        token = csrf_from(org.get("/organizer/users").get_data(as_text=True))
        resp = org.post(path, data={**data, "csrf_token": token})
        assert resp.status_code == 503 and _says_why(resp.get_data(as_text=True)), path
    assert _audit(app) == before
    assert mails_to(server.inbox, NEW) == [] and mails_to(server.inbox, ALICE) == []


@pytest.mark.parametrize("command", ["invite", "resend-verification"])
def test_without_a_base_url_the_mailing_commands_exit_1(
    make_app: AppFactory, server: MailServer, command: str
) -> None:
    app = _unconfigured(make_app, server)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.services.accounts.core import find_user

        find_user(session, ALICE).verified_at = None
        session.commit()
    before = _audit(app)
    target = NEW if command == "invite" else ALICE
    result = app.test_cli_runner().invoke(args=["leaderboard", command, target])
    assert result.exit_code == 1
    assert "Error: " in result.output and _says_why(result.output)
    assert _audit(app) == before
    assert mails_to(server.inbox, target) == []


def test_a_configured_base_url_wins_over_the_host(make_app: AppFactory, server: MailServer) -> None:
    app = make_app(mail_url=f"smtp://{server.host}:{server.port}", base_url=BASE)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    client = app.test_client()
    page = client.get("/password/forgot", headers=EVIL)
    token = csrf_from(page.get_data(as_text=True))
    resp = client.post("/password/forgot", data={"email": ALICE, "csrf_token": token}, headers=EVIL)
    assert resp.status_code == 200
    assert last_link(server.inbox, ALICE).startswith("/password/reset/")


def test_the_site_url_serves_when_no_base_url_is_set(
    make_app: AppFactory, server: MailServer
) -> None:
    app = make_app(
        mail_url=f"smtp://{server.host}:{server.port}", site_url="https://site.example.org/"
    )
    assert sign_up(app.test_client(), NEW).status_code == 200
    (message,) = server.inbox.wait_for(NEW)
    assert link_in(message).startswith("https://site.example.org/verify/")
    dispatch.flush()


def test_the_login_page_still_works_without_a_base_url(make_app: AppFactory) -> None:
    # Only what mails a link refuses; the rest of the site serves as usual.
    app = make_app()
    make_participant(app, "Aurora", ALICE, PASSWORD)
    assert app.test_client().get("/").status_code == 200
    client = app.test_client()
    login(client, ALICE, PASSWORD)
    assert client.get("/account").status_code == 200


# ---- every link of every mail kind is absolute

#: A site path written where a link is expected: after a space, bracket, quote, ":" or "=".
_BARE_PATH = re.compile(r"""(?:^|[\s(\["'=:])/[A-Za-z#?]""", re.MULTILINE)
_URL = re.compile(r"""https?://[^\s"'<>)\]]+""")
ELSEWHERE = "https://elsewhere.example.com/page"
MESSAGE = (
    "See [the results](/tasks/semeval2016-task3/A), [your team](team), the ![logo](/static/x.png),\n"
    f"[the rules][rules] and [another site]({ELSEWHERE}).\n\n"
    "[rules]: /tasks/semeval2016-task3\n"
)


def _parts(message: EmailMessage) -> list[tuple[str, str]]:
    return [
        (part.get_content_type(), part.get_content())
        for part in message.walk()
        if part.get_content_maintype() == "text"
    ]


def _every_mail(app: Flask) -> list[EmailMessage]:
    """Make the server write one mail of each kind it sends; return them all."""
    from leaderboard.services.common.mail import Transport
    from leaderboard.services.notify.messages import Message, send_message
    from leaderboard.services.notify.notices import join_decided, join_requested, run_refused
    from leaderboard.services.signup.notices import Outbox
    from leaderboard.unit_of_work import unit_of
    from leaderboard.worker.jobs import campaign_check
    from tests.runs import post_evaluation_phases

    def cli(*args: str) -> None:
        result = app.test_cli_runner().invoke(args=["leaderboard", *args])
        assert result.exit_code == 0, result.output

    ext = app.extensions["leaderboard"]
    name = post_evaluation_phases(T3, "A")[0]
    cli("phase", T3, "A", name, "--results", "hidden")
    cli("phase", T3, "A", name, "--results", "visible", "--end", DEADLINE.isoformat())
    with ext["sessionmaker"]() as session:
        users = {u.email: u for u in session.scalars(select(User))}
        team = users[ALICE].team
        outbox = Outbox(Transport("null"), "lb@example.org", "s", BASE, "LB", NOW, session)
        for send in (outbox.verification, outbox.already_registered, outbox.pending, outbox.reset):
            send(users["ed@example.org"])
        outbox.invitation(NEW, ORG)
        join_requested(session, team, users["ed@example.org"])
        join_decided(session, team, users["ed@example.org"], accepted=True)
        join_decided(session, team, users["ed@example.org"], accepted=False)
        session.commit()
        with unit_of(session):
            run_refused(session, users[ALICE], T3, "A", "The file is empty.", [])
        campaign_check(session, DEADLINE - timedelta(hours=23, minutes=30))
        message = Message(T3, "members", "", "Results are out", MESSAGE)
        with unit_of(session):
            send_message(session, message, actor=ORG, now=NOW)
    return queued(app)


def test_every_link_in_every_mail_is_absolute(make_app: AppFactory) -> None:
    from tests.notify_world import build

    app = make_app(base_url=BASE, clock=FixedClock(NOW))
    build(app)
    make_organizer(app, ORG)
    queued(app)
    mails = _every_mail(app)
    subjects = {str(m["Subject"]).split("] ", 1)[1] for m in mails}
    assert {
        "Confirm your e-mail address",
        "You already have an account",
        "This address is already signed up",
        "Set a new password",
        "You are invited",
        "Results released: semeval2016-task3 A",
        "Run refused: semeval2016-task3 A",
        "24 hours left: semeval2016-task3 A (post-evaluation)",
        "You joined Aurora",
        "Results are out",
    } <= subjects, subjects
    for message in mails:
        for kind, text in _parts(message):
            where = f"{message['Subject']} ({kind})"
            assert not _BARE_PATH.search(text), (where, text)
            assert 'href="/' not in text and 'src="/' not in text, where
            for url in _URL.findall(text):
                assert url.startswith(f"{BASE}/") or url == ELSEWHERE, (where, url)
    # The site's pages are named in the mails that announce them, as absolute links.
    by_subject = {str(m["Subject"]): "\n".join(t for _, t in _parts(m)) for m in mails}
    released = next(t for s, t in by_subject.items() if "Results released" in s)
    assert f"{BASE}/tasks/semeval2016-task3/A" in released
    asked = next(t for s, t in by_subject.items() if "asks to join" in s)
    assert f"{BASE}/team" in asked
    html = next(
        p
        for m in mails
        if "Results are out" in str(m["Subject"])
        for p in _parts(m)
        if p[0] == "text/html"
    )[1]
    assert f'href="{BASE}/tasks/semeval2016-task3/A"' in html
    assert f'href="{BASE}/team"' in html and f'src="{BASE}/static/x.png"' in html
    assert f'href="{BASE}/tasks/semeval2016-task3"' in html
