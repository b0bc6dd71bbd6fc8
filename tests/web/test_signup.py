"""Self-service accounts over the web: sign-up, verification, log-in refusals, modes, limits."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from leaderboard.clock import FixedClock
from leaderboard.services.common.throttle import REQUEST_LIMITS
from tests import dispatch
from tests.accounts import (
    PASSWORD,
    Work,
    confirm,
    counting,
    last_link,
    mailing,
    mails_to,
    post_form,
    sign_up,
    user_row,
)
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_organizer, make_participant, token_for
from tests.smtp import MailServer, body_of

T0 = datetime(2016, 1, 20, 9, 0, tzinfo=UTC)
NEW = "dana@example.org"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def site(make_app: AppFactory, server: MailServer, clock: FixedClock) -> Flask:
    """An app mailing through the loopback server, with links under BASE and a fixed clock."""
    return make_app(clock=clock, **mailing(server))


@pytest.fixture
def web(site: Flask) -> FlaskClient:
    return site.test_client()


def settings_cmd(app: Flask, name: str, value: str) -> None:
    result = app.test_cli_runner().invoke(args=["leaderboard", "settings", name, value])
    assert result.exit_code == 0, result.output


def refused_sign_up(client: FlaskClient, query: str = "") -> TestResponse:
    """Post the sign-up form where the page shows none (with another page's CSRF token)."""
    token = csrf_from(client.get("/login").get_data(as_text=True))
    data = {"email": NEW, "display_name": "D", "password": PASSWORD, "password_confirm": PASSWORD}
    return client.post(f"/signup{query}", data={**data, "csrf_token": token})


def test_sign_up_verify_and_log_in(site: Flask, web: FlaskClient, server: MailServer) -> None:
    resp = sign_up(web, NEW)
    assert resp.status_code == 200
    assert "Check your mail" in resp.get_data(as_text=True)
    user = user_row(site, NEW)
    assert user is not None and user.verified_at is None and user.team_id is None
    assert user.role == "participant" and user.display_name == "Dana Doe"
    assert user.affiliation == "Example University"
    message = server.inbox.wait_for(NEW)[0]
    assert "Confirm your e-mail address" in message["Subject"]
    link = last_link(server.inbox, NEW)
    assert link.startswith("/verify/")

    # Unverified: the right password opens no session and offers to resend the link.
    page = web.get("/login").get_data(as_text=True)
    refused = web.post(
        "/login", data={"email": NEW, "password": PASSWORD, "csrf_token": csrf_from(page)}
    )
    assert refused.status_code == 403
    text = refused.get_data(as_text=True)
    assert "not verified" in text and 'action="/verify/resend"' in text
    assert web.get("/account").status_code == 302

    # Opening the link (a mail scanner's GET) changes nothing; the button verifies.
    assert web.get(link).status_code == 200
    assert user_row(site, NEW).verified_at is None  # type: ignore[union-attr]
    done = confirm(web, link)
    assert done.status_code == 302 and done.headers["Location"] == "/login"
    assert user_row(site, NEW).verified_at == T0  # type: ignore[union-attr]
    assert web.get("/login").status_code == 200
    again = web.get(link)
    assert again.status_code == 200 and "already verified" in again.get_data(as_text=True)

    login(web, NEW, PASSWORD)
    account = web.get("/account")
    assert account.status_code == 200 and 'href="/account/tokens"' in account.get_data(as_text=True)
    # A new account has no team: the team page offers to create one, uploads refuse cleanly.
    team = web.get("/team")
    assert team.status_code == 200 and 'href="/teams/new"' in team.get_data(as_text=True)
    resp = web.get("/tasks/semeval2016-task3/A/submit")
    assert resp.status_code == 403 and "/teams/new" in resp.get_data(as_text=True)
    for path in ("/", "/tasks/semeval2016-task3", "/tasks/semeval2016-task3/A"):
        assert web.get(path).status_code == 200, path
    assert ">Account<" in web.get("/").get_data(as_text=True)
    assert web.get("/runs/1").status_code == 404
    token = token_for(site, NEW)
    upload = site.test_client().post(
        "/api/v1/tasks/semeval2016-task3/A/runs",
        data={"slot": "primary", "file": (io.BytesIO(b"x"), "run.txt")},
        headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data",
    )
    assert upload.status_code == 403 and "not in a team" in upload.get_json()["error"]


def test_the_nav_offers_sign_up_to_visitors(web: FlaskClient) -> None:
    home = web.get("/").get_data(as_text=True)
    assert 'href="/signup"' in home and 'href="/login"' in home and ">Account<" not in home


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"password": "short 1", "password_confirm": "short 1"}, "at least 10 characters"),
        (
            {
                "password": "my shared-task leaderboard!",
                "password_confirm": "my shared-task leaderboard!",
            },
            "site&#39;s name",
        ),
        ({"password": "dana@example.org!!", "password_confirm": "dana@example.org!!"}, "e-mail"),
        ({"password": "xx DANA yy zz 1", "password_confirm": "xx DANA yy zz 1"}, "local part"),
        ({"password_confirm": "something else entirely"}, "The two passwords differ"),
        ({"display_name": ""}, "Enter your name"),
        ({"email": "not-an-address"}, "Enter an e-mail address"),
    ],
)
def test_sign_up_refusals_echo_the_problem(
    site: Flask, web: FlaskClient, server: MailServer, change: dict[str, str], message: str
) -> None:
    resp = sign_up(web, change.pop("email", NEW), **change)
    assert resp.status_code == 400
    assert message in resp.get_data(as_text=True)
    assert user_row(site, NEW) is None
    assert mails_to(server.inbox, NEW) == []


