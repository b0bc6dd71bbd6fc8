"""Participant flows in the browser and over the API: verdicts, refusals, history."""

from __future__ import annotations

import io
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from leaderboard.models import Run
from leaderboard.services.common.errors import RunRejected
from leaderboard.services.runs.core import Submission, Upload, prepare_run
from leaderboard.services.tasks.catalog import resolve
from leaderboard.unit_of_work import retried
from leaderboard.web.common.context import db, settings, store
from tests.conftest import AppFactory, csrf_from, login
from tests.helpers.uploads import SUBMIT_A, form_upload
from tests.runs import (
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    token_for,
)
from tests.shared_data import shared_path

API_A = "/api/v1/tasks/semeval2016-task3/A/runs"


@pytest.fixture
def alice(app: Flask, client: FlaskClient) -> FlaskClient:
    make_participant(app, "Aurora", "alice@example.org")
    login(client, "alice@example.org", "correct horse battery")
    return client


def test_home_lists_the_task_and_its_subtasks(client: FlaskClient) -> None:
    html = client.get("/").get_data(as_text=True)
    assert "SemEval-2016 Task 3" in html
    for st in "ABCD":
        assert f"/tasks/semeval2016-task3/{st}" in html


def test_form_upload_of_an_oracle_run_shows_its_scores(alice: FlaskClient) -> None:
    resp = form_upload(alice, oracle_run())
    assert resp.status_code == 302
    page = alice.get(resp.headers["Location"]).get_data(as_text=True)
    assert "accepted and scored" in page
    # 12 of 327 test questions have no relevant comment: MAP = MRR = 1 - 12/327 = 96.33 %.
    assert re.search(r"<th[^>]*>MAP</th>", page)
    cells = re.findall(r'<td class="num"[^>]*>([^<]+)</td>', page)
    assert cells == ["96.33", "100.00", "96.33", "100.00", "100.00", "100.00", "100.00"]


def test_form_upload_of_a_real_2016_run_matches_its_score_file(alice: FlaskClient) -> None:
    run = shared_path("semeval2016-task3", "submissions", "ConvKN", "subtask_A_primary.txt")
    resp = form_upload(alice, run.read_bytes())
    assert resp.status_code == 302
    page = alice.get(resp.headers["Location"]).get_data(as_text=True)
    # ALL SCORES: 0.7766 0.8805 84.9284 0.7556 0.5884 0.6616 0.7554
    cells = re.findall(r'<td class="num" title="([^"]+)">([^<]+)</td>', page)
    assert cells == [
        ("0.7766", "77.66"),
        ("0.8805", "88.05"),
        ("84.9284", "84.93"),
        ("0.7556", "75.56"),
        ("0.5884", "58.84"),
        ("0.6616", "66.16"),
        ("0.7554", "75.54"),
    ]


def test_form_upload_with_a_broken_line_names_it_and_stores_nothing(
    alice: FlaskClient, app: Flask
) -> None:
    lines = oracle_run().decode().splitlines()
    lines[4] = lines[4].replace("\t0\t", "\t0\tabc\t", 1).rsplit("\t", 1)[0]  # score 'abc'
    resp = form_upload(alice, ("\n".join(lines) + "\n").encode())
    assert resp.status_code == 422
    page = resp.get_data(as_text=True)
    # The line is named once: "line 5: score ...", never "line 5 Line 5: score ...".
    assert (
        '<li><span class="line">line 5</span>: '
        '<span class="msg">score &#39;abc&#39; is not a number.</span></li>'
    ) in page
    assert "Line 5:" not in page
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        assert s.scalars(select(Run)).all() == []


