"""A whole campaign with the clock controlled: phases, hidden results, quotas, deadlines, late
runs, freeze, a gold correction that changes the live table but not the official one, verify."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError

from leaderboard.clock import FixedClock
from tests.conftest import AppFactory
from tests.runs import (
    GOLD_TEST_A,
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    token_for,
)

DEV_A = (
    GOLD_TEST_A.parents[1] / "dev" / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
)


def at(text_: str) -> datetime:
    return datetime.fromisoformat(text_).replace(tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(at("2016-01-05T12:00:00"))


@pytest.fixture
def campaign_app(make_app: AppFactory, clock: FixedClock) -> Flask:
    return make_app(clock=clock)


def cli(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def test_a_whole_campaign(campaign_app: Flask, clock: FixedClock, tmp_path: Path) -> None:
    app = campaign_app
    client = app.test_client()
    runner = app.test_cli_runner()
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    alice = token_for(app, "alice@example.org")
    bob = token_for(app, "bob@example.org")
    own_campaign(app)

    r = cli(
        runner,
        "phase",
        "semeval2016-task3",
        "A",
        "trial",
        "--set",
        "dev",
        "--start",
        "2016-01-01T00:00:00Z",
        "--end",
        "2016-01-09T00:00:00Z",
    )
    assert r.exit_code == 0, r.output
    r = cli(
        runner, "phase", "semeval2016-task3", "A", "test", "--set", "test",
        "--start", "2016-01-10T00:00:00Z", "--end", "2016-01-31T23:59:00+00:00",
        "--results", "hidden", "--daily-quota", "2",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "results hidden; quota 2 per day" in r.output
    naive = cli(runner, "phase", "semeval2016-task3", "A", "test", "--end", "2016-01-31T23:59:00")
    assert naive.exit_code != 0 and "has no time zone" in naive.output

    # Trial phase: the test set is not open yet; the dev set is, with visible scores.
    early = api_upload(client, alice, oracle_run())
    assert early.status_code == 409
    assert (
        early.get_json()["error"]
        == "Phase test opens at 2016-01-10 00:00 UTC; uploads are not open yet."
    )
    trial = api_upload(client, alice, oracle_run(DEV_A), set="dev")
    assert trial.status_code == 201, trial.get_json()
    assert trial.get_json()["phase"] == "trial" and trial.get_json()["official"]["MAP"] == "0.8648"

    # Test phase: results hidden, quota of 2 a day; a rejected file does not count.
    clock.set(at("2016-01-12T08:00:00"))
    broken = api_upload(client, alice, oracle_run().replace(b"\ttrue\n", b"\tyes\n", 1))
    assert broken.status_code == 422
    assert "MAP" not in json.dumps(broken.get_json())
    first = api_upload(client, alice, constant_run())
    assert first.status_code == 201
    body = first.get_json()
    assert body["scores_hidden"] is True and body["scores"] == {} and body["official"] == {}
    assert body["quota_remaining"] == {"daily": 1, "total": None}
    second = api_upload(client, alice, oracle_run())
    assert second.status_code == 201 and second.get_json()["quota_remaining"]["daily"] == 0
    third = api_upload(client, alice, oracle_run(), slot="contrastive1")
    assert third.status_code == 409
    assert "used its 2 run(s) today (2016-01-12 UTC)" in third.get_json()["error"]
    # Hidden means hidden everywhere: the run, the page, the exports, the API table.
    run_id = second.get_json()["id"]
    assert (
        client.get(
            f"/api/v1/runs/{run_id}", headers={"Authorization": f"Bearer {alice}"}
        ).get_json()["scores"]
        == {}
    )
    page = client.get("/tasks/semeval2016-task3/A").get_data(as_text=True)
    assert "hidden until the organizers release them" in page and "96.33" not in page
    assert client.get("/tasks/semeval2016-task3/A/results.csv").status_code == 403
    assert (
        client.get(
            "/api/v1/tasks/semeval2016-task3/A/table", headers={"Authorization": f"Bearer {bob}"}
        ).status_code
        == 403
    )
    # The next UTC day the quota is fresh.
    clock.set(at("2016-01-13T09:00:00"))
    assert api_upload(client, alice, oracle_run(), slot="contrastive1").status_code == 201
    clock.set(at("2016-01-20T10:00:00"))
    assert api_upload(client, bob, constant_run(label="true")).status_code == 201

    # After the deadline: refused with the deadline stated, until late submission opens.
    clock.set(at("2016-02-01T00:00:00"))
    late = api_upload(client, bob, oracle_run(), slot="contrastive1")
    assert late.status_code == 409
    assert late.get_json()["error"].startswith(
        "The deadline of phase test passed at 2016-01-31 23:59 UTC"
    )
    assert cli(runner, "phase", "semeval2016-task3", "A", "test", "--late").exit_code == 0
    late = api_upload(client, bob, oracle_run(), slot="contrastive1")
    assert late.status_code == 201 and late.get_json()["late"] is True

    # Release, then freeze: the official table has the on-time runs only.
    assert (
        cli(runner, "phase", "semeval2016-task3", "A", "test", "--results", "visible").exit_code
        == 0
    )
    assert cli(runner, "add-baselines", "semeval2016-task3", "A").exit_code == 0
    live = json.loads(cli(runner, "table", "semeval2016-task3", "A", "--format", "json").output)
    late_rows = [r for r in live["rows"] if r["late"]]
    assert [(r["label"], r["rank_marker"]) for r in late_rows] == [("Borealis-contrastive1", "*")]
    clock.set(at("2016-02-02T12:00:00"))
    frozen = cli(runner, "freeze", "semeval2016-task3", "A")
    assert frozen.exit_code == 0, frozen.output
    official = {
        fmt: cli(runner, "table", "semeval2016-task3", "A", "--official", "--format", fmt).output
        for fmt in ("json", "csv", "md", "latex")
    }
    downloads = {
        ext: client.get(f"/tasks/semeval2016-task3/A/results.{ext}").data
        for ext in ("json", "csv", "md", "tex")
    }
    table = json.loads(official["json"])
    assert table["official"] is True and table["frozen_at"] == "2016-02-02T12:00:00+00:00"
    assert "Borealis-contrastive1" not in official["md"]
    assert [r["label"] for r in table["rows"] if r["kind"] == "run"] == [
        "Aurora-primary",
        "Aurora-contrastive1",
        "Borealis-primary",
    ]
    page = client.get("/tasks/semeval2016-task3/A").get_data(as_text=True)
    assert "Official ranking, frozen at 2016-02-02 12:00:00 UTC" in page
    assert cli(runner, "freeze", "semeval2016-task3", "A").exit_code == 1
    assert cli(runner, "verify", "semeval2016-task3", "A").exit_code == 0

    # A gold correction: the live table changes, the official one stays byte-identical.
    lines = GOLD_TEST_A.read_text().splitlines(keepends=True)
    first_true = next(i for i, line in enumerate(lines) if line.endswith("\ttrue\n"))
    lines[first_true] = lines[first_true].replace("\ttrue\n", "\tfalse\n")
    corrected = tmp_path / "corrected.relevancy"
    corrected.write_text("".join(lines))
    before = client.get("/tasks/semeval2016-task3/A/results.json?view=live").get_json()
    result = cli(runner, "set-gold", "semeval2016-task3", "A", str(corrected), "--set", "test")
    assert result.exit_code == 0, result.output
    assert "Stored gold version 2" in result.output and "Re-scored" in result.output
    after = client.get("/tasks/semeval2016-task3/A/results.json?view=live").get_json()
    oracle_before = next(r for r in before["rows"] if r["label"] == "Aurora-primary")
    oracle_after = next(r for r in after["rows"] if r["label"] == "Aurora-primary")
    # The oracle labelled the corrected candidate `true`: one true positive became a false positive.
    assert oracle_after["cells"]["P"]["value"] < oracle_before["cells"]["P"]["value"] == 100.0
    for fmt in ("json", "csv", "md", "latex"):
        assert (
            cli(runner, "table", "semeval2016-task3", "A", "--official", "--format", fmt).output
            == official[fmt]
        )
    for ext, data in downloads.items():
        assert client.get(f"/tasks/semeval2016-task3/A/results.{ext}").data == data
    verified = cli(runner, "verify", "semeval2016-task3", "A")
    assert verified.exit_code == 0, verified.output
    assert "Verified: 7 frozen rows" in verified.output  # 3 runs and 4 baselines

    # The database itself refuses to change a frozen table.
    with (
        app.extensions["leaderboard"]["engine"].connect() as conn,
        pytest.raises((IntegrityError, DBAPIError), match="frozen tables are immutable"),
    ):
        conn.execute(text("UPDATE frozen_tables SET frozen_by = 'mallory'"))
        conn.commit()
    with (
        app.extensions["leaderboard"]["engine"].connect() as conn,
        pytest.raises((IntegrityError, DBAPIError), match="frozen tables are immutable"),
    ):
        conn.execute(text("DELETE FROM frozen_tables"))
        conn.commit()

    # Every organizer action is in the audit log with who did it.
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from sqlalchemy import select

        from leaderboard.models import AuditEvent

        actions = [
            (e.action, e.actor.startswith("cli")) for e in session.scalars(select(AuditEvent))
        ]
    for action in (
        "create-phase",
        "update-phase",
        "add-baselines",
        "freeze",
        "set-gold",
        "rescore",
    ):
        assert (action, True) in actions, action


def test_verify_reports_a_tampered_run_file(campaign_app: Flask, clock: FixedClock) -> None:
    app = campaign_app
    client = app.test_client()
    runner = app.test_cli_runner()
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    # The preset's post-evaluation phase, open since 2016-02-01, takes the run.
    clock.set(at("2016-02-05T12:00:00"))
    assert api_upload(client, token, oracle_run()).status_code == 201
    assert cli(runner, "freeze", "semeval2016-task3", "A").exit_code == 0
    store = app.extensions["leaderboard"]["store"]
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from sqlalchemy import select

        from leaderboard.models import Run

        run = session.scalars(select(Run)).one()
        path = store.path(run.files["file"]["key"])
    path.chmod(0o644)
    path.write_bytes(constant_run())
    result = cli(runner, "verify", "semeval2016-task3", "A")
    assert result.exit_code == 1
    assert "Aurora-primary: run file file has SHA-256" in result.output
    assert "Aurora-primary: MAP re-scores as" in result.output


def test_corrections_after_the_deadline_only_when_allowed(
    campaign_app: Flask, clock: FixedClock
) -> None:
    app = campaign_app
    client = app.test_client()
    runner = app.test_cli_runner()
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    own_campaign(app)
    assert (
        cli(
            runner,
            "phase",
            "semeval2016-task3",
            "A",
            "test",
            "--set",
            "test",
            "--end",
            "2016-01-31T23:59:00Z",
        ).exit_code
        == 0
    )
    assert api_upload(client, token, constant_run()).status_code == 201
    clock.set(at("2016-02-03T00:00:00"))
    assert api_upload(client, token, oracle_run()).status_code == 409
    assert cli(runner, "phase", "semeval2016-task3", "A", "test", "--corrections").exit_code == 0
    fixed = api_upload(client, token, oracle_run())
    assert fixed.status_code == 201 and fixed.get_json()["corrected"] is True
    # A new slot is not a correction, and late runs are still closed.
    assert api_upload(client, token, oracle_run(), slot="contrastive1").status_code == 409
    table = json.loads(cli(runner, "table", "semeval2016-task3", "A", "--format", "json").output)
    assert [(r["label"], r["rank_marker"]) for r in table["rows"]] == [("Aurora-primary", "*")]
    # The official ranking keeps the on-time run the correction replaced.
    assert cli(runner, "freeze", "semeval2016-task3", "A").exit_code == 0
    official = json.loads(
        cli(runner, "table", "semeval2016-task3", "A", "--official", "--format", "json").output
    )
    assert (
        official["rows"][0]["label"] == "Aurora-primary"
        and official["rows"][0]["rank_marker"] == ""
    )
    assert official["rows"][0]["cells"]["MAP"]["display"] != "96.33"


def test_a_teams_first_run_makes_its_quota_counters_in_the_runs_own_transaction(
    campaign_app: Flask, clock: FixedClock
) -> None:
    from sqlalchemy import func, select

    from leaderboard.models import Phase, QuotaUsage, Team
    from leaderboard.services.campaign.phases import claim_quota
    from leaderboard.services.common.errors import Conflict

    app = campaign_app
    make_participant(app, "Aurora", "alice@example.org")
    own_campaign(app)
    r = cli(
        app.test_cli_runner(), "phase", "semeval2016-task3", "A", "test", "--set", "test",
        "--start", "2016-01-01T00:00:00Z", "--end", "2016-01-31T23:59:00+00:00",
        "--daily-quota", "2", "--total-quota", "3",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    now = at("2016-01-12T08:00:00")

    def counters(session) -> dict[str, int]:  # type: ignore[no-untyped-def]
        rows = session.execute(select(QuotaUsage.period, QuotaUsage.used)).all()
        return {period: used for period, used in rows}

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        phase = session.scalars(select(Phase).where(Phase.name == "test")).one()
        team = session.scalars(select(Team).where(Team.name == "Aurora")).one()
        # Made with the claim, not committed on their own: a rolled-back upload leaves none.
        claim_quota(session, phase, team, now)
        assert counters(session) == {"2016-01-12": 1, "total": 1}
        session.rollback()
        assert session.scalar(select(func.count()).select_from(QuotaUsage)) == 0
        claim_quota(session, phase, team, now)
        session.commit()
        # Counters that exist are used; the daily one refuses the third run of the day.
        claim_quota(session, phase, team, now)
        session.commit()
        with pytest.raises(Conflict, match="2 run\\(s\\) today"):
            claim_quota(session, phase, team, now)
        session.rollback()
        # The next day's counter is made, the phase's total one used up.
        claim_quota(session, phase, team, at("2016-01-13T08:00:00"))
        assert counters(session) == {"2016-01-12": 2, "2016-01-13": 1, "total": 3}
        with pytest.raises(Conflict, match="3 run\\(s\\) in phase test"):
            claim_quota(session, phase, team, at("2016-01-14T08:00:00"))