def test_terms_are_shown_and_must_be_accepted(site: Flask, web: FlaskClient) -> None:
    settings_cmd(site, "terms", "Play fair & cite the task paper.")
    page = web.get("/signup").get_data(as_text=True)
    assert "Play fair &amp; cite the task paper." in page and 'name="accept_terms"' in page
    refused = sign_up(web, NEW)
    assert refused.status_code == 400 and "Accept the terms" in refused.get_data(as_text=True)
    assert user_row(site, NEW) is None
    assert sign_up(web, NEW, accept_terms="y").status_code == 200
    assert user_row(site, NEW).terms_accepted_at == T0  # type: ignore[union-attr]


def test_a_disabled_account_cannot_log_in(site: Flask, web: FlaskClient) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    assert (
        site.test_cli_runner()
        .invoke(args=["leaderboard", "disable-user", "alice@example.org"])
        .exit_code
        == 0
    )
    page = web.get("/login").get_data(as_text=True)
    resp = web.post(
        "/login",
        data={"email": "alice@example.org", "password": PASSWORD, "csrf_token": csrf_from(page)},
    )
    assert resp.status_code == 401
    assert web.get("/account").status_code == 302


# ------------------------------------------------------------------------------ no enumeration


def _without(text: str, address: str) -> str:
    # Only the echoed address may differ (and the CSRF token of the next form).
    return text.replace(address, "ADDRESS")


def test_sign_up_with_a_known_address_answers_like_a_new_one(
    site: Flask, server: MailServer
) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    known = sign_up(site.test_client(), "alice@example.org", "another fine password")
    new = sign_up(site.test_client(), NEW)
    assert known.status_code == new.status_code == 200
    assert known.headers.get("Location") == new.headers.get("Location")
    assert _without(known.get_data(as_text=True), "alice@example.org") == _without(
        new.get_data(as_text=True), NEW
    )
    # The owner is told an account exists; the password stays theirs.
    hint = server.inbox.wait_for("alice@example.org")[0]
    assert "already has an account" in body_of(hint)
    assert last_link(server.inbox, "alice@example.org").startswith("/password/reset/")
    login(site.test_client(), "alice@example.org", PASSWORD)


@pytest.mark.parametrize(
    ("path", "what"), [("/password/forgot", "reset"), ("/verify/resend", "resend")]
)
def test_forgot_and_resend_answer_alike_and_mail_only_accounts(
    site: Flask, server: MailServer, path: str, what: str
) -> None:
    # An unverified account exists for both forms to find.
    sign_up(site.test_client(), NEW)
    server.inbox.wait_for(NEW)
    known = post_form(site.test_client(), path, {"email": NEW})
    unknown = post_form(site.test_client(), path, {"email": "nobody@example.org"})
    assert known.status_code == unknown.status_code == 200
    assert known.headers.get("Location") == unknown.headers.get("Location")
    assert _without(known.get_data(as_text=True), NEW) == _without(
        unknown.get_data(as_text=True), "nobody@example.org"
    )
    assert len(server.inbox.wait_for(NEW, 2)) == 2
    assert mails_to(server.inbox, "nobody@example.org") == []


def _posted(app: Flask, path: str, data: dict[str, str], remote: str) -> Work:
    """POST a form (its page fetched first, not counted) and return the work the POST did."""
    client = app.test_client()
    page = client.get(path, environ_base={"REMOTE_ADDR": remote}).get_data(as_text=True)
    with counting(app) as work:
        resp = client.post(
            path, data={**data, "csrf_token": csrf_from(page)}, environ_base={"REMOTE_ADDR": remote}
        )
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return work


