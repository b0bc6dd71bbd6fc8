"""Smaller leaks: run ids, size-limit messages and echoed values tell nothing they should not."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from leaderboard.models import Run
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import api_upload, make_organizer, make_participant, oracle_run, token_for

T3 = "semeval2016-task3"
API_A = f"/api/v1/tasks/{T3}/A/runs"
SUBMIT_A = f"/tasks/{T3}/A/submit"
#: A run id no test database reaches, whose digits occur nowhere else on a page.
MISSING = 2_000_000_123
#: A hostile value far longer than any message may echo; "Z" * 100 must never come back.
HUGE = "Z" * 100_000
ECHO = "Z" * 100
#: Longest acceptable message that names (a prefix of) a submitted value.
SHORT = 200


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ------------------------------------------------------------------------------- run ids


@pytest.fixture
def two_teams(app: Flask, client: FlaskClient) -> dict[str, object]:
    """Aurora and Borealis, Borealis with one run, plus the preset baselines of subtask A."""
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    bob_run = api_upload(client, token_for(app, "bob@example.org"), oracle_run())
    assert bob_run.status_code == 201, bob_run.get_json()
    added = app.test_cli_runner().invoke(args=["leaderboard", "add-baselines", T3, "A"])
    assert added.exit_code == 0, added.output
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        baseline = session.scalar(select(Run.id).where(Run.kind == "baseline").limit(1))
    assert baseline is not None
    return {"run_b": bob_run.get_json()["id"], "baseline": baseline}


def test_another_teams_run_answers_like_a_missing_one_on_the_api(
    app: Flask, client: FlaskClient, two_teams: dict[str, object]
) -> None:
    alice = bearer(token_for(app, "alice@example.org"))
    missing = client.get(f"/api/v1/runs/{MISSING}", headers=alice)
    assert missing.status_code == 404
    for key in ("run_b", "baseline"):
        run_id = two_teams[key]
        resp = client.get(f"/api/v1/runs/{run_id}", headers=alice)
        assert resp.status_code == 404, (key, resp.get_json())
        assert resp.get_data() == missing.get_data().replace(
            str(MISSING).encode(), str(run_id).encode()
        ), key
        assert resp.headers["Content-Type"] == missing.headers["Content-Type"]
        assert resp.get_json() == {"error": f"No run {run_id}."}
    # Organizers still see every run, and a team its own.
    make_organizer(app, "org@example.org")
    org = bearer(token_for(app, "org@example.org"))
    for key in ("run_b", "baseline"):
        assert client.get(f"/api/v1/runs/{two_teams[key]}", headers=org).status_code == 200
    bob = bearer(token_for(app, "bob@example.org"))
    assert client.get(f"/api/v1/runs/{two_teams['run_b']}", headers=bob).status_code == 200


def test_another_teams_run_answers_like_a_missing_one_on_the_run_page(
    client: FlaskClient, two_teams: dict[str, object]
) -> None:
    login(client, "alice@example.org", "correct horse battery")
    missing = client.get(f"/runs/{MISSING}")
    assert missing.status_code == 404
    for key in ("run_b", "baseline"):
        run_id = two_teams[key]
        resp = client.get(f"/runs/{run_id}")
        assert resp.status_code == 404, key
        expected = missing.get_data(as_text=True).replace(str(MISSING), str(run_id))
        assert resp.get_data(as_text=True) == expected, key
        assert f"No run {run_id}." in expected


# ---------------------------------------------------------------------------- 413 causes


def many_parts(n: int = 1_001) -> dict[str, object]:
    return {f"field{i}": "x" for i in range(n)}


def test_too_many_parts_says_so_on_the_api(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    resp = client.post(
        API_A,
        data=many_parts(),
        headers=bearer(token_for(app, "alice@example.org")),
        content_type="multipart/form-data",
    )
    assert resp.status_code == 413
    error = resp.get_json()["error"]
    assert error.startswith("The form has more than 1,000 parts"), error
    assert "MB" not in error


def test_too_many_parts_says_so_on_the_web_form(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    login(client, "alice@example.org", "correct horse battery")
    token = csrf_from(client.get(SUBMIT_A).get_data(as_text=True))
    resp = client.post(
        SUBMIT_A,
        data={"csrf_token": token, **many_parts()},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 413
    body = resp.get_data(as_text=True)
    assert "The form has more than 1,000 parts" in body
    assert "200 MB" not in body


def test_a_huge_text_field_names_the_form_memory_limit(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    resp = client.post(
        API_A,
        data={"slot": "primary", "description": "d" * 600_000},
        headers=bearer(token_for(app, "alice@example.org")),
        content_type="multipart/form-data",
    )
    assert resp.status_code == 413
    error = resp.get_json()["error"]
    # Flask's default MAX_FORM_MEMORY_SIZE; the body (600 kB) is far under the 200 MB limit.
    assert "larger than the limit of 500,000 bytes" in error, error
    assert "MB" not in error


def test_a_huge_text_field_on_the_web_form_names_the_form_memory_limit(
    app: Flask, client: FlaskClient
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    login(client, "alice@example.org", "correct horse battery")
    resp = client.post(
        SUBMIT_A,
        data={"description": "d" * 600_000},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 413
    body = resp.get_data(as_text=True)
    assert "larger than the limit of 500,000 bytes" in body
    assert "200 MB" not in body


@pytest.fixture
def half_mb_app(make_app: AppFactory) -> Flask:
    small = make_app(max_upload_mb=0.5)
    make_participant(small, "Aurora", "alice@example.org")
    return small


def test_a_body_over_the_upload_limit_names_the_real_limit(half_mb_app: Flask) -> None:
    client = half_mb_app.test_client()
    token = token_for(half_mb_app, "alice@example.org")
    big = oracle_run() * (1 + 600_000 // len(oracle_run()))
    resp = api_upload(client, token, big, slot="primary")
    assert resp.status_code == 413
    assert resp.get_json() == {"error": "The upload is larger than the limit of 0.5 MB."}
    login(client, "alice@example.org", "correct horse battery")
    page = client.post(
        SUBMIT_A,
        data={"file": (io.BytesIO(big), "run.txt")},
        content_type="multipart/form-data",
    )
    assert page.status_code == 413
    assert "The upload is larger than the limit of 0.5 MB." in page.get_data(as_text=True)


# ------------------------------------------------------------------------- echoed values


def test_a_huge_slot_value_is_cut_in_the_refusal(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    resp = api_upload(client, token_for(app, "alice@example.org"), oracle_run(), slot=HUGE)
    assert resp.status_code == 409
    error = resp.get_json()["error"]
    assert error.startswith("Unknown run slot 'ZZZ") and "…'" in error, error
    assert len(error) < SHORT, len(error)
    # The web form refuses a slot outside its choices without naming it at all.
    login(client, "alice@example.org", "correct horse battery")
    token = csrf_from(client.get(SUBMIT_A).get_data(as_text=True))
    page = client.post(
        SUBMIT_A,
        data={
            "csrf_token": token,
            "eval_set": "test",
            "slot": HUGE,
            "file": (io.BytesIO(oracle_run()), "run.txt"),
        },
        content_type="multipart/form-data",
    )
    assert page.status_code in (400, 409, 422)
    assert ECHO not in page.get_data(as_text=True)


@pytest.mark.parametrize(
    "path",
    [
        f"/tasks/{HUGE[:10_000]}/A",
        f"/tasks/{T3}/{HUGE[:10_000]}",
        f"/tasks/{T3}/A?set={HUGE[:10_000]}",
        f"/tasks/{T3}/A?view={HUGE[:10_000]}",
        f"/api/v1/tasks/{HUGE[:10_000]}/A/table",
        f"/api/v1/tasks/{T3}/{HUGE[:10_000]}/table",
        f"/api/v1/tasks/{T3}/A/table?set={HUGE[:10_000]}",
        f"/api/v1/tasks/{T3}/A/table?view={HUGE[:10_000]}",
    ],
)
def test_unknown_names_in_urls_are_cut(app: Flask, client: FlaskClient, path: str) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    resp = client.get(path, headers=bearer(token_for(app, "alice@example.org")))
    assert resp.status_code in (400, 404), resp.status_code
    body = resp.get_data(as_text=True)
    assert ECHO not in body
    if path.startswith("/api/"):
        error = resp.get_json()["error"]
        assert "ZZZ" in error and len(error) < SHORT, error


def test_unknown_names_on_the_command_line_are_cut(runner: FlaskCliRunner, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    commands = [
        ["table", HUGE, "A"],
        ["table", T3, HUGE],
        ["runs", T3, "A", "--set", HUGE],
        ["score", HUGE, "A", str(run)],
        ["score", T3, HUGE, str(run)],
        ["score", T3, "A", str(run), "--set", HUGE],
        ["set-gold", "trec-car-2017", "passage", str(run), "--variant", HUGE],
        ["import-runs", T3, "A", "--team", "Kelp", "--slot", HUGE, str(run)],
        ["create-user", "new@example.org", "--role", "participant", "--team", HUGE],
        ["token", f"{HUGE}@example.org"],
        ["disable-user", f"{HUGE}@example.org"],
    ]
    for args in commands:
        result = runner.invoke(args=["leaderboard", *args])
        assert result.exit_code != 0, (args[:2], result.output[:300])
        assert "ZZZ" in result.output and ECHO not in result.output, (args[:2], result.output[:300])
        assert len(result.output) < SHORT, (args[:2], result.output[:300])


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"


@pytest.mark.parametrize(
    "edit",
    [
        ('official_measure = "MAP"', f'official_measure = "{HUGE}"'),
        ('title = "Tiny reranking task"', f'title = "Tiny"\n{HUGE} = "blue"'),
        ('ranked_slots = ["primary"]', f'ranked_slots = ["primary", "{HUGE}"]'),
        ('title = "Tiny reranking task"', f"title = [{', '.join(['1'] * 20_000)}]"),
    ],
)
def test_definition_refusals_cut_the_values_they_name(
    tmp_path: Path, runner: FlaskCliRunner, edit: tuple[str, str]
) -> None:
    folder = tmp_path / "task"
    shutil.copytree(FIXTURE, folder)
    text = (folder / "task.toml").read_text()
    assert edit[0] in text
    (folder / "task.toml").write_text(text.replace(edit[0], edit[1]))
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code == 1, result.output[:300]
    assert "refused" in result.output and ECHO not in result.output, result.output[:300]
    assert "1, " * 40 not in result.output  # a long list is cut too
    assert len(result.output) < SHORT + 100, result.output[:300]
