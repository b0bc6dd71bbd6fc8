"""The participants' API: tasks and quotas, the team's runs, a run's file back, withdrawal."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, GoldFile, Run
from leaderboard.services.results.tables import official_runs
from leaderboard.services.tasks.catalog import resolve
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.sts import EN_SETS, gold_as_output
from tests.runs import (
    GOLD_TEST_A,
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
T0 = datetime(2016, 1, 15, 12, 0, tzinfo=UTC)
DEADLINE = "2016-01-31T00:00:00Z"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _phase(app: Flask, subtask: str, *extra: str) -> None:
    """Run the test's own campaign on a preset subtask: one phase "test" on the test set."""
    own_campaign(app, T3, (subtask,))
    args = ["leaderboard", "phase", T3, subtask, "test", "--set", "test"]
    args += ["--start", "2016-01-10T00:00:00Z", "--end", DEADLINE, *extra]
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output


def _people(app: Flask) -> dict[str, str]:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    make_organizer(app, "org@example.org")
    return {
        "alice": token_for(app, "alice@example.org"),
        "bob": token_for(app, "bob@example.org"),
        "org": token_for(app, "org@example.org"),
    }


def _runs(app: Flask) -> list[Run]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(Run).where(Run.kind == "run").order_by(Run.id)))


# ------------------------------------------------------------------------------- GET tasks


def test_tasks_list_subtasks_sets_phases_and_the_teams_quota(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(T0))
    tokens = _people(app)
    _phase(app, "A", "--daily-quota", "3", "--total-quota", "5")
    client = app.test_client()
    accepted(api_upload(client, tokens["alice"], oracle_run(), set="test"))
    resp = client.get("/api/v1/tasks", headers=_auth(tokens["alice"]))
    assert resp.status_code == 200
    body = resp.get_json()
    task = next(t for t in body["tasks"] if t["slug"] == T3)
    a = next(s for s in task["subtasks"] if s["slug"] == "A")
    assert a["slots"] == ["primary", "contrastive1", "contrastive2"]
    test = next(s for s in a["sets"] if s["slug"] == "test")
    (phase,) = test["phases"]
    assert phase["name"] == "test" and test["uploads_open"] is True
    assert phase["starts_at"] == "2016-01-10T00:00:00Z" and phase["ends_at"] == DEADLINE
    assert phase["open"] is True and phase["results"] == "visible"
    assert phase["quota_remaining"] == {"daily": 2, "total": 4}
    assert test["upload_fields"] == ["file"] and test["gold_version"] == 1
    assert next(m for m in test["measures"] if m["official"])["key"] == "MAP"
    # Bob's team has used nothing of the same quota.
    bob = client.get("/api/v1/tasks", headers=_auth(tokens["bob"])).get_json()
    bob_a = next(
        s for t in bob["tasks"] if t["slug"] == T3 for s in t["subtasks"] if s["slug"] == "A"
    )
    bob_test = next(s for s in bob_a["sets"] if s["slug"] == "test")
    assert bob_test["phases"][0]["quota_remaining"] == {"daily": 3, "total": 5}
    # An organizer has no team: no quota to report.
    org = client.get("/api/v1/tasks", headers=_auth(tokens["org"])).get_json()
    org_a = next(
        s for t in org["tasks"] if t["slug"] == T3 for s in t["subtasks"] if s["slug"] == "A"
    )
    assert (
        next(s for s in org_a["sets"] if s["slug"] == "test")["phases"][0]["quota_remaining"]
        is None
    )


def test_tasks_never_name_reference_files(app: Flask, client: FlaskClient) -> None:
    tokens = _people(app)
    text = client.get("/api/v1/tasks", headers=_auth(tokens["alice"])).get_data(as_text=True)
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        gold = list(s.scalars(select(GoldFile)))
    assert gold
    for g in gold:
        assert g.filename not in text and g.sha256 not in text and g.storage_key not in text
    assert "relevancy" not in text