def _signed_up(app: Flask, address: str, remote: str) -> Work:
    data = {
        "email": address,
        "display_name": "X",
        "password": "yet another password 9",
        "password_confirm": "yet another password 9",
    }
    return _posted(app, "/signup", data, remote)


def test_sign_up_does_the_same_work_for_every_kind_of_address(
    site: Flask, server: MailServer
) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)  # verified
    make_participant(site, "Aurora", "gone@example.org", PASSWORD)
    site.test_cli_runner().invoke(args=["leaderboard", "disable-user", "gone@example.org"])
    sign_up(site.test_client(), "pending@example.org", remote="10.9.9.9")
    works = {
        address: _signed_up(site, address, f"10.0.0.{i}")
        for i, address in enumerate(
            ("new@example.org", "alice@example.org", "pending@example.org", "gone@example.org")
        )
    }
    new = works.pop("new@example.org")
    assert (new.signed, new.composed, new.handed_on) == (1, 1, 1)
    for address, work in works.items():
        # The same statements (their parameters aside), one signed link, one mail built.
        assert work == new, address
    # Mail went to the new address and to the two live accounts, not to the disabled one.
    assert len(mails_to(server.inbox, "new@example.org")) == 1
    assert len(mails_to(server.inbox, "alice@example.org")) == 1
    assert len(mails_to(server.inbox, "pending@example.org")) == 2
    assert mails_to(server.inbox, "gone@example.org") == []


@pytest.mark.parametrize(
    ("path", "known"),
    [
        ("/password/forgot", "alice@example.org"),
        ("/verify/resend", NEW),
    ],
)
def test_forgot_and_resend_do_the_same_work_for_known_and_unknown_addresses(
    site: Flask, server: MailServer, path: str, known: str
) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    sign_up(site.test_client(), NEW, remote="10.9.9.9")  # unverified: resend finds it
    server.inbox.wait_for(NEW)
    found = _posted(site, path, {"email": known}, "10.0.0.1")
    unknown = _posted(site, path, {"email": "nobody@example.org"}, "10.0.0.2")
    assert (found.signed, found.composed, found.handed_on) == (1, 1, 1)
    assert unknown == found
    dispatch.flush()
    assert mails_to(server.inbox, "nobody@example.org") == []


# --------------------------------------------------------------------------------- the links


def test_verification_links_expire_after_7_days_and_refuse_tampering(
    site: Flask, web: FlaskClient, server: MailServer, clock: FixedClock
) -> None:
    sign_up(web, NEW)
    link = last_link(server.inbox, NEW)
    tampered = link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB")
    resp = web.get(tampered)
    assert resp.status_code == 400 and "not valid" in resp.get_data(as_text=True)
    assert web.get("/verify/" + "x" * 5000).status_code == 400
    # A reset link is no verification link (another salt).
    clock.set(T0 + timedelta(days=7, minutes=1))
    expired = web.get(link)
    assert expired.status_code == 410 and "expired" in expired.get_data(as_text=True)
    assert user_row(site, NEW).verified_at is None  # type: ignore[union-attr]
    # Resending gives a fresh link that works.
    post_form(web, "/verify/resend", {"email": NEW})
    fresh = last_link(server.inbox, NEW, 2)
    assert confirm(web, fresh).status_code == 302
    assert user_row(site, NEW).verified_at is not None  # type: ignore[union-attr]


def test_a_second_sign_up_changes_nothing_of_a_pending_account(
    site: Flask, server: MailServer
) -> None:
    # A stranger signs up first with the owner's address; the owner signs up after.
    sign_up(site.test_client(), NEW, "strangers password 1", display_name="Stranger")
    strangers_link = last_link(server.inbox, NEW)
    before = user_row(site, NEW)
    again = sign_up(site.test_client(), NEW, "owners own password 2", display_name="Owner")
    assert again.status_code == 200 and "Check your mail" in again.get_data(as_text=True)
    after = user_row(site, NEW)
    assert before is not None and after is not None
    assert (after.password_hash, after.display_name, after.affiliation, after.verified_at) == (
        before.password_hash,
        before.display_name,
        before.affiliation,
        None,
    )
    # The second mail confirms nothing; it offers a reset, which sets the owner's password and
    # verifies the address.
    notice = server.inbox.wait_for(NEW, 2)[1]
    assert "Nothing changed" in body_of(notice)
    reset = last_link(server.inbox, NEW, 2)
    assert reset.startswith("/password/reset/")
    client = site.test_client()
    set_own = post_form(
        client,
        reset,
        {"password": "owners own password 2", "password_confirm": "owners own password 2"},
    )
    assert set_own.status_code == 302
    assert user_row(site, NEW).verified_at is not None  # type: ignore[union-attr]
    login(site.test_client(), NEW, "owners own password 2")
    # The stranger's link now verifies nothing and the stranger's password opens nothing.
    late = client.get(strangers_link)
    assert late.status_code == 200 and "already verified" in late.get_data(as_text=True)
    page = client.get("/login").get_data(as_text=True)
    refused = client.post(
        "/login",
        data={"email": NEW, "password": "strangers password 1", "csrf_token": csrf_from(page)},
    )
    assert refused.status_code == 401


