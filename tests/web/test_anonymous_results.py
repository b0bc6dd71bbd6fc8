"""Anonymous results: public tables and exports name teams Team 1, Team 2, ... until revealed."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from leaderboard.models import Phase
from tests.conftest import csrf_from, login
from tests.runs import (
    accepted,
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    token_for,
)

T3 = "semeval2016-task3"
PAGE = f"/tasks/{T3}/A"
API_TABLE = f"/api/v1/tasks/{T3}/A/table"
SECRETS = ("Aurora", "Borealis", "aurora-run-name", "borealis-run-name")


def _cli(app: Flask, *args: str) -> str:
    result = app.test_cli_runner().invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _names(app: Flask, value: str) -> str:
    return _cli(app, "phase", T3, "A", "test", "--set", "test", "--names", value)


@pytest.fixture
def anon_app(app: Flask) -> Flask:
    """Aurora uploads first (a weak run), Borealis second (the oracle), in an anonymous phase."""
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    own_campaign(app, T3)
    assert "team names anonymous" in _names(app, "anonymous")
    api = app.test_client()
    accepted(
        api_upload(
            api,
            token_for(app, "alice@example.org"),
            constant_run(),
            name="aurora-run-name",
            description="Aurora's system",
        )
    )
    accepted(
        api_upload(api, token_for(app, "bob@example.org"), oracle_run(), name="borealis-run-name")
    )
    return app


def _client(app: Flask, email: str | None) -> FlaskClient:
    client = app.test_client()
    if email is not None:
        password = "organizer password" if email.startswith("org") else "correct horse battery"
        login(client, email, password)
    return client


def _rows(app: Flask, client: FlaskClient, path: str = f"{PAGE}/results.json") -> list[dict]:
    resp = client.get(path)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return [r for r in json.loads(resp.get_data(as_text=True))["rows"] if r["kind"] == "run"]


def test_public_page_and_every_export_name_teams_by_number(anon_app: Flask) -> None:
    anon = _client(anon_app, None)
    page = anon.get(PAGE).get_data(as_text=True)
    assert "Team 1" in page and "Team 2" in page and 'id="anonymous-names"' in page
    for ext in ("csv", "json", "md", "tex"):
        body = anon.get(f"{PAGE}/results.{ext}").get_data(as_text=True)
        assert "Team 1" in body and "Team 2" in body, ext
        for secret in SECRETS:
            assert secret not in body, (ext, secret)
    for secret in SECRETS:
        assert secret not in page
    # Borealis (the oracle) ranks first but is Team 2: numbers follow the first upload.
    rows = _rows(anon_app, anon)
    assert [(r["team"], r["run"], r["rank"]) for r in rows] == [
        ("Team 2", "primary", 1),
        ("Team 1", "primary", 2),
    ]


def test_a_member_sees_their_own_team_and_organizers_all(anon_app: Flask) -> None:
    alice = _client(anon_app, "alice@example.org")
    page = alice.get(PAGE).get_data(as_text=True)
    assert "Aurora" in page and "Team 2" in page and "Borealis" not in page
    assert {r["team"] for r in _rows(anon_app, alice)} == {"Aurora", "Team 2"}
    api = anon_app.test_client()
    for email, expected in (
        ("alice@example.org", {"Aurora", "Team 2"}),
        ("bob@example.org", {"Team 1", "Borealis"}),
        ("org@example.org", {"Aurora", "Borealis"}),
    ):
        token = token_for(anon_app, email)
        table = api.get(API_TABLE, headers={"Authorization": f"Bearer {token}"}).get_json()
        assert {r["team"] for r in table["rows"] if r["kind"] == "run"} == expected, email
    org = _client(anon_app, "org@example.org")
    page = org.get(PAGE).get_data(as_text=True)
    assert "Aurora" in page and "Borealis" in page
    assert {r["run"] for r in _rows(anon_app, org)} == {"aurora-run-name", "borealis-run-name"}


def test_cached_pages_never_carry_names_between_readers(anon_app: Flask) -> None:
    anon = _client(anon_app, None)
    alice = _client(anon_app, "alice@example.org")
    bob = _client(anon_app, "bob@example.org")
    for path in (PAGE, f"{PAGE}/results.csv"):
        assert "Aurora" not in anon.get(path).get_data(as_text=True)
        assert "Aurora" in alice.get(path).get_data(as_text=True)
        bob_body = bob.get(path).get_data(as_text=True)
        assert "Borealis" in bob_body and "Aurora" not in bob_body
        again = anon.get(path).get_data(as_text=True)
        assert "Aurora" not in again and "Borealis" not in again


def test_numbers_are_stable_when_a_team_joins(anon_app: Flask) -> None:
    make_participant(anon_app, "Cygnus", "carol@example.org")
    accepted(
        api_upload(
            anon_app.test_client(),
            token_for(anon_app, "carol@example.org"),
            oracle_run(),
            slot="contrastive1",
        )
    )
    teams = {r["team"] for r in _rows(anon_app, _client(anon_app, "carol@example.org"))}
    assert teams == {"Team 1", "Team 2", "Cygnus"}
    rows = _rows(anon_app, _client(anon_app, None))
    assert {r["team"] for r in rows} == {"Team 1", "Team 2", "Team 3"}
    # Aurora's weak constant run is still Team 1.
    assert [r["team"] for r in rows if r["rank"] == 2] == ["Team 1"]


def test_reveal_shows_names_and_the_freeze_keeps_what_was_shown(anon_app: Flask) -> None:
    anon = _client(anon_app, None)
    assert "Aurora" not in anon.get(PAGE).get_data(as_text=True)
    _cli(anon_app, "freeze", T3, "A", "--set", "test")
    assert "Verified" in _cli(anon_app, "verify", T3, "A", "--set", "test")
    assert "team names public" in _names(anon_app, "public")
    live = anon.get(f"{PAGE}?view=live").get_data(as_text=True)
    assert "Aurora" in live and "Borealis" in live and "anonymous-names" not in live
    official = anon.get(f"{PAGE}?view=official").get_data(as_text=True)
    assert "Team 1" in official and "Aurora" not in official
    frozen = _cli(anon_app, "table", T3, "A", "--set", "test", "--official", "--format", "json")
    assert {r["team"] for r in json.loads(frozen)["rows"] if r["kind"] == "run"} == {
        "Team 1",
        "Team 2",
    }
    for ext in ("csv", "json", "md", "tex"):
        body = anon.get(f"{PAGE}/results.{ext}?view=official").get_data(as_text=True)
        assert "Aurora" not in body and "Team 1" in body, ext
        assert "Aurora" in anon.get(f"{PAGE}/results.{ext}?view=live").get_data(as_text=True)


def test_the_organizers_command_line_table_shows_names(anon_app: Flask) -> None:
    out = _cli(anon_app, "table", T3, "A", "--set", "test", "--format", "csv")
    assert "Aurora" in out and "Borealis" in out


def test_public_phases_show_names(app: Flask) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), constant_run()))
    assert "Aurora" in app.test_client().get(PAGE).get_data(as_text=True)


def test_bad_names_value_is_refused(anon_app: Flask) -> None:
    result = anon_app.test_cli_runner().invoke(
        args=["leaderboard", "phase", T3, "A", "test", "--names", "secret"]
    )
    assert result.exit_code == 2 and "secret" in result.output


def _phase_names(app: Flask) -> str:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return str(s.scalar(select(Phase.names).where(Phase.name == "test")))


def test_organizer_phase_form_sets_names(anon_app: Flask) -> None:
    org = _client(anon_app, "org@example.org")
    page = org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)
    assert 'name="names"' in page
    form = {"name": "test", "eval_set": "test", "csrf_token": csrf_from(page)}
    form.update(late="", corrections="", results="")
    url = f"/organizer/tasks/{T3}/A/phase"
    assert org.post(url, data={**form, "names": "bogus"}).status_code == 400
    assert _phase_names(anon_app) == "anonymous"
    assert org.post(url, data={**form, "names": "public", "csrf_token": ""}).status_code == 400
    assert _phase_names(anon_app) == "anonymous"
    assert org.post(url, data={**form, "names": "public"}).status_code == 302
    assert _phase_names(anon_app) == "public"
    assert "Aurora" in _client(anon_app, None).get(PAGE).get_data(as_text=True)
    # A post without the field leaves the names as they are.
    assert org.post(url, data=form).status_code == 302
    assert _phase_names(anon_app) == "public"


def test_a_masked_entry_hides_team_run_tag_and_label() -> None:
    from leaderboard.models import Run, Team
    from leaderboard.services.results.tables import entry_for

    run = Run(
        kind="run",
        slot="contrastive1",
        name="aurora-name",
        label="Aurora-custom",
        report={"run_tag": "aurora-tag"},
        late=False,
        corrected=False,
        scores=[],
    )
    run.team = Team(name="Aurora")
    shown = entry_for(run, ("MAP",))
    assert (shown.team, shown.run, shown.label) == ("Aurora", "aurora-tag", "Aurora-custom")
    masked = entry_for(run, ("MAP",), "Team 3")
    assert (masked.team, masked.run, masked.label, masked.slot) == (
        "Team 3",
        "contrastive1",
        None,
        "contrastive1",
    )


def test_team_numbers_follow_first_runs_and_skip_baselines(anon_app: Flask) -> None:
    from leaderboard.models import Team
    from leaderboard.services.results.anonymity import team_numbers
    from leaderboard.services.tasks.catalog import resolve

    _cli(anon_app, "add-baselines", T3, "A")
    with anon_app.extensions["leaderboard"]["sessionmaker"]() as s:
        numbers = team_numbers(s, resolve(s, T3, "A").subtask)
        names = {s.get(Team, team_id).name: n for team_id, n in numbers.items()}
    assert names == {"Aurora": 1, "Borealis": 2}
