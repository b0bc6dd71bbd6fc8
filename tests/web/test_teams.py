"""Self-service teams in the browser: create, invite links, join requests, leave, captaincy."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent, JoinRequest, Team, User
from leaderboard.services.common import settings
from leaderboard.unit_of_work import opened, unit_of
from tests.conftest import csrf_from
from tests.helpers.teams import client_of, create, loose_participant, post
from tests.runs import accepted, api_upload, make_organizer, make_participant, oracle_run, token_for


def set_mode(app: Flask, name: str, value: str) -> None:
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        settings.set_value(unit.session, name, value, actor="test")


def team_named(session: Session, name: str) -> Team | None:
    session.expire_all()
    return session.scalar(select(Team).where(Team.name == name))


def user_by(session: Session, email: str) -> User:
    session.expire_all()
    user = session.scalar(select(User).where(User.email == email))
    assert user is not None
    return user


def code_of(session: Session, team: str) -> str:
    found = team_named(session, team)
    assert found is not None and found.invite_code
    return found.invite_code


@pytest.fixture
def carol(app: Flask) -> FlaskClient:
    loose_participant(app, "carol@example.org", "Carol C.")
    return client_of(app, "carol@example.org")


def test_creating_a_team_makes_the_creator_captain(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    assert carol.get("/team").status_code == 200
    assert "You are not in a team" in carol.get("/team").get_data(as_text=True)
    status, page = create(carol, "  Cassiopeia ", "Uni <b>Bold</b>")
    assert status == 200
    assert "Team Cassiopeia created; you are its captain." in page
    assert 'Carol C.</bdi> <strong class="captain">(captain)</strong>' in page
    assert "Uni &lt;b&gt;Bold&lt;/b&gt;" in page
    team = team_named(session, "Cassiopeia")
    assert team is not None and team.approved and team.affiliation == "Uni <b>Bold</b>"
    assert f"/teams/join/{team.invite_code}" in page
    carol_row = user_by(session, "carol@example.org")
    assert carol_row.team_id == team.id and carol_row.is_captain
    assert session.scalar(select(AuditEvent).where(AuditEvent.action == "create-team")) is not None


def test_creating_refusals(app: Flask, carol: FlaskClient, session: Session) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    assert create(carol, "Aurora")[0] == 409
    assert create(carol, "   ")[0] == 400
    assert create(carol, "x" * 256)[0] == 400
    assert create(carol, "Fine", "y" * 300)[0] == 400
    assert team_named(session, "Fine") is None
    # In a team already: the form redirects and a post is refused.
    assert create(carol, "Cassiopeia")[0] == 200
    assert carol.get("/teams/new").status_code == 302
    assert create(carol, "Second")[0] == 409
    assert team_named(session, "Second") is None
    make_organizer(app, "org@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    assert org.get("/teams/new").status_code == 403
    token = csrf_from(org.get("/").get_data(as_text=True))
    assert org.post("/teams/new", data={"csrf_token": token, "name": "Orgs"}).status_code == 403
    assert team_named(session, "Orgs") is None


def test_closed_registration_refuses_new_teams(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    set_mode(app, "registration", "closed")
    status, page = create(carol, "Cassiopeia")
    assert status == 403 and "Registration is closed" in page
    assert team_named(session, "Cassiopeia") is None


def test_approval_mode_team_waits_and_cannot_upload_until_approved(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    set_mode(app, "registration", "approval")
    create(carol, "Cassiopeia")
    team = team_named(session, "Cassiopeia")
    assert team is not None and team.approved is False
    assert "waiting for an organizer" in carol.get("/team").get_data(as_text=True)
    token = token_for(app, "carol@example.org")
    refused = api_upload(app.test_client(), token, oracle_run())
    assert refused.status_code == 403
    assert "waiting for an organizer's approval" in refused.get_json()["error"]
    make_organizer(app, "org@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    status, page = post(org, f"/organizer/teams/{team.id}/approve", "/organizer/teams/")
    assert status == 200 and "Team Cassiopeia approved." in page
    assert team_named(session, "Cassiopeia").approved  # type: ignore[union-attr]
    accepted(api_upload(app.test_client(), token, oracle_run()))


def test_invite_link_joins_at_once_in_open_mode(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    loose_participant(app, "dan@example.org")
    dan = client_of(app, "dan@example.org")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    page = dan.get(link).get_data(as_text=True)
    assert "Join team <bdi>Cassiopeia</bdi>" in page and "Join the team" in page
    assert user_by(session, "dan@example.org").team_id is None  # GET changes nothing
    status, page = post(dan, link, link)
    assert status == 200 and "You joined team Cassiopeia." in page
    dan_row = user_by(session, "dan@example.org")
    assert dan_row.team_id == team_named(session, "Cassiopeia").id  # type: ignore[union-attr]
    assert not dan_row.is_captain
    members = carol.get("/team").get_data(as_text=True)
    assert "dan@example.org" in members and "Carol C." in members


def test_invite_mode_also_joins_at_once(app: Flask, carol: FlaskClient, session: Session) -> None:
    create(carol, "Cassiopeia")
    set_mode(app, "registration", "invite")
    loose_participant(app, "dan@example.org")
    dan = client_of(app, "dan@example.org")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    assert post(dan, link, link)[0] == 200
    assert user_by(session, "dan@example.org").team_id is not None


def test_approval_mode_files_a_request_the_captain_accepts_or_declines(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    set_mode(app, "registration", "approval")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    for email in ("dan@example.org", "eve@example.org"):
        loose_participant(app, email)
    dan, eve = client_of(app, "dan@example.org"), client_of(app, "eve@example.org")
    assert "Ask the captain" in dan.get(link).get_data(as_text=True)
    status, page = post(dan, link, link)
    assert status == 200 and "was sent to its captain" in page
    assert "Waiting for the captain of <bdi>Cassiopeia</bdi>" in page
    assert user_by(session, "dan@example.org").team_id is None
    assert post(dan, link, "/team")[0] == 409  # asked already
    post(eve, link, link)
    requests = session.scalars(select(JoinRequest).order_by(JoinRequest.id)).all()
    assert [r.status for r in requests] == ["pending", "pending"]
    captain_page = carol.get("/team").get_data(as_text=True)
    assert "dan@example.org" in captain_page and "Accept" in captain_page
    # Only the captain decides.
    assert post(dan, f"/team/requests/{requests[1].id}/decline")[0] == 403
    status, page = post(carol, f"/team/requests/{requests[0].id}/accept")
    assert status == 200 and "dan@example.org joined the team." in page
    status, page = post(carol, f"/team/requests/{requests[1].id}/decline")
    assert status == 200 and "declined" in page
    session.expire_all()
    assert [r.status for r in session.scalars(select(JoinRequest).order_by(JoinRequest.id))] == [
        "accepted",
        "declined",
    ]
    assert user_by(session, "dan@example.org").team_id is not None
    assert user_by(session, "eve@example.org").team_id is None
    assert post(carol, f"/team/requests/{requests[1].id}/accept")[0] == 409  # decided already
    assert post(carol, "/team/requests/999999/accept")[0] == 404


def test_a_user_withdraws_their_own_request(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    set_mode(app, "registration", "approval")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    loose_participant(app, "dan@example.org")
    dan = client_of(app, "dan@example.org")
    post(dan, link, link)
    req = session.scalar(select(JoinRequest))
    assert req is not None
    assert post(carol, f"/team/requests/{req.id}/withdraw")[0] == 404  # not carol's request
    assert post(dan, f"/team/requests/{req.id}/withdraw")[0] == 200
    session.expire_all()
    assert session.get(JoinRequest, req.id).status == "withdrawn"  # type: ignore[union-attr]


def test_joining_refusals(app: Flask, carol: FlaskClient, session: Session) -> None:
    create(carol, "Cassiopeia")
    make_participant(app, "Aurora", "alice@example.org")
    alice = client_of(app, "alice@example.org")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    assert "You are already in team" in alice.get(link).get_data(as_text=True)
    assert post(alice, link, "/team")[0] == 409
    assert user_by(session, "alice@example.org").team.name == "Aurora"  # type: ignore[union-attr]
    assert alice.get("/teams/join/not-a-code").status_code == 404
    assert post(alice, "/teams/join/not-a-code", "/team")[0] == 404
    assert alice.get("/teams/join/" + "x" * 300).status_code == 404
    # Closed: nobody joins.
    set_mode(app, "registration", "closed")
    loose_participant(app, "dan@example.org")
    dan = client_of(app, "dan@example.org")
    assert post(dan, link, link)[0] == 403
    assert user_by(session, "dan@example.org").team_id is None


def test_a_full_team_refuses_joins_and_accepted_requests(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    set_mode(app, "max_team_size", "2")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    for email in ("dan@example.org", "eve@example.org", "fay@example.org"):
        loose_participant(app, email)
    assert post(client_of(app, "dan@example.org"), link, link)[0] == 200
    status, page = post(client_of(app, "eve@example.org"), link, link)
    assert status == 409 and "is full: it has the maximum of 2 members" in page
    assert user_by(session, "eve@example.org").team_id is None
    # A request filed while there was room cannot be accepted once the team is full.
    set_mode(app, "max_team_size", "3")
    set_mode(app, "registration", "approval")
    fay = client_of(app, "fay@example.org")
    post(fay, link, link)
    set_mode(app, "max_team_size", "2")
    req = session.scalar(select(JoinRequest))
    assert req is not None
    status, page = post(carol, f"/team/requests/{req.id}/accept")
    assert status == 409 and "is full" in page
    assert user_by(session, "fay@example.org").team_id is None


def test_regenerating_the_invite_link_invalidates_the_old_one(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    old = code_of(session, "Cassiopeia")
    status, page = post(carol, "/team/invite")
    assert status == 200 and "the old one no longer works" in page
    new = code_of(session, "Cassiopeia")
    assert new != old and f"/teams/join/{new}" in page
    loose_participant(app, "dan@example.org")
    dan = client_of(app, "dan@example.org")
    assert dan.get(f"/teams/join/{old}").status_code == 404
    assert dan.get(f"/teams/join/{new}").status_code == 200
    # A plain member sees no link and may not make one.
    post(dan, f"/teams/join/{new}", f"/teams/join/{new}")
    member_page = dan.get("/team").get_data(as_text=True)
    assert new not in member_page and 'id="invite-link"' not in member_page
    assert post(dan, "/team/invite")[0] == 403
    assert code_of(session, "Cassiopeia") == new


def join(app: Flask, session: Session, email: str, team: str = "Cassiopeia") -> FlaskClient:
    loose_participant(app, email)
    client = client_of(app, email)
    link = f"/teams/join/{code_of(session, team)}"
    assert post(client, link, link)[0] == 200
    return client


def test_captain_hands_over_and_removes_members(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    dan = join(app, session, "dan@example.org")
    join(app, session, "eve@example.org")
    dan_id = user_by(session, "dan@example.org").id
    eve_id = user_by(session, "eve@example.org").id
    carol_id = user_by(session, "carol@example.org").id
    # Members may not manage.
    assert post(dan, f"/team/members/{eve_id}/remove")[0] == 403
    assert post(dan, f"/team/members/{dan_id}/captain")[0] == 403
    status, page = post(carol, f"/team/members/{eve_id}/remove")
    assert status == 200 and "eve@example.org was removed" in page
    assert user_by(session, "eve@example.org").team_id is None
    assert post(carol, f"/team/members/{eve_id}/remove")[0] == 404  # not a member any more
    assert post(carol, f"/team/members/{carol_id}/remove")[0] == 400
    status, page = post(carol, f"/team/members/{dan_id}/captain")
    assert status == 200 and "dan@example.org is now the captain." in page
    assert user_by(session, "dan@example.org").is_captain
    assert not user_by(session, "carol@example.org").is_captain
    status, page = post(carol, "/team/leave")
    assert status == 200 and "You left team Cassiopeia." in page
    assert user_by(session, "carol@example.org").team_id is None
    assert team_named(session, "Cassiopeia") is not None
    audit = {e.action for e in session.scalars(select(AuditEvent))}
    assert {"remove-member", "hand-over-captaincy", "leave-team", "join-team"} <= audit


def test_the_last_member_leaving_deletes_a_team_without_runs_only(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    status, page = post(carol, "/team/leave")
    assert status == 200 and "so it was deleted" in page
    assert team_named(session, "Cassiopeia") is None
    # A team with a run stays, empty, with its run.
    make_participant(app, "Aurora", "alice@example.org")
    alice = client_of(app, "alice@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run()))
    status, page = post(alice, "/team/leave")
    assert status == 200 and "deleted" not in page
    aurora = team_named(session, "Aurora")
    assert aurora is not None and aurora.members == []
    assert "Aurora-primary" in str(
        app.test_client().get("/tasks/semeval2016-task3/A/results.json").get_json()
    )


def test_every_team_form_refuses_a_post_without_csrf(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    dan = join(app, session, "dan@example.org")
    dan_id = user_by(session, "dan@example.org").id
    code = code_of(session, "Cassiopeia")
    paths = [
        "/teams/new",
        f"/teams/join/{code}",
        "/team/invite",
        "/team/requests/1/accept",
        "/team/requests/1/decline",
        "/team/requests/1/withdraw",
        f"/team/members/{dan_id}/captain",
        f"/team/members/{dan_id}/remove",
        "/team/leave",
    ]
    for path in paths:
        resp = carol.post(path, data={"name": "Other"})
        assert resp.status_code == 400, path
        assert "security token" in resp.get_data(as_text=True)
    assert resp.status_code == 400
    assert dan.post("/team/leave").status_code == 400
    assert code_of(session, "Cassiopeia") == code
    assert user_by(session, "dan@example.org").team_id is not None
    assert user_by(session, "carol@example.org").is_captain
    assert team_named(session, "Other") is None


def test_hostile_team_names_are_escaped(app: Flask, carol: FlaskClient, session: Session) -> None:
    name = '<script>alert(1)</script> \u202eفريق "&'
    create(carol, name, "<img src=x onerror=1>")
    page = carol.get("/team").get_data(as_text=True)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=1&gt;" in page
    assert re.search(r"<bdi>&lt;script&gt;", page)
    loose_participant(app, "dan@example.org")
    join_page = (
        client_of(app, "dan@example.org")
        .get(f"/teams/join/{code_of(session, name)}")
        .get_data(as_text=True)
    )
    assert "<script>alert" not in join_page and "&lt;script&gt;" in join_page


# ------------------------------------------------------------ invite codes rotate (issue 19)


def test_removing_a_member_rotates_the_code_so_they_cannot_rejoin(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    dan = join(app, session, "dan@example.org")
    old = code_of(session, "Cassiopeia")
    dan_id = user_by(session, "dan@example.org").id
    assert post(carol, f"/team/members/{dan_id}/remove")[0] == 200
    new = code_of(session, "Cassiopeia")
    assert new != old
    assert dan.get(f"/teams/join/{old}").status_code == 404
    status, page = post(dan, f"/teams/join/{old}", "/team")
    assert status == 404 and "not valid" in page
    assert user_by(session, "dan@example.org").team_id is None
    assert f"/teams/join/{new}" in carol.get("/team").get_data(as_text=True)


def test_a_member_leaving_rotates_the_code(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    dan = join(app, session, "dan@example.org")
    old = code_of(session, "Cassiopeia")
    assert post(dan, "/team/leave")[0] == 200
    assert code_of(session, "Cassiopeia") != old
    assert post(dan, f"/teams/join/{old}", "/team")[0] == 404
    assert user_by(session, "dan@example.org").team_id is None


def test_a_leaving_captain_hands_over_to_the_longest_standing_member(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    # Eve's account is older (a lower id) but Dan joins first: join time decides, not age.
    loose_participant(app, "eve@example.org")
    join(app, session, "dan@example.org")
    eve = client_of(app, "eve@example.org")
    link = f"/teams/join/{code_of(session, 'Cassiopeia')}"
    assert post(eve, link, link)[0] == 200
    old = code_of(session, "Cassiopeia")
    status, page = post(carol, "/team/leave")
    assert status == 200 and "You left team Cassiopeia." in page
    assert "dan@example.org is now its captain" in page
    assert user_by(session, "carol@example.org").team_id is None
    assert user_by(session, "dan@example.org").is_captain
    assert not user_by(session, "eve@example.org").is_captain
    assert code_of(session, "Cassiopeia") != old
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "leave-team"))
    assert event is not None and event.details["captain"] == "dan@example.org"


def test_the_last_member_leaving_a_team_with_runs_leaves_no_valid_code(
    app: Flask, session: Session
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run()))
    old = code_of(session, "Aurora")
    alice = client_of(app, "alice@example.org")
    assert post(alice, "/team/leave")[0] == 200
    aurora = team_named(session, "Aurora")
    assert aurora is not None and aurora.invite_code is None and aurora.members == []
    loose_participant(app, "mallory@example.org")
    mallory = client_of(app, "mallory@example.org")
    assert mallory.get(f"/teams/join/{old}").status_code == 404
    assert post(mallory, f"/teams/join/{old}", "/team")[0] == 404
    # The former member cannot walk back in either.
    assert post(alice, f"/teams/join/{old}", "/team")[0] == 404
    assert user_by(session, "mallory@example.org").team_id is None
    assert user_by(session, "alice@example.org").team_id is None


# ------------------------------------------------------------ registration states (issue 19)


def _request_to_join(app: Flask, session: Session, email: str) -> JoinRequest:
    """File a join request for Cassiopeia in approval mode; return it."""
    set_mode(app, "registration", "approval")
    join(app, session, email)
    session.expire_all()
    req = session.scalar(select(JoinRequest).join(User).where(User.email == email))
    assert req is not None and req.status == "pending"
    return req


def test_closed_registration_refuses_accepting_a_request_but_not_declining(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    dan_req = _request_to_join(app, session, "dan@example.org")
    eve_req = _request_to_join(app, session, "eve@example.org")
    set_mode(app, "registration", "closed")
    status, page = post(carol, f"/team/requests/{dan_req.id}/accept")
    assert status == 403 and "Registration is closed" in page
    assert user_by(session, "dan@example.org").team_id is None
    session.expire_all()
    assert session.get(JoinRequest, dan_req.id).status == "pending"  # type: ignore[union-attr]
    assert post(carol, f"/team/requests/{eve_req.id}/decline")[0] == 200


@pytest.mark.parametrize("mode", ["open", "approval", "invite", "closed"])
def test_no_request_is_accepted_into_a_withdrawn_team(
    app: Flask, carol: FlaskClient, session: Session, mode: str
) -> None:
    create(carol, "Cassiopeia")
    req = _request_to_join(app, session, "dan@example.org")
    team = team_named(session, "Cassiopeia")
    assert team is not None
    from leaderboard.services.teams import admin as team_admin

    with unit_of(session):
        team_admin.withdraw_team(session, team.id, actor="org")
    set_mode(app, "registration", mode)
    status, page = post(carol, f"/team/requests/{req.id}/accept")
    assert status == 409 and "is withdrawn" in page
    assert user_by(session, "dan@example.org").team_id is None


def test_accepting_a_request_whose_applicant_joined_elsewhere_closes_it(
    app: Flask, carol: FlaskClient, session: Session
) -> None:
    create(carol, "Cassiopeia")
    req = _request_to_join(app, session, "dan@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    aurora = team_named(session, "Aurora")
    assert aurora is not None
    # As if Dan joined Aurora while the request was pending (a join withdraws requests).
    dan = user_by(session, "dan@example.org")
    dan.team_id = aurora.id
    session.commit()
    status, page = post(carol, f"/team/requests/{req.id}/accept")
    assert status == 409 and "has joined another team meanwhile" in page
    session.expire_all()
    # The refusal still closes the request.
    assert session.get(JoinRequest, req.id).status == "withdrawn"  # type: ignore[union-attr]