def test_mail_to_an_unverified_address_carries_no_text_its_typist_chose(
    site: Flask, server: MailServer
) -> None:
    bait = "Security team: reply with your password"
    sign_up(site.test_client(), NEW, display_name=bait, affiliation="Reply to evil@example.org")
    sign_up(site.test_client(), NEW, display_name=bait)
    post_form(site.test_client(), "/verify/resend", {"email": NEW})
    post_form(site.test_client(), "/password/forgot", {"email": NEW})
    messages = server.inbox.wait_for(NEW, 4)
    assert len(messages) == 4
    for message in messages:
        body = body_of(message)
        assert body.splitlines()[0] == "Hello,", body
        assert "Security team" not in body and "evil@example.org" not in body
        assert "Security team" not in str(message["Subject"])


def test_a_team_invite_link_leads_to_the_team_after_verification(
    site: Flask, server: MailServer
) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    with site.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.services.accounts.core import find_team

        find_team(session, "Aurora").invite_code = "join-aurora-123"
        session.commit()
    settings_cmd(site, "registration", "invite")
    client = site.test_client()
    closed = client.get("/signup")
    assert closed.status_code == 200 and "by invitation only" in closed.get_data(as_text=True)
    assert refused_sign_up(client).status_code == 403
    assert refused_sign_up(client, "?invite=wrong-code").status_code == 403
    assert user_row(site, NEW) is None
    assert sign_up(client, NEW, query="?invite=join-aurora-123").status_code == 200
    done = confirm(client, last_link(server.inbox, NEW))
    assert done.status_code == 302
    assert done.headers["Location"] == "/login?next=/teams/join/join-aurora-123"
    page = client.get(done.headers["Location"]).get_data(as_text=True)
    resp = client.post(
        "/login?next=/teams/join/join-aurora-123",
        data={"email": NEW, "password": PASSWORD, "csrf_token": csrf_from(page)},
    )
    assert resp.status_code == 302 and resp.headers["Location"] == "/teams/join/join-aurora-123"


def _aurora_code(site: Flask, code: str = "join-aurora-123") -> None:
    with site.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.services.accounts.core import find_team

        find_team(session, "Aurora").invite_code = code
        session.commit()


def test_a_withdrawn_or_full_teams_code_admits_no_sign_up_in_invite_mode(site: Flask) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    make_participant(site, "Aurora", "amy@example.org", PASSWORD)
    _aurora_code(site)
    settings_cmd(site, "registration", "invite")
    settings_cmd(site, "max_team_size", "2")
    client = site.test_client()
    full = client.get("/signup?invite=join-aurora-123")
    assert full.status_code == 200 and "by invitation only" in full.get_data(as_text=True)
    assert refused_sign_up(client, "?invite=join-aurora-123").status_code == 403
    settings_cmd(site, "max_team_size", "3")
    withdrawn = site.test_cli_runner().invoke(args=["leaderboard", "withdraw-team", "Aurora"])
    assert withdrawn.exit_code == 0, withdrawn.output
    page = client.get("/signup?invite=join-aurora-123")
    assert page.status_code == 200 and "by invitation only" in page.get_data(as_text=True)
    assert refused_sign_up(client, "?invite=join-aurora-123").status_code == 403
    assert user_row(site, NEW) is None


def test_closed_registration_refuses_sign_up(site: Flask, web: FlaskClient) -> None:
    settings_cmd(site, "registration", "closed")
    page = web.get("/signup")
    assert page.status_code == 200 and "Registration is closed" in page.get_data(as_text=True)
    resp = refused_sign_up(web)
    assert resp.status_code == 403 and user_row(site, NEW) is None


@pytest.mark.parametrize("mode", ["open", "approval"])
def test_open_and_approval_modes_allow_sign_up(site: Flask, web: FlaskClient, mode: str) -> None:
    settings_cmd(site, "registration", mode)
    assert sign_up(web, NEW).status_code == 200
    assert user_row(site, NEW) is not None