def test_form_upload_without_csrf_token_is_refused(alice: FlaskClient) -> None:
    resp = alice.post(
        SUBMIT_A,
        data={"eval_set": "test", "slot": "primary", "file": (io.BytesIO(oracle_run()), "r.txt")},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 400
    assert "security token" in resp.get_data(as_text=True)


def test_unauthenticated_upload_form_redirects_to_login(client: FlaskClient) -> None:
    resp = client.get(SUBMIT_A)
    assert resp.status_code == 302
    assert "/login" in resp.headers["Location"]


def test_organizer_cannot_use_the_participant_form(app: Flask, client: FlaskClient) -> None:
    make_organizer(app, "org@example.org")
    login(client, "org@example.org", "organizer password")
    assert client.get(SUBMIT_A).status_code == 403


def test_wrong_password_is_refused(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    page = client.get("/login").get_data(as_text=True)
    resp = client.post(
        "/login",
        data={"email": "alice@example.org", "password": "wrong", "csrf_token": csrf_from(page)},
    )
    assert resp.status_code == 401
    assert "Wrong e-mail address or password" in resp.get_data(as_text=True)
    assert client.get("/team").status_code == 302


def test_login_redirect_never_leaves_the_site(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    page = client.get("/login").get_data(as_text=True)
    resp = client.post(
        "/login?next=https://evil.example/",
        data={
            "email": "alice@example.org",
            "password": "correct horse battery",
            "csrf_token": csrf_from(page),
        },
    )
    assert resp.status_code == 302
    assert resp.headers["Location"] == "/"


def test_replacing_a_run_keeps_it_in_history_and_out_of_the_table(
    alice: FlaskClient, app: Flask
) -> None:
    first = form_upload(alice, constant_run())
    second = form_upload(alice, oracle_run())
    assert first.status_code == second.status_code == 302
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        runs = s.scalars(select(Run).order_by(Run.id)).all()
        assert [(r.status, r.active_key is None) for r in runs] == [
            ("replaced", True),
            ("active", False),
        ]
        assert runs[0].replaced_by_id == runs[1].id
    team = alice.get("/team").get_data(as_text=True)
    assert team.count("replaced (not ranked)") == 1
    table = alice.get("/tasks/semeval2016-task3/A/results.json").get_json()
    assert [r["label"] for r in table["rows"]] == ["Aurora-primary"]
    assert table["rows"][0]["cells"]["MAP"]["display"] == "96.33"


def test_another_teams_run_is_not_found(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    login(client, "alice@example.org", "correct horse battery")
    run_url = form_upload(client, oracle_run()).headers["Location"].split("?")[0]
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    login(client, "bob@example.org", "correct horse battery")
    assert client.get(run_url).status_code == 404
    run_id = int(run_url.rsplit("/", 1)[1])
    bob = token_for(app, "bob@example.org")
    resp = client.get(f"/api/v1/runs/{run_id}", headers={"Authorization": f"Bearer {bob}"})
    assert resp.status_code == 404
    assert "scores" not in resp.get_json()


def test_api_upload_valid_and_invalid(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    ok = api_upload(client, token, oracle_run(), name="api-run", description="oracle")
    assert ok.status_code == 201, ok.get_json()
    body = ok.get_json()
    assert body["team"] == "Aurora" and body["slot"] == "primary" and body["status"] == "active"
    assert body["official"]["MAP"] == "0.9633"
    assert body["scores"]["AvgRec"] == pytest.approx(100.0)
    again = client.get(f"/api/v1/runs/{body['id']}", headers={"Authorization": f"Bearer {token}"})
    assert again.status_code == 200 and again.get_json()["official"] == body["official"]

    broken = oracle_run().replace(b"\ttrue\n", b"\tTrue\n", 1)
    bad = api_upload(client, token, broken, name="api-run")
    assert bad.status_code == 422
    issues = bad.get_json()["issues"]
    # The line is a field of its own; the message does not repeat it.
    assert {
        "line": 1,
        "message": "label 'True' must be 'true' or 'false' (lower case).",
    } in issues
    assert not any(str(i["message"]).lower().startswith("line") for i in issues)


def test_api_refusals(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    assert api_upload(client, "lb_not-a-token", oracle_run(), name="api-run").status_code == 401
    resp = client.post(API_A, data={"slot": "primary"})
    assert resp.status_code == 401
    assert (
        api_upload(client, token, oracle_run(), name="api-run", slot="contrastive9").status_code
        == 409
    )
    assert api_upload(client, token, oracle_run(), slot=None).status_code == 400
    missing = api_upload(client, token, b"x", path="/api/v1/tasks/no-such-task/A/runs")
    assert missing.status_code == 404
    assert (
        client.get("/api/v1/runs/999999", headers={"Authorization": f"Bearer {token}"}).status_code
        == 404
    )


def test_revoked_token_no_longer_works(app: Flask, client: FlaskClient, runner) -> None:  # type: ignore[no-untyped-def]
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    assert (
        client.get(
            "/api/v1/tasks/semeval2016-task3/A/table", headers={"Authorization": f"Bearer {token}"}
        ).status_code
        == 200
    )
    result = runner.invoke(args=["leaderboard", "token", "alice@example.org", "--revoke"])
    assert result.exit_code == 0, result.output
    assert (
        client.get(
            "/api/v1/tasks/semeval2016-task3/A/table", headers={"Authorization": f"Bearer {token}"}
        ).status_code
        == 401
    )


def test_a_deactivated_users_token_no_longer_works(app: Flask, client: FlaskClient) -> None:
    from sqlalchemy import update

    from leaderboard.models import User

    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    table = "/api/v1/tasks/semeval2016-task3/A/table"
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get(table, headers=headers).status_code == 200
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        s.execute(update(User).where(User.email == "alice@example.org").values(is_active=False))
        s.commit()
    assert client.get(table, headers=headers).status_code == 401
    assert client.get(table, headers={"Authorization": f"Bearer {token}x"}).status_code == 401


def test_api_ignores_session_cookies(alice: FlaskClient) -> None:
    """A logged-in browser cannot drive the API without a token (no CSRF hole)."""
    resp = alice.post(
        API_A,
        data={"slot": "primary", "file": (io.BytesIO(oracle_run()), "r.txt")},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 401


def test_gzip_upload_is_accepted_and_archives_are_refused(app: Flask, client: FlaskClient) -> None:
    import gzip
    import zipfile

    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    assert api_upload(client, token, gzip.compress(oracle_run()), name="api-run").status_code == 201
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("run.txt", oracle_run())
    resp = api_upload(client, token, buf.getvalue(), name="api-run")
    assert resp.status_code == 422
    assert "Archives" in resp.get_json()["issues"][0]["message"]


def test_upload_over_the_size_limit_is_refused(make_app: AppFactory) -> None:
    small = make_app(max_upload_mb=0.01)
    make_participant(small, "Aurora", "alice@example.org")
    token = token_for(small, "alice@example.org")
    resp = api_upload(small.test_client(), token, oracle_run(), name="api-run")
    assert resp.status_code == 413
    assert "larger than the limit" in resp.get_json()["error"]


@pytest.mark.parametrize("run", [oracle_run(), b"not a run\n"], ids=["accepted", "refused"])
def test_prepare_run_closes_the_files_it_was_given(app: Flask, run: bytes) -> None:
    # The CLI hands over files it opened by path: left open, each leaked until collected.
    upload = Upload.from_bytes({"file": run})
    with app.app_context():
        target = resolve(db(), "semeval2016-task3", "A")
        sub = Submission(target=target, slot="primary", upload=upload, via="cli")
        try:
            retried(db(), prepare_run(db(), store(), settings(), sub, user=None, team="Aurora"))
        except RunRejected:
            assert run != oracle_run()
    assert all(stream.closed for stream in upload.files.values())


def test_names_that_cannot_be_slugs_are_not_found_without_a_query(
    app: Flask, client: FlaskClient
) -> None:
    # PostgreSQL refuses a NUL byte in a query parameter: such a name must be a 404, not a 500.
    make_participant(app, "Aurora", "nul@example.org")
    token = token_for(app, "nul@example.org")
    resp = api_upload(client, token, oracle_run(), set="te\x00st")
    assert resp.status_code == 404, resp.get_json()
    assert "no evaluation set" in resp.get_json()["error"]
    resp = api_upload(client, token, oracle_run(), path="/api/v1/tasks/semeval%00/A/runs")
    assert resp.status_code == 404 and "No task" in resp.get_json()["error"]
    resp = api_upload(client, token, oracle_run(), path="/api/v1/tasks/semeval2016-task3/A%00/runs")
    assert resp.status_code == 404 and "has no subtask" in resp.get_json()["error"]