def test_the_participants_routes_need_a_token(client: FlaskClient) -> None:
    for path in ("/api/v1/tasks", "/api/v1/team/runs", "/api/v1/runs/1/file"):
        assert client.get(path).status_code == 401, path
        bad = client.get(path, headers=_auth("lb_not-a-token"))
        assert bad.status_code == 401, path
    assert client.post("/api/v1/runs/1/withdraw").status_code == 401


# ------------------------------------------------------------------------------- team runs


def test_team_runs_list_the_teams_runs_only_with_scores(app: Flask, client: FlaskClient) -> None:
    tokens = _people(app)
    first = accepted(api_upload(client, tokens["alice"], constant_run(), name="first"))
    second = accepted(api_upload(client, tokens["alice"], oracle_run(), name="second"))
    accepted(api_upload(client, tokens["bob"], oracle_run(), name="bobs"))
    resp = client.get("/api/v1/team/runs", headers=_auth(tokens["alice"]))
    assert resp.status_code == 200
    runs = resp.get_json()["runs"]
    assert [r["id"] for r in runs] == [second["id"], first["id"]]
    newest = runs[0]
    assert newest["task"] == T3 and newest["subtask"] == "A" and newest["set"] == "test"
    assert newest["slot"] == "primary" and newest["name"] == "second"
    assert newest["status"] == "active" and runs[1]["status"] == "replaced"
    assert newest["late"] is False and newest["created_at"]
    # The oracle run's scores, in the table's scale (percent), as its upload reported them.
    assert newest["scores"] == second["scores"] and newest["scores"]["MAP"] > 90
    assert "bobs" not in resp.get_data(as_text=True)


def test_team_runs_hide_the_scores_of_a_hidden_phase(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(T0))
    tokens = _people(app)
    _phase(app, "A", "--results", "hidden")
    client = app.test_client()
    accepted(api_upload(client, tokens["alice"], oracle_run(), set="test"))
    (run,) = client.get("/api/v1/team/runs", headers=_auth(tokens["alice"])).get_json()["runs"]
    assert run["scores"] == {} and run["official"] == {} and run["scores_hidden"] is True


def test_a_caller_without_a_team_gets_no_runs(app: Flask, client: FlaskClient) -> None:
    tokens = _people(app)
    accepted(api_upload(client, tokens["alice"], oracle_run()))
    resp = client.get("/api/v1/team/runs", headers=_auth(tokens["org"]))
    assert resp.status_code == 200 and resp.get_json() == {"runs": []}


# ------------------------------------------------------------------------------- run file


def test_a_run_file_comes_back_as_uploaded_to_its_team_and_organizers(
    app: Flask, client: FlaskClient
) -> None:
    tokens = _people(app)
    data = oracle_run()
    run = accepted(api_upload(client, tokens["alice"], data, filenames={"file": "../ours.txt"}))
    path = f"/api/v1/runs/{run['id']}/file"
    mine = client.get(path, headers=_auth(tokens["alice"]))
    assert mine.status_code == 200 and mine.data == data
    assert "ours.txt" in mine.headers["Content-Disposition"]
    assert ".." not in mine.headers["Content-Disposition"]
    assert client.get(path, headers=_auth(tokens["org"])).data == data
    other = client.get(path, headers=_auth(tokens["bob"]))
    assert other.status_code == 404 and other.get_json() == {"error": f"No run {run['id']}."}
    assert client.get("/api/v1/runs/999999/file", headers=_auth(tokens["bob"])).status_code == 404


