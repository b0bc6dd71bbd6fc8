"""A premature freeze superseded: a new frozen version is official, the old one kept and verifiable."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, FrozenTable, Job
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import api_upload, make_organizer, make_participant, token_for

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SENTIMENT = EXAMPLES / "classification"
PATH = "/api/v1/tasks/example-sentiment/A/runs"
PAGE = "/tasks/example-sentiment/A"
ORGANIZE = "/organizer/tasks/example-sentiment/A"
REASON = "Frozen before the deadline by mistake; Borealis uploaded on time after it"


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2016, 1, day, hour, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(at(5))


@pytest.fixture
def app(make_app: AppFactory, clock: FixedClock) -> Flask:
    return make_app(clock=clock)


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


def labels_of(table: dict[str, Any]) -> list[str]:
    return sorted(r["label"] for r in table["rows"] if r["kind"] == "run")


def official(runner: FlaskCliRunner, *args: str) -> dict[str, Any]:
    result = invoke(
        runner, "table", "example-sentiment", "A", "--official", "--format", "json", *args
    )
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.output)
    return out


def snapshots(app: Flask) -> list[tuple[int, str, datetime]]:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(FrozenTable).order_by(FrozenTable.version))
        return [(r.version, r.manifest_sha256, r.frozen_at) for r in rows]


def audit(app: Flask, action: str) -> list[dict[str, Any]]:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(AuditEvent).where(AuditEvent.action == action))
        return [e.details for e in rows]


def premature_freeze(app: Flask, runner: FlaskCliRunner, clock: FixedClock) -> None:
    """Host the sentiment example (deadline on the 10th), freeze on the 5th, then Borealis uploads."""
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    phase = invoke(
        runner,
        *("phase", "example-sentiment", "A", "test"),
        *("--start", "2016-01-01T00:00:00Z", "--end", "2016-01-10T00:00:00Z"),
    )
    assert phase.exit_code == 0, phase.output
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    client = app.test_client()
    gold = (SENTIMENT / "gold.tsv").read_text()
    run = "".join(line + "\n" for line in gold.splitlines() if line and line[0] != "#")
    alice = api_upload(client, token_for(app, "alice@example.org"), run.encode(), path=PATH)
    assert alice.status_code == 201, alice.get_json()
    frozen = invoke(runner, "freeze", "example-sentiment", "A", "--before-deadline")
    assert frozen.exit_code == 0, frozen.output
    # The confirmation says the freeze is permanent and how to replace it.
    assert "This is permanent" in frozen.output and "--supersede --reason" in frozen.output
    clock.set(at(8))
    flipped = run.replace("\tpositive\n", "\tneutral\n")
    bob = api_upload(client, token_for(app, "bob@example.org"), flipped.encode(), path=PATH)
    assert bob.status_code == 201, bob.get_json()
    clock.set(at(11))


@pytest.fixture
def first_sha(app: Flask, runner: FlaskCliRunner, clock: FixedClock) -> str:
    """Freeze prematurely (see ``premature_freeze``); return the snapshot's SHA-256."""
    premature_freeze(app, runner, clock)
    [(_, sha, _)] = snapshots(app)
    return sha


@pytest.fixture
def superseded(runner: FlaskCliRunner, first_sha: str) -> str:
    """Supersede the premature freeze with ``REASON``; return the first snapshot's SHA-256."""
    result = invoke(runner, "freeze", "example-sentiment", "A", "--supersede", "--reason", REASON)
    assert result.exit_code == 0, result.output
    assert "Version 2 is now the official ranking; version 1 is kept" in result.output
    return first_sha


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ((), "an official ranking is frozen once. To replace it, supersede it"),
        ((), "--supersede --reason"),
        (("--supersede",), "--supersede needs --reason TEXT"),
        (("--reason", "why"), "--reason goes with --supersede"),
        (("--supersede", "--reason", "  "), "A reason is required to supersede"),
        (
            ("--supersede", "--reason", "x" * 501),
            "The reason for superseding is longer than 500 characters.",
        ),
        (
            ("--supersede", "--reason", "a\x07b"),
            "The reason for superseding must not contain control characters or line separators "
            "(U+0007",
        ),
    ],
    ids=["again", "points-at-supersede", "no-reason", "stray-reason", "blank", "long", "bell"],
)
def test_freezing_again_is_refused_unless_superseding_with_a_reason(
    app: Flask, runner: FlaskCliRunner, first_sha: str, options: tuple[str, ...], refusal: str
) -> None:
    result = invoke(runner, "freeze", "example-sentiment", "A", *options)
    assert result.exit_code == 1
    assert refusal in result.output
    assert len(snapshots(app)) == 1


