"""The organizer's users and settings pages, and the invite and resend commands."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from leaderboard.models import AuditEvent
from tests import dispatch
from tests.accounts import PASSWORD, confirm, last_link, mailing, post_form, sign_up, user_row
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_organizer, make_participant, token_for
from tests.smtp import MailServer

ORG = "org@example.org"
ALICE = "alice@example.org"
NEW = "dana@example.org"


@pytest.fixture
def site(make_app: AppFactory, server: MailServer) -> Flask:
    app = make_app(**mailing(server))
    make_organizer(app, ORG)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    return app


@pytest.fixture
def org(site: Flask) -> FlaskClient:
    client = site.test_client()
    login(client, ORG, "organizer password")
    return client


def audit(app: Flask, action: str) -> list[dict[str, object]]:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(AuditEvent).where(AuditEvent.action == action)).all()
        return [{"actor": r.actor, **r.details} for r in rows]


def user_id(app: Flask, email: str) -> int:
    user = user_row(app, email)
    assert user is not None
    return user.id


def act(org: FlaskClient, path: str, data: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    token = csrf_from(org.get("/organizer/users").get_data(as_text=True))
    return org.post(path, data={**(data or {}), "csrf_token": token})


def test_the_dashboard_links_users_and_settings(org: FlaskClient) -> None:
    page = org.get("/organizer/").get_data(as_text=True)
    assert 'href="/organizer/users"' in page and 'href="/organizer/settings"' in page


def test_disable_and_enable_are_audited_and_take_effect(site: Flask, org: FlaskClient) -> None:
    alice = site.test_client()
    login(alice, ALICE, PASSWORD)
    token = token_for(site, ALICE)
    uid = user_id(site, ALICE)
    disabled = act(org, f"/organizer/users/{uid}/disable")
    assert disabled.status_code == 302
    assert "every API token was revoked" in org.get("/organizer/users").get_data(as_text=True)
    assert user_row(site, ALICE).is_active is False  # type: ignore[union-attr]
    assert alice.get("/account").status_code == 302
    assert audit(site, "disable-user") == [{"actor": ORG, "email": ALICE}]
    page = org.get("/organizer/users").get_data(as_text=True)
    assert "disabled" in page
    assert act(org, f"/organizer/users/{uid}/enable").status_code == 302
    assert audit(site, "enable-user") == [{"actor": ORG, "email": ALICE}]
    login(site.test_client(), ALICE, PASSWORD)
    # The tokens stay revoked after enabling.
    api = site.test_client().get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 401
    # Refusals: one's own account, an unknown action, an unknown account.
    act(org, f"/organizer/users/{user_id(site, ORG)}/disable")
    assert user_row(site, ORG).is_active is True  # type: ignore[union-attr]
    assert act(org, f"/organizer/users/{uid}/delete").status_code == 404
    assert act(org, "/organizer/users/999999/disable").status_code == 404


def test_resend_verification_mails_an_unverified_account(
    site: Flask, org: FlaskClient, server: MailServer
) -> None:
    sign_up(site.test_client(), NEW)
    server.inbox.wait_for(NEW)
    assert act(org, f"/organizer/users/{user_id(site, NEW)}/resend").status_code == 302
    link = last_link(server.inbox, NEW, 2)
    assert audit(site, "resend-verification") == [{"actor": ORG, "email": NEW}]
    assert confirm(site.test_client(), link).status_code == 302
    # A verified account gets nothing.
    assert act(org, f"/organizer/users/{user_id(site, ALICE)}/resend").status_code == 302
    assert "verified already" in org.get("/organizer/users").get_data(as_text=True)
    assert dispatch.flush() is None and server.inbox.to(ALICE) == []


def test_an_invitation_prefills_and_requires_its_address(
    site: Flask, org: FlaskClient, server: MailServer
) -> None:
    from leaderboard.services.common.settings import set_value
    from leaderboard.unit_of_work import unit_of

    with site.extensions["leaderboard"]["sessionmaker"]() as session, unit_of(session):
        set_value(session, "registration", "invite", actor="test")
    assert act(org, "/organizer/users/invite", {"email": NEW}).status_code == 302
    assert audit(site, "invite-user") == [{"actor": ORG, "email": NEW}]
    link = last_link(server.inbox, NEW)
    assert link.startswith("/signup?invitation=")
    client = site.test_client()
    page = client.get(link)
    assert page.status_code == 200 and f'value="{NEW}"' in page.get_data(as_text=True)
    other = sign_up(client, "someone@example.org", query=link.removeprefix("/signup"))
    assert other.status_code == 400 and "This invitation is for" in other.get_data(as_text=True)
    assert sign_up(client, NEW, query=link.removeprefix("/signup")).status_code == 200
    assert user_row(site, NEW) is not None
    tampered = client.get(link[:-4] + "AAAA")
    assert tampered.status_code == 400 and "not valid" in tampered.get_data(as_text=True)
    # Known addresses and bad ones are refused; no mail goes out.
    assert act(org, "/organizer/users/invite", {"email": ALICE}).status_code == 409
    assert act(org, "/organizer/users/invite", {"email": "no address"}).status_code == 400
    dispatch.flush()
    assert server.inbox.to(ALICE) == []


def test_settings_page_shows_and_sets_every_setting(site: Flask, org: FlaskClient) -> None:
    page = org.get("/organizer/settings").get_data(as_text=True)
    for name in ("registration", "max_team_size", "site_name", "terms"):
        assert f'name="{name}"' in page
    values = {
        "registration": "closed",
        "max_team_size": "4",
        "site_name": "SemEval <2016>",
        "terms": "Be kind.",
    }
    assert post_form(org, "/organizer/settings", values).status_code == 302
    shown = org.get("/organizer/settings").get_data(as_text=True)
    assert "SemEval &lt;2016&gt;" in shown and "Be kind." in shown
    changes = {e["name"]: e["new"] for e in audit(site, "set-setting")}
    assert changes == {
        "registration": "closed",
        "max_team_size": "4",
        "site_name": "SemEval <2016>",
        "terms": "Be kind.",
    }
    assert "Registration is closed" in site.test_client().get("/signup").get_data(as_text=True)
    # A bad value changes nothing, not even the good values posted with it.
    bad = post_form(
        org, "/organizer/settings", {**values, "registration": "open", "max_team_size": "lots"}
    )
    assert bad.status_code == 400 and "lots" in bad.get_data(as_text=True)
    result = site.test_cli_runner().invoke(args=["leaderboard", "settings", "registration"])
    assert result.output.strip() == "registration = closed"


def test_participants_and_visitors_are_kept_out(site: Flask) -> None:
    alice = site.test_client()
    login(alice, ALICE, PASSWORD)
    for path in ("/organizer/users", "/organizer/settings"):
        assert alice.get(path).status_code == 403
        assert site.test_client().get(path).status_code == 302
    token = csrf_from(alice.get("/account").get_data(as_text=True))
    assert (
        alice.post("/organizer/users/invite", data={"email": NEW, "csrf_token": token}).status_code
        == 403
    )
    assert audit(site, "invite-user") == []


def test_organizer_forms_refuse_a_post_without_csrf(site: Flask, org: FlaskClient) -> None:
    uid = user_id(site, ALICE)
    for path, data in (
        (f"/organizer/users/{uid}/disable", {}),
        ("/organizer/users/invite", {"email": NEW}),
        (
            "/organizer/settings",
            {"registration": "closed", "max_team_size": "3", "site_name": "x", "terms": ""},
        ),
    ):
        assert org.post(path, data=data).status_code == 400, path
    assert user_row(site, ALICE).is_active is True  # type: ignore[union-attr]
    assert audit(site, "invite-user") == [] and audit(site, "set-setting") == []


def test_invite_and_resend_commands(site: Flask, server: MailServer) -> None:
    runner = site.test_cli_runner()
    invited = runner.invoke(args=["leaderboard", "invite", NEW])
    assert invited.exit_code == 0, invited.output
    assert last_link(server.inbox, NEW).startswith("/signup?invitation=")
    known = runner.invoke(args=["leaderboard", "invite", ALICE])
    assert known.exit_code == 1 and "already has an account" in known.output
    sign_up(site.test_client(), "eve@example.org")
    server.inbox.wait_for("eve@example.org")
    resent = runner.invoke(args=["leaderboard", "resend-verification", "eve@example.org"])
    assert resent.exit_code == 0, resent.output
    assert (
        confirm(site.test_client(), last_link(server.inbox, "eve@example.org", 2)).status_code
        == 302
    )
    verified = runner.invoke(args=["leaderboard", "resend-verification", ALICE])
    assert verified.exit_code == 1 and "verified already" in verified.output


def test_commands_need_a_base_url(make_app: AppFactory) -> None:
    app = make_app()
    result = app.test_cli_runner().invoke(args=["leaderboard", "invite", NEW])
    assert result.exit_code == 1 and "LEADERBOARD_BASE_URL" in result.output
    assert user_row(app, NEW) is None


def test_hostile_names_are_escaped_on_the_users_page(site: Flask, org: FlaskClient) -> None:
    hostile = "<script>alert(1)</script>"
    sign_up(site.test_client(), NEW, display_name=hostile, affiliation='O"Brien & <b>Co</b>')
    page = org.get("/organizer/users").get_data(as_text=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and hostile not in page
    assert "O&#34;Brien &amp; &lt;b&gt;Co&lt;/b&gt;" in page