def test_a_multi_file_run_comes_back_as_a_zip_of_its_files(app: Flask, client: FlaskClient) -> None:
    tokens = _people(app)
    files = {s: gold_as_output(s) for s in EN_SETS}
    run = accepted(
        api_upload(
            client,
            tokens["alice"],
            files,
            path="/api/v1/tasks/semeval2016-task1/en/runs",
            slot="run1",
        )
    )
    resp = client.get(f"/api/v1/runs/{run['id']}/file", headers=_auth(tokens["alice"]))
    assert resp.status_code == 200 and resp.mimetype == "application/zip"
    with zipfile.ZipFile(io.BytesIO(resp.data)) as archive:
        got = {name: archive.read(name) for name in archive.namelist()}
    assert got == {f"{s}/{s}.txt": files[s] for s in EN_SETS}


# ------------------------------------------------------------------------------- withdraw


def test_withdrawing_empties_the_slot_and_keeps_the_run_in_history(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(T0))
    tokens = _people(app)
    _phase(app, "A")
    client = app.test_client()
    run = accepted(api_upload(client, tokens["alice"], oracle_run(), set="test"))
    table = f"/api/v1/tasks/{T3}/A/table?set=test"
    assert any(
        r["team"] == "Aurora"
        for r in client.get(table, headers=_auth(tokens["alice"])).get_json()["rows"]
    )
    path = f"/api/v1/runs/{run['id']}/withdraw"
    assert client.post(path, headers=_auth(tokens["bob"])).status_code == 404
    refused = client.post(path, headers=_auth(tokens["org"]))
    assert refused.status_code == 403
    resp = client.post(path, headers=_auth(tokens["alice"]))
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["status"] == "withdrawn"
    (stored,) = _runs(app)
    assert stored.status == "withdrawn" and stored.active_key is None
    rows = client.get(table, headers=_auth(tokens["alice"])).get_json()["rows"]
    assert not any(r.get("team") == "Aurora" for r in rows)
    history = client.get("/api/v1/team/runs", headers=_auth(tokens["alice"])).get_json()["runs"]
    assert [(r["id"], r["status"]) for r in history] == [(run["id"], "withdrawn")]
    again = client.post(path, headers=_auth(tokens["alice"]))
    assert again.status_code == 409 and "withdrawn" in again.get_json()["error"]
    # The slot is free: a new run goes in without replacing anything.
    new = accepted(api_upload(client, tokens["alice"], constant_run(), set="test"))
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        old = s.get(Run, run["id"])
        assert old is not None and old.status == "withdrawn" and old.replaced_by_id is None
        events = list(s.scalars(select(AuditEvent).where(AuditEvent.action == "withdraw-run")))
    assert [(e.actor, e.details["run"]) for e in events] == [("alice@example.org", run["id"])]
    assert new["status"] == "active"


def test_a_withdrawn_last_run_leaves_the_official_ranking_too(
    app: Flask, client: FlaskClient
) -> None:
    tokens = _people(app)
    first = accepted(api_upload(client, tokens["alice"], constant_run()))
    second = accepted(api_upload(client, tokens["alice"], oracle_run()))
    bobs = accepted(api_upload(client, tokens["bob"], oracle_run()))
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        before = {r.id for r in official_runs(s, resolve(s, T3, "A"))}
    assert second["id"] in before and first["id"] not in before
    resp = client.post(f"/api/v1/runs/{second['id']}/withdraw", headers=_auth(tokens["alice"]))
    assert resp.status_code == 200
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        after = {r.id for r in official_runs(s, resolve(s, T3, "A")) if r.kind == "run"}
    assert after == {bobs["id"]}


def test_withdrawing_after_the_deadline_is_refused(make_app: AppFactory) -> None:
    clock = FixedClock(T0)
    app = make_app(clock=clock)
    tokens = _people(app)
    _phase(app, "A", "--late")
    client = app.test_client()
    run = accepted(api_upload(client, tokens["alice"], oracle_run(), set="test"))
    clock.set(datetime(2016, 1, 31, tzinfo=UTC) + timedelta(seconds=1))
    resp = client.post(f"/api/v1/runs/{run['id']}/withdraw", headers=_auth(tokens["alice"]))
    assert resp.status_code == 409
    assert resp.get_json()["error"] == (
        "The deadline of phase test passed at 2016-01-31 00:00 UTC; "
        "runs can no longer be withdrawn."
    )
    (stored,) = _runs(app)
    assert stored.status == "active" and stored.active_key is not None


