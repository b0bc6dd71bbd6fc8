"""Line-breaking characters and far dates are refused where they are typed, naming the field.

Every text that reaches a mail header (display name, team name, message subject, site name,
phase name) refuses C0, DEL, C1 and U+2028/U+2029; every phase time refuses a year outside
2000-2999. A far date stored before the check must not break a page in a zone east of UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import Phase, Subtask, Task, Team, User
from leaderboard.services.common import mail
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.common.text import header_safe
from leaderboard.services.notify.notices import join_requested
from tests.accounts import BASE, sign_up, user_row
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.queued_mail import queued
from tests.helpers.teams import PASSWORD, client_of, loose_participant, post
from tests.runs import make_organizer, make_participant, own_campaign

T3 = "semeval2016-task3"
#: The characters of the issue (line separator, NEL, vertical tab, form feed) and the
#: other ends of the refused ranges.
BREAKERS = ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x00", "\x1f", "\x7f", "\x9f")
FAR = ("9999-12-31T23:59Z", "1999-12-31T23:59Z", "0001-01-01T00:00Z")


def named(char: str) -> str:
    return f"U+{ord(char):04X}"


@pytest.mark.parametrize("char", BREAKERS)
def test_the_rule_refuses_each_breaking_character_naming_field_and_character(char: str) -> None:
    with pytest.raises(
        InvalidInput,
        match=rf"^The team name must not contain .*\(U\+{ord(char):04X} at character 5\)",
    ):
        header_safe(f"Team{char}X", "team name")
    assert header_safe("Équipe فريق \u200f", "team name") == "Équipe فريق \u200f"


@pytest.mark.parametrize("char", BREAKERS)
def test_a_stored_name_with_a_breaking_character_still_makes_a_mail(char: str) -> None:
    message = mail.compose("lb@example.org", "a@example.org", f"You joined A{char}B", "Hi")
    parsed = mail.parse(mail.serialize(message))
    assert parsed["Subject"] == "You joined A B"


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_sign_up_refuses_a_display_name_with_a_breaking_character(
    make_app: AppFactory, char: str
) -> None:
    app = make_app(base_url=BASE)
    resp = sign_up(app.test_client(), "dana@example.org", display_name=f"Dana{char}Doe")
    assert resp.status_code == 400
    assert "The display name must not contain control characters" in resp.get_data(as_text=True)
    assert user_row(app, "dana@example.org") is None


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_the_account_page_refuses_a_display_name_with_a_breaking_character(
    app: Flask, char: str
) -> None:
    loose_participant(app, "dana@example.org", "Dana")
    client = client_of(app, "dana@example.org")
    status, page = post(client, "/account", display_name=f"Dana{char}Doe", affiliation="")
    assert status == 400 and "The display name must not contain control characters" in page
    assert user_row(app, "dana@example.org").display_name == "Dana"  # type: ignore[union-attr]


def teams(session: Session) -> list[str]:
    session.expire_all()
    return sorted(session.scalars(select(Team.name)))


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_team_names_with_a_breaking_character_are_refused_on_the_web(
    app: Flask, session: Session, char: str
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_organizer(app, "org@example.org")
    loose_participant(app, "carol@example.org")
    status, page = post(client_of(app, "carol@example.org"), "/teams/new", name=f"Bo{char}real")
    assert status == 400 and "The team name must not contain control characters" in page
    aurora = session.scalar(select(Team).where(Team.name == "Aurora"))
    assert aurora is not None
    org = client_of(app, "org@example.org", "organizer password")
    status, page = post(org, f"/organizer/teams/{aurora.id}/rename", name=f"Au{char}rora")
    assert status == 400 and "The team name must not contain control characters" in page
    assert teams(session) == ["Aurora"]


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_team_names_with_a_breaking_character_are_refused_by_the_cli(
    app: Flask, session: Session, char: str
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    runner = app.test_cli_runner()
    for args in (["create-team", f"Bo{char}real"], ["rename-team", "Aurora", f"Au{char}ra"]):
        result = runner.invoke(args=["leaderboard", *args])
        assert result.exit_code == 1, result.output
        assert "Error: The team name must not contain control characters" in result.output
    assert teams(session) == ["Aurora"]


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_the_site_name_with_a_breaking_character_is_refused(app: Flask, char: str) -> None:
    make_organizer(app, "org@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    page = org.get("/organizer/settings").get_data(as_text=True)
    data = {"registration": "open", "max_team_size": "10", "terms": ""}
    resp = org.post(
        "/organizer/settings",
        data={**data, "site_name": f"Shared{char}task", "csrf_token": csrf_from(page)},
    )
    assert resp.status_code == 400
    assert "The site name (setting site_name) must not contain" in resp.get_data(as_text=True)
    result = app.test_cli_runner().invoke(
        args=["leaderboard", "settings", "site_name", f"A{char}B"]
    )
    assert result.exit_code == 1 and "Error: The site name" in result.output
    assert "Shared" not in org.get("/organizer/settings").get_data(as_text=True).split("<title>")[0]


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_a_message_subject_with_a_breaking_character_is_refused(app: Flask, char: str) -> None:
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    new = "/organizer/messages/new"
    token = csrf_from(org.get(new).get_data(as_text=True))
    data = {"task": T3, "audience": "members", "body": "Hi.", "csrf_token": token}
    resp = org.post(new, data={**data, "subject": f"Deadline{char}moved"})
    assert resp.status_code == 400
    assert "The subject must not contain control characters" in resp.get_data(as_text=True)


PHASE_PAGE = f"/organizer/tasks/{T3}/A/phase"


def phase_rows(app: Flask) -> list[str]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(Phase.name)))


@pytest.fixture
def organizing(app: Flask) -> FlaskClient:
    make_organizer(app, "org@example.org")
    own_campaign(app)
    return client_of(app, "org@example.org", "organizer password")


def save_phase(client: FlaskClient, **fields: str) -> tuple[int, str]:
    token = csrf_from(client.get(PHASE_PAGE).get_data(as_text=True))
    data = {"name": "test", "eval_set": "test", "zone": "UTC", "late": "", "corrections": ""}
    data.update(results="", names="", diagnostics="", daily_quota="", total_quota="")
    resp = client.post(PHASE_PAGE, data={**data, **fields, "csrf_token": token})
    return resp.status_code, resp.get_data(as_text=True)


@pytest.mark.parametrize("when", FAR)
@pytest.mark.parametrize(("field", "label"), [("start", "start"), ("end", "end")])
def test_the_phase_page_refuses_a_year_outside_2000_to_2999(
    app: Flask, organizing: FlaskClient, when: str, field: str, label: str
) -> None:
    status, page = save_phase(organizing, name="far", **{field: when})
    assert status == 400, page
    assert f"The {label} (field {field}) must fall in the years 2000 to 2999" in page
    assert "far" not in phase_rows(app)


@pytest.mark.parametrize("when", FAR)
def test_the_phase_page_refuses_a_far_release_time(
    app: Flask, organizing: FlaskClient, when: str
) -> None:
    status, page = save_phase(organizing, name="far", results="hidden", release_at=when)
    assert status == 400, page
    assert "The release time (field release_at) must fall in the years 2000 to 2999" in page
    assert "far" not in phase_rows(app)


@pytest.mark.parametrize("when", FAR)
@pytest.mark.parametrize("option", ["--start", "--end", "--release-at"])
def test_the_phase_command_refuses_a_year_outside_2000_to_2999(
    app: Flask, when: str, option: str
) -> None:
    result = app.test_cli_runner().invoke(
        args=["leaderboard", "phase", T3, "A", "far", option, when]
    )
    assert result.exit_code == 1, result.output
    assert "Error: The " in result.output and "must fall in the years 2000 to 2999" in result.output
    assert "far" not in phase_rows(app)


def test_a_time_beyond_what_a_date_holds_is_a_usage_error_not_a_traceback(app: Flask) -> None:
    result = app.test_cli_runner().invoke(
        args=["leaderboard", "phase", T3, "A", "far", "--start", "0001-01-01T00:00+14:00"]
    )
    assert (
        result.exit_code == 2
        and "Invalid value for --start: date value out of range" in result.output
    )
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("char", ["\u2028", "\x85"])
def test_a_phase_name_with_a_breaking_character_is_refused(app: Flask, char: str) -> None:
    result = app.test_cli_runner().invoke(args=["leaderboard", "phase", T3, "A", f"a{char}b"])
    assert result.exit_code == 1
    assert "Error: The phase name (field name) must not contain" in result.output
    assert f"a{char}b" not in phase_rows(app)


@pytest.mark.parametrize(
    "stored", [datetime(9999, 12, 31, 23, 59, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)]
)
def test_a_stored_far_date_does_not_break_pages_east_or_west_of_utc(
    make_app: AppFactory, stored: datetime
) -> None:
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):
        app = make_app(display_timezone=zone)
        make_organizer(app, "org@example.org")
        with app.extensions["leaderboard"]["sessionmaker"]() as s:
            sub = s.scalar(select(Subtask).join(Task).where(Task.slug == T3, Subtask.slug == "A"))
            assert sub is not None
            far = {"starts_at": stored} if stored.year == 1 else {"ends_at": stored}
            s.add(Phase(subtask_id=sub.id, name="far", eval_set_id=sub.eval_sets[0].id, **far))
            s.commit()
        public = app.test_client()
        for path in (f"/tasks/{T3}/A", f"/tasks/{T3}"):
            assert public.get(path).status_code == 200, (zone, path)
        org = public
        login(org, "org@example.org", "organizer password")
        for path in (f"/organizer/tasks/{T3}/A", f"{PHASE_PAGE}?name=far&zone={zone}"):
            assert org.get(path).status_code == 200, (zone, path)


def test_a_participant_with_a_clean_name_is_unaffected(app: Flask, session: Session) -> None:
    loose_participant(app, "dana@example.org", "Dana")
    status, _ = post(client_of(app, "dana@example.org"), "/account", display_name="Dana Doe")
    assert status == 200
    session.expire_all()
    dana = session.scalar(select(User).where(User.email == "dana@example.org"))
    assert dana is not None and dana.display_name == "Dana Doe"
    assert PASSWORD


def test_a_name_stored_before_the_check_still_reaches_the_captain(make_app: AppFactory) -> None:
    app = make_app(base_url=BASE)
    make_participant(app, "Aurora", "alice@example.org")
    loose_participant(app, "dana@example.org", "Dana\u2028Doe")
    queued(app)  # forget the set-up's mails
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        team = s.scalar(select(Team).where(Team.name == "Aurora"))
        dana = s.scalar(select(User).where(User.email == "dana@example.org"))
        assert team is not None and dana is not None
        # Written past the services, as a value from before the check would be.
        team.name = "Au\x85rora"
        assert join_requested(s, team, dana) == 1
        s.commit()
    (sent,) = queued(app)
    assert sent["To"] == "alice@example.org"
    assert sent["Subject"].endswith("Dana Doe asks to join Au rora")


@pytest.mark.parametrize("char", ["\u2028", "\x85"])
def test_an_invitation_to_an_address_with_a_breaking_character_is_refused(
    make_app: AppFactory, char: str
) -> None:
    app = make_app(base_url=BASE)
    make_organizer(app, "org@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    token = csrf_from(org.get("/organizer/users").get_data(as_text=True))
    resp = org.post(
        "/organizer/users/invite", data={"csrf_token": token, "email": f"a{char}b@example.org"}
    )
    assert resp.status_code == 400
    # The form's own check names the field (an address holds no space of any kind).
    assert '<p class="field-error">Enter an e-mail address.</p>' in resp.get_data(as_text=True)
    assert queued(app) == []
