"""Team names are unique under NFKC case folding; refusals of a name leak nothing while anonymous."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import create_engine, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.migrate import MigrationRefused, alembic_config, upgrade
from leaderboard.models import Team, team_name_key
from leaderboard.services.accounts import core as accounts
from leaderboard.services.common.errors import Conflict
from leaderboard.services.teams import admin as team_admin
from leaderboard.unit_of_work import unit_of
from tests.helpers.teams import client_of, create, loose_participant, post
from tests.runs import make_organizer, make_participant

T3 = "semeval2016-task3"
#: Names that are "Borealis" for a reader: case, full width, a ligature-free compatibility
#: form, a zero-width space and doubled spaces.
VARIANTS = (
    "borealis",
    "BOREALIS",
    "\uff22\uff4f\uff52\uff45\uff41\uff4c\uff49\uff53",
    "Bore\u200balis",
)


def teams_named(session: Session) -> list[str]:
    session.expire_all()
    return sorted(session.scalars(select(Team.name)))


def test_the_key_folds_case_width_and_invisible_characters() -> None:
    assert {team_name_key(v) for v in ("Borealis", *VARIANTS)} == {"borealis"}
    assert team_name_key("Stra\u00dfe  Lab") == team_name_key("STRASSE Lab") == "strasse lab"
    assert team_name_key("\ufb01ne") == "fine"  # the "fi" ligature
    assert team_name_key("فريق") != team_name_key("فرىق")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_participant_cannot_create_a_variant_of_a_taken_name(
    app: Flask, session: Session, variant: str
) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    loose_participant(app, "carol@example.org")
    status, page = create(client_of(app, "carol@example.org"), variant)
    assert status == 409 and "A team named" in page and "already exists" in page
    assert teams_named(session) == ["Borealis"]


def test_cli_create_team_and_rename_refuse_variants(
    app: Flask, session: Session, runner: FlaskCliRunner
) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    made = runner.invoke(args=["leaderboard", "create-team", "BOREALIS"])
    assert made.exit_code == 1 and "already exists" in made.output
    renamed = runner.invoke(args=["leaderboard", "rename-team", "Aurora", "borealis"])
    assert renamed.exit_code == 1 and "already exists" in renamed.output
    # A team may change the case of its own name.
    own = runner.invoke(args=["leaderboard", "rename-team", "aurora", "AURORA"])
    assert own.exit_code == 0, own.output
    assert teams_named(session) == ["AURORA", "Borealis"]


def test_the_organizer_page_refuses_a_variant_and_merges_by_any_variant(
    app: Flask, session: Session
) -> None:
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    org = client_of(app, "org@example.org", "organizer password")
    aurora = session.scalar(select(Team.id).where(Team.name == "Aurora"))
    status, page = post(org, f"/organizer/teams/{aurora}/rename", name="\uff22orealis")
    assert status == 409 and "already exists" in page
    status, page = post(org, f"/organizer/teams/{aurora}/merge", into="BOREALIS")
    assert status == 200 and "Team Aurora merged into Borealis." in page
    assert teams_named(session) == ["Borealis"]


def test_the_database_refuses_two_names_with_one_key(app: Flask, session: Session) -> None:
    with unit_of(session):
        accounts.create_team(session, "Borealis", actor="test")
    session.add(Team(name="BOREALIS"))
    with pytest.raises(IntegrityError, match=r"teams\.name_key|uq_teams_name_key"):
        session.commit()
    session.rollback()
    # Even a row written without the model: the key column is required and unique.
    with pytest.raises(IntegrityError, match=r"teams\.name_key|uq_teams_name_key"):
        session.execute(
            text(
                "INSERT INTO teams (name, name_key, affiliation, approved, created_at) "
                "VALUES ('borealis', 'borealis', '', true, CURRENT_TIMESTAMP)"
            )
        )
        session.commit()
    session.rollback()
    assert teams_named(session) == ["Borealis"]


@pytest.mark.parametrize("name", ["Team 12", "team12", "TEAM  7", "\uff34eam \uff11", "Team #3"])
def test_names_like_anonymous_labels_are_reserved(
    app: Flask, session: Session, runner: FlaskCliRunner, name: str
) -> None:
    loose_participant(app, "carol@example.org")
    status, page = create(client_of(app, "carol@example.org"), name)
    assert status == 409 and "reserved" in page
    made = runner.invoke(args=["leaderboard", "create-team", name])
    assert made.exit_code == 1 and "reserved" in made.output
    make_participant(app, "Aurora", "alice@example.org")
    with pytest.raises(Conflict, match="reserved"), unit_of(session):
        team_admin.rename_team(session, accounts.find_team(session, "Aurora").id, name, actor="o")
    assert teams_named(session) == ["Aurora"]


def test_names_that_are_not_labels_stay_free(app: Flask, session: Session) -> None:
    for name in ("Team Rocket", "Teams 4 Good", "A-Team 2", "Team12b"):
        with unit_of(session):
            accounts.create_team(session, name, actor="test")
    assert len(teams_named(session)) == 4


def _anonymous(app: Flask) -> None:
    done = app.test_cli_runner().invoke(
        args=["leaderboard", "phase", T3, "A", "test", "--set", "test", "--names", "anonymous"]
    )
    assert done.exit_code == 0, done.output


def test_while_names_are_anonymous_a_refused_name_confirms_nothing(
    app: Flask, session: Session
) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    _anonymous(app)
    loose_participant(app, "carol@example.org")
    carol = client_of(app, "carol@example.org")
    answers = {name: create(carol, name) for name in ("borealis", "Team 4", "Borealis")}
    statuses = {status for status, _page in answers.values()}
    flashes = {page.split('class="flash error"', 1)[1][:200] for _s, page in answers.values()}
    assert statuses == {409} and len(flashes) == 1, flashes
    (flash,) = flashes
    assert "cannot be used" in flash
    for page in (p for _s, p in answers.values()):
        assert "already exists" not in page and "reserved" not in page
    assert teams_named(session) == ["Borealis"]
    # A free name still works.
    assert create(carol, "Cassiopeia")[0] == 200
    assert teams_named(session) == ["Borealis", "Cassiopeia"]


def test_name_attempts_are_limited_per_account(app: Flask, session: Session) -> None:
    make_participant(app, "Borealis", "bob@example.org")
    _anonymous(app)
    loose_participant(app, "carol@example.org")
    carol = client_of(app, "carol@example.org")
    statuses = [create(carol, name)[0] for name in ("borealis", "Team 1", *["BOREALIS"] * 8)]
    assert statuses == [409] * 10
    status, page = create(carol, "Cassiopeia")
    assert status == 429 and "Too many" in page
    assert teams_named(session) == ["Borealis"]
    # Another account has its own allowance.
    loose_participant(app, "dan@example.org")
    assert create(client_of(app, "dan@example.org"), "Cassiopeia")[0] == 200


# ----------------------------------------------------------------------------- the migration


def _at_0010(url: str) -> None:
    command.upgrade(alembic_config(url), "0010")


def _insert_team(conn: object, team_id: int, name: str, created: str) -> None:
    conn.execute(  # type: ignore[attr-defined]
        text(
            "INSERT INTO teams (id, name, affiliation, approved, created_at) "
            "VALUES (:id, :name, '', true, :at)"
        ),
        {"id": team_id, "name": name, "at": created},
    )


def _insert_user(conn: object, user_id: int, email: str, team_id: int, created: str) -> None:
    conn.execute(  # type: ignore[attr-defined]
        text(
            "INSERT INTO users (id, email, role, team_id, is_captain, display_name, affiliation,"
            " is_active, created_at, session_generation) VALUES (:id, :email, 'participant',"
            " :team, false, '', '', true, :at, 0)"
        ),
        {"id": user_id, "email": email, "team": team_id, "at": created},
    )


def test_the_migration_refuses_colliding_names_and_names_them(empty_database_url: str) -> None:
    url = empty_database_url
    _at_0010(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        _insert_team(conn, 1, "Borealis", "2016-01-01 00:00:00")
        _insert_team(conn, 2, "BOREALIS", "2016-01-02 00:00:00")
        _insert_team(conn, 3, "Aurora", "2016-01-02 00:00:00")
    with pytest.raises(
        MigrationRefused,
        match="Team names must now be unique ignoring case, width and invisible characters",
    ) as refused:
        upgrade(url)
    message = str(refused.value)
    assert "'Borealis' (id 1)" in message and "'BOREALIS' (id 2)" in message
    assert "Aurora" not in message and "rename-team" in message
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0010"
        assert conn.execute(text("SELECT count(*) FROM teams")).scalar() == 3
    engine.dispose()


def test_the_migration_backfills_keys_and_join_times(empty_database_url: str) -> None:
    url = empty_database_url
    _at_0010(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        _insert_team(conn, 1, "\uff22orealis", "2016-01-05 00:00:00")
        _insert_user(conn, 1, "old@example.org", 1, "2016-01-01 00:00:00")
        _insert_user(conn, 2, "new@example.org", 1, "2016-01-09 00:00:00")
        conn.execute(
            text(
                "INSERT INTO audit_log (at, actor, action, details) VALUES "
                "('2016-01-07 00:00:00', 'old@example.org', 'join-team', '{}'),"
                "('2016-01-06 00:00:00', 'org', 'accept-join', '{\"email\": \"nobody@x.org\"}')"
            )
        )
    upgrade(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT name_key FROM teams")).scalar() == "borealis"
        joined = dict(
            conn.execute(text("SELECT email, joined_team_at FROM users ORDER BY id")).all()
        )
    engine.dispose()

    def day(value: object) -> int:
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC).day

    # The audit log's join wins; otherwise the later of the account's and the team's creation.
    assert day(joined["old@example.org"]) == 7
    assert day(joined["new@example.org"]) == 9


def test_every_request_counter_scope_fits_its_column() -> None:
    from leaderboard.models import LoginCounter
    from leaderboard.services.common.throttle import REQUEST_LIMITS

    width = LoginCounter.__table__.c.scope.type.length
    for action in REQUEST_LIMITS:
        assert len(f"{action}-address") <= width and len(f"{action}-account") <= width, action