def test_superseding_adds_version_2_and_keeps_version_1(app: Flask, superseded: str) -> None:
    versions = snapshots(app)
    assert [(v, sha) for v, sha, _ in versions][0] == (1, superseded)
    assert [v for v, _, _ in versions] == [1, 2]


def test_the_official_table_is_the_newest_and_an_old_version_is_shown_on_request(
    runner: FlaskCliRunner, superseded: str
) -> None:
    assert labels_of(official(runner)) == ["Aurora-primary", "Borealis-primary"]
    assert labels_of(official(runner, "--version", "1")) == ["Aurora-primary"]
    missing = invoke(runner, "table", "example-sentiment", "A", "--official", "--version", "3")
    assert missing.exit_code == 1
    assert "has no frozen version 3 (versions: 1, 2)" in missing.output


def test_both_versions_verify_each_reported(runner: FlaskCliRunner, superseded: str) -> None:
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output
    assert (
        f"Version 1 (frozen at 2016-01-05T12:00:00+00:00), superseded on 2016-01-11: {REASON}: "
        "verified: 1 frozen rows" in verified.output
    )
    assert "Version 2 (frozen at 2016-01-11T12:00:00+00:00): verified: 2 frozen rows" in (
        verified.output
    )
    only = invoke(runner, "verify", "example-sentiment", "A", "--version", "1")
    assert only.exit_code == 0 and "Version 2" not in only.output


def test_the_audit_log_records_both_freezes_and_the_supersession(
    app: Flask, superseded: str
) -> None:
    assert [d["version"] for d in audit(app, "freeze")] == [1, 2]
    [supersession] = audit(app, "supersede-freeze")
    assert supersession["reason"] == REASON
    assert (supersession["superseded_version"], supersession["version"]) == (1, 2)
    assert supersession["superseded_sha256"] == superseded


def test_the_database_still_refuses_to_change_a_superseded_row(app: Flask, superseded: str) -> None:
    # The superseded row was never written to.
    with (
        app.extensions["leaderboard"]["engine"].connect() as conn,
        pytest.raises((IntegrityError, DBAPIError), match="frozen tables are immutable"),
    ):
        conn.execute(text("UPDATE frozen_tables SET frozen_by = 'mallory' WHERE version = 1"))
        conn.commit()


def test_verify_names_the_version_that_differs(
    app: Flask, runner: FlaskCliRunner, clock: FixedClock
) -> None:
    premature_freeze(app, runner, clock)
    assert invoke(runner, "freeze", "example-sentiment", "A", "--supersede", "--reason", REASON)
    store = app.extensions["leaderboard"]["store"]
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.models import Run

        bob = session.scalars(select(Run).where(Run.slot == "primary").order_by(Run.id)).all()[1]
        path = store.path(bob.files["file"]["key"])
    path.chmod(0o644)
    path.write_bytes(b"")
    result = invoke(runner, "verify", "example-sentiment", "A")
    assert result.exit_code == 1
    # Version 1 never had Borealis's run: it still verifies; version 2 does not.
    assert "Version 1 (frozen at 2016-01-05T12:00:00+00:00), superseded" in result.output
    assert "verified: 1 frozen rows" in result.output
    assert "DIFFERENCE: version 2: Borealis-primary: run file file has SHA-256" in result.output
    assert "the frozen table of example-sentiment A could NOT be confirmed" in result.output


def test_superseding_a_set_never_frozen_is_refused(app: Flask, runner: FlaskCliRunner) -> None:
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    result = invoke(runner, "freeze", "example-sentiment", "A", "--supersede", "--reason", "x")
    assert result.exit_code == 1
    assert "has no frozen ranking to supersede; freeze it without superseding." in result.output
    assert snapshots(app) == []