# ------------------------------------------------------------------------------- rate limits


def test_sign_up_is_limited_per_account_and_per_address(site: Flask, clock: FixedClock) -> None:
    per_address, per_account = REQUEST_LIMITS["signup"]
    assert per_address >= 5 and per_account >= 5
    client = site.test_client()
    for i in range(per_account):
        assert sign_up(client, NEW, remote=f"10.1.0.{i}").status_code == 200
    over = sign_up(client, NEW, remote="10.1.1.1")
    assert over.status_code == 429 and int(over.headers["Retry-After"]) > 0
    for i in range(per_address):
        assert sign_up(client, f"u{i}@example.org", remote="10.2.0.1").status_code == 200
    assert sign_up(client, "one-more@example.org", remote="10.2.0.1").status_code == 429
    clock.set(T0 + timedelta(hours=1, seconds=1))
    assert sign_up(client, "one-more@example.org", remote="10.2.0.1").status_code == 200


@pytest.mark.parametrize(
    ("path", "action"), [("/password/forgot", "reset"), ("/verify/resend", "resend")]
)
def test_reset_and_resend_requests_are_limited(
    site: Flask, web: FlaskClient, path: str, action: str
) -> None:
    per_address, per_account = REQUEST_LIMITS[action]
    for _ in range(per_account):
        assert post_form(web, path, {"email": NEW}).status_code == 200
    over = post_form(web, path, {"email": NEW})
    assert over.status_code == 429 and "Retry-After" in over.headers
    # Unknown and known addresses are counted alike; another address is still free.
    assert post_form(web, path, {"email": "other@example.org"}).status_code == 200
    assert per_address >= 5


# -------------------------------------------------------------------------------------- CSRF


def test_every_new_form_refuses_a_post_without_its_csrf_token(
    site: Flask, web: FlaskClient, server: MailServer
) -> None:
    make_participant(site, "Aurora", "alice@example.org", PASSWORD)
    sign_up(web, NEW)
    verify_link = last_link(server.inbox, NEW)
    post_form(web, "/password/forgot", {"email": "alice@example.org"})
    reset_link = last_link(server.inbox, "alice@example.org")
    posts = {
        "/signup": {
            "email": "x@example.org",
            "display_name": "X",
            "password": PASSWORD,
            "password_confirm": PASSWORD,
        },
        verify_link: {},
        "/verify/resend": {"email": NEW},
        "/password/forgot": {"email": "alice@example.org"},
        reset_link: {
            "password": "a brand new password",
            "password_confirm": "a brand new password",
        },
    }
    for path, data in posts.items():
        assert web.post(path, data=data).status_code == 400, path
    assert user_row(site, "x@example.org") is None
    assert user_row(site, NEW).verified_at is None  # type: ignore[union-attr]
    login(web, "alice@example.org", PASSWORD)  # the password is unchanged
    for data in (
        {"display_name": "Changed"},
        {
            "current_password": PASSWORD,
            "password": "a brand new password",
            "password_confirm": "a brand new password",
        },
    ):
        assert web.post("/account", data=data).status_code == 400
    alice = user_row(site, "alice@example.org")
    assert alice is not None and alice.display_name == ""
    login(site.test_client(), "alice@example.org", PASSWORD)


def test_the_organizer_sees_a_sign_up(site: Flask, web: FlaskClient) -> None:
    make_organizer(site, "org@example.org")
    sign_up(web, NEW)
    org = site.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get("/organizer/users").get_data(as_text=True)
    assert NEW in page and "Dana Doe" in page and "Example University" in page


def test_an_address_list_is_no_address(site: Flask, web: FlaskClient, server: MailServer) -> None:
    for listed in ("victim@example.org,attacker@example.org", "victim,attacker@example.org"):
        resp = sign_up(web, listed)
        assert resp.status_code == 400
        assert "not an e-mail address" in resp.get_data(as_text=True) or (
            "Enter an e-mail address" in resp.get_data(as_text=True)
        )
    assert user_row(site, "victim,attacker@example.org") is None
    assert mails_to(server.inbox, "attacker@example.org") == []
    # An odd address made on the command line gets no mail, and the answer is the usual one.
    make_participant(site, "Aurora", "odd,one@example.org", PASSWORD)
    forgot = post_form(web, "/password/forgot", {"email": "odd,one@example.org"})
    assert forgot.status_code == 200
    assert mails_to(server.inbox, "odd,one@example.org") == []