def test_the_run_page_offers_withdrawal_with_csrf(app: Flask, client: FlaskClient) -> None:
    tokens = _people(app)
    run = accepted(api_upload(client, tokens["alice"], oracle_run()))
    browser = app.test_client()
    login(browser, "alice@example.org", "correct horse battery")
    page = browser.get(f"/runs/{run['id']}").get_data(as_text=True)
    assert f'action="/runs/{run["id"]}/withdraw"' in page
    assert browser.post(f"/runs/{run['id']}/withdraw").status_code == 400
    assert _runs(app)[0].status == "active"
    resp = browser.post(f"/runs/{run['id']}/withdraw", data={"csrf_token": csrf_from(page)})
    assert resp.status_code == 302
    assert _runs(app)[0].status == "withdrawn"
    after = browser.get(f"/runs/{run['id']}").get_data(as_text=True)
    assert "was withdrawn" in after and "/withdraw" not in after


# ------------------------------------------------------------------------------- OpenAPI


def test_the_openapi_document_lists_the_participants_routes(client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    paths = doc["paths"]
    assert "get" in paths["/api/v1/tasks"]
    assert "get" in paths["/api/v1/team/runs"]
    assert "get" in paths["/api/v1/runs/{id}/file"]
    assert "post" in paths["/api/v1/runs/{id}/withdraw"]
    assert "withdrawn" in doc["components"]["schemas"]["Run"]["properties"]["status"]["enum"]
    json.dumps(doc)  # the document is plain JSON all through
    assert GOLD_TEST_A.name not in json.dumps(doc)


def test_withdrawing_while_no_phase_of_the_set_is_open_is_refused(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(T0))
    tokens = _people(app)
    client = app.test_client()
    _phase(app, "A")
    run = accepted(api_upload(client, tokens["alice"], oracle_run(), set="test"))
    # Its phase deleted, the set has no phase at all: closed, so no withdrawal either.
    cli = app.test_cli_runner()
    assert cli.invoke(args=["leaderboard", "phase", T3, "A", "test", "--delete"]).exit_code == 0
    resp = client.post(f"/api/v1/runs/{run['id']}/withdraw", headers=_auth(tokens["alice"]))
    assert resp.status_code == 409
    assert resp.get_json()["error"] == (
        "No phase of this set is open; runs can be withdrawn while one is."
    )
    args = ["leaderboard", "phase", T3, "A", "later", "--set", "test"]
    args += ["--start", "2016-02-01T00:00:00Z", "--end", "2016-03-01T00:00:00Z"]
    assert cli.invoke(args=args).exit_code == 0
    resp = client.post(f"/api/v1/runs/{run['id']}/withdraw", headers=_auth(tokens["alice"]))
    assert resp.status_code == 409
    assert resp.get_json()["error"] == (
        "No phase of this set is open; runs can be withdrawn while one is."
    )
    assert _runs(app)[0].status == "active"


def test_the_run_page_offers_no_withdrawal_after_the_deadline(make_app: AppFactory) -> None:
    clock = FixedClock(T0)
    app = make_app(clock=clock)
    tokens = _people(app)
    _phase(app, "A")
    run = accepted(api_upload(app.test_client(), tokens["alice"], oracle_run(), set="test"))
    browser = app.test_client()
    login(browser, "alice@example.org", "correct horse battery")
    assert "/withdraw" in browser.get(f"/runs/{run['id']}").get_data(as_text=True)
    clock.set(datetime(2016, 2, 1, tzinfo=UTC))
    assert "/withdraw" not in browser.get(f"/runs/{run['id']}").get_data(as_text=True)
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    clock.set(T0)
    assert "/withdraw" not in org.get(f"/runs/{run['id']}").get_data(as_text=True)