def test_an_organizer_supersedes_on_the_page_and_the_public_sees_both_versions(
    app: Flask, runner: FlaskCliRunner, clock: FixedClock
) -> None:
    premature_freeze(app, runner, clock)
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get(ORGANIZE).get_data(as_text=True)
    assert (
        "The current official ranking (frozen on 2016-01-05) will be kept and shown as "
        "superseded; a new frozen version will be the official ranking." in page
    )
    token = csrf_from(page)
    # A reason is required: refused with the message, nothing queued.
    refused = org.post(f"{ORGANIZE}/test/supersede", data={"csrf_token": token, "reason": " "})
    assert refused.status_code == 400
    assert "A reason is required to supersede" in refused.get_data(as_text=True)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.scalars(select(Job)).all() == []
    queued = org.post(
        f"{ORGANIZE}/test/supersede",
        data={"csrf_token": token, "reason": REASON},
        follow_redirects=True,
    )
    assert queued.status_code == 200
    assert "Supersession of test queued (job 1)" in queued.get_data(as_text=True)
    worker = invoke(runner, "worker", "--once")
    # Then, unasked, the analysis of the live table, whose results are visible.
    assert worker.output == "freeze 1: done\nanalysis 2: done\n"
    assert [v for v, _, _ in snapshots(app)] == [1, 2]

    # The public page shows the newest as official, with the list of versions.
    public = app.test_client()
    newest = public.get(PAGE).get_data(as_text=True)
    assert "Official ranking, frozen at 2016-01-11 12:00:00 UTC" in newest
    assert "Borealis-primary" in newest and 'id="superseded"' not in newest
    assert f'superseded on 2016-01-11: <span dir="auto">{REASON}</span>' in newest
    old = public.get(f"{PAGE}?version=1").get_data(as_text=True)
    assert "Official ranking, frozen at 2016-01-05 12:00:00 UTC" in old
    assert f'Superseded on 2016-01-11: <span dir="auto">{REASON}</span>' in old
    assert "Borealis-primary" not in old
    # Its exports too; the default download is the official (newest) version.
    old_csv = public.get(f"{PAGE}/results.csv?version=1")
    assert old_csv.status_code == 200 and b"Borealis" not in old_csv.data
    assert "-official-v1.csv" in old_csv.headers["Content-Disposition"]
    assert b"Borealis" in public.get(f"{PAGE}/results.csv").data
    assert public.get(f"{PAGE}?version=7").status_code == 404
    assert public.get(f"{PAGE}?version=x").status_code == 400
    # The API table is the official one.
    api = public.get(
        "/api/v1/tasks/example-sentiment/A/table",
        headers={"Authorization": f"Bearer {token_for(app, 'alice@example.org')}"},
    )
    assert labels_of(api.get_json()) == ["Aurora-primary", "Borealis-primary"]

    # The organizer's page lists both versions; its verification checks both.
    listed = org.get(ORGANIZE).get_data(as_text=True)
    assert f'superseded on 2016-01-11 by org@example.org: <span dir="auto">{REASON}</span>' in (
        listed
    )
    verify = org.post(f"{ORGANIZE}/test/verify", data={"csrf_token": token})
    assert verify.status_code == 302
    assert invoke(runner, "worker", "--once").output == "verification 3: done\n"
    assert "3 frozen rows of 2 frozen versions (superseded ones included) re-score" in org.get(
        ORGANIZE
    ).get_data(as_text=True)
    [requested] = audit(app, "request-freeze")
    assert requested["supersede"] == REASON


def test_the_migration_keeps_frozen_tables_immutable_as_version_1(empty_database_url: str) -> None:
    from alembic import command
    from sqlalchemy import create_engine

    from leaderboard.migrate import alembic_config, upgrade

    url = empty_database_url
    command.upgrade(alembic_config(url), "0016")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO tasks (id, slug, title, family, definition, definition_sha256, "
                "created_at) VALUES (1, 't', 'T', 'labels', '{}', 'x', '2016-01-01 00:00:00')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO subtasks (id, task_id, slug, title, position, default_set) "
                "VALUES (1, 1, 'A', 'A', 0, 'test')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO eval_sets (id, subtask_id, slug, title, position, revision, analysed)"
                " VALUES (1, 1, 'test', 'Test', 0, 0, 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO frozen_tables (subtask_id, eval_set_id, frozen_at, frozen_by, "
                '"table", renders, manifest, manifest_sha256) VALUES '
                "(1, 1, '2016-02-01 00:00:00', 'org', '{}', '{}', '{}', 'abc')"
            )
        )
    upgrade(url)
    with engine.connect() as conn:
        row = conn.execute(text("SELECT version, manifest_sha256 FROM frozen_tables")).one()
        assert tuple(row) == (1, "abc")
        assert conn.execute(text("SELECT hidden FROM tasks")).scalar() in (False, 0)
    for statement in (
        "UPDATE frozen_tables SET frozen_by = 'mallory'",
        "DELETE FROM frozen_tables",
    ):
        with (
            engine.connect() as conn,
            pytest.raises((IntegrityError, DBAPIError), match="frozen tables are immutable"),
        ):
            conn.execute(text(statement))
            conn.commit()
    engine.dispose()
