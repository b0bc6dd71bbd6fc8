"""The organizer's subtask page: every campaign action through the forms, and their refusals."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from leaderboard.clock import FixedClock
from leaderboard.models import Job
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import (
    GOLD_TEST_A,
    api_upload,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    post_evaluation_phases,
    token_for,
)

PAGE = "/organizer/tasks/semeval2016-task3/A"


@pytest.fixture
def org_app(make_app: AppFactory) -> Flask:
    app = make_app(
        clock=FixedClock(datetime(2016, 1, 20, 12, tzinfo=UTC)), display_timezone="Asia/Qatar"
    )
    make_organizer(app, "org@example.org")
    # The organizer runs its own campaign on the preset (no post-evaluation phase).
    own_campaign(app)
    return app


@pytest.fixture
def org(org_app: Flask) -> FlaskClient:
    client = org_app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def token(client: FlaskClient) -> str:
    return csrf_from(client.get(PAGE).get_data(as_text=True))


def post(client: FlaskClient, path: str, data: dict[str, object]):  # type: ignore[no-untyped-def]
    return client.post(
        PAGE + path, data={"csrf_token": token(client), **data}, content_type="multipart/form-data"
    )


def test_phase_form_and_times_with_zones(org: FlaskClient) -> None:
    resp = post(
        org,
        "/phase",
        {
            "name": "test",
            "eval_set": "test",
            "start": "2016-01-10T00:00:00Z",
            "end": "2016-01-31T23:59:00+00:00",
            "late": "no",
            "corrections": "",
            "results": "hidden",
            "daily_quota": "2",
            "total_quota": "",
        },
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:500]
    page = org.get(PAGE).get_data(as_text=True)
    # Stored in UTC, shown in UTC and in the organizers' zone (Qatar is UTC+3).
    assert "2016-01-31 23:59:00 UTC (2016-02-01 02:59 +03)" in page
    assert "hidden" in page
    bad = post(
        org,
        "/phase",
        {
            "name": "test",
            "eval_set": "test",
            "end": "2016-01-31 23:59",
            "late": "",
            "corrections": "",
            "results": "",
        },
    )
    assert bad.status_code == 400
    assert "has no time zone" in bad.get_data(as_text=True)
    backwards = post(
        org,
        "/phase",
        {
            "name": "x",
            "eval_set": "test",
            "start": "2016-02-01T00:00:00Z",
            "end": "2016-01-01T00:00:00Z",
            "late": "",
            "corrections": "",
            "results": "",
        },
    )
    assert backwards.status_code == 400 and "must end after it starts" in backwards.get_data(
        as_text=True
    )


@pytest.fixture
def imported(org: FlaskClient) -> FlaskClient:
    """Import Kelp's primary run on the organizer's form."""
    resp = post(
        org,
        "/import",
        {
            "eval_set": "test",
            "team": "Kelp",
            "slot": "primary",
            "name": "kelp",
            "description": "Kernel methods",
            "mode": "strict",
            "file": (io.BytesIO(oracle_run()), "run.txt"),
        },
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:1000]
    return org


@pytest.fixture
def freeze_queued(imported: FlaskClient) -> FlaskClient:
    """Add the baselines and ask for a freeze of the test set."""
    assert post(imported, "/test/baselines", {}).status_code == 302
    assert post(imported, "/test/freeze", {}).status_code == 302
    return imported


@pytest.fixture
def frozen(org_app: Flask, freeze_queued: FlaskClient) -> FlaskClient:
    """Let the worker run the queued freeze (and, unasked, the visible live table's analysis)."""
    worker = org_app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert worker.output == "freeze 1: done\nanalysis 2: done\n"
    return freeze_queued


def test_an_import_that_does_not_parse_names_its_line(imported: FlaskClient) -> None:
    broken = post(
        imported,
        "/import",
        {
            "eval_set": "test",
            "team": "Kelp",
            "slot": "contrastive1",
            "mode": "lenient",
            "file": (io.BytesIO(b"Q1\tQ1_C1\t0\t1\n"), "run.txt"),
        },
    )
    assert broken.status_code == 422
    assert '<span class="line">line 1</span>: ' in broken.get_data(as_text=True)


def test_a_freeze_is_queued_once_and_never_computed_in_the_request(
    freeze_queued: FlaskClient,
) -> None:
    page = freeze_queued.get(PAGE).get_data(as_text=True)
    assert "Freeze of test queued (job 1)" in page and "Freeze queued (job 1" in page
    assert f'action="{PAGE}/test/freeze"' not in page and f'action="{PAGE}/dev/freeze"' in page
    # Asking again adds no second job.
    post(freeze_queued, "/test/freeze", {})
    assert "Freeze of test queued (job 1)" in freeze_queued.get(PAGE).get_data(as_text=True)


def test_a_freeze_handed_from_a_lost_worker_to_another_says_so(
    org_app: Flask, freeze_queued: FlaskClient
) -> None:
    with org_app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.execute(update(Job).values(attempts=1, status="queued"))
        session.commit()
    page = freeze_queued.get(PAGE).get_data(as_text=True)
    assert "Freeze queued (job 1: queued, asked at" in page
    with org_app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.execute(update(Job).values(attempts=2))
        session.commit()
    page = freeze_queued.get(PAGE).get_data(as_text=True)
    assert "Freeze queued (job 1: queued, retried 1 time, asked at" in page


def test_the_worker_freezes_the_table_as_of_the_request_once(frozen: FlaskClient) -> None:
    page = frozen.get(PAGE).get_data(as_text=True)
    assert "Official ranking frozen at 2016-01-20 12:00:00 UTC" in page
    assert "Analysis frozen with it (randomization, 10,000 samples, seed 0; " in page
    again = post(frozen, "/test/freeze", {})
    assert again.status_code == 409 and "frozen once" in again.get_data(as_text=True)


def test_a_verification_rescores_the_frozen_rows(org_app: Flask, frozen: FlaskClient) -> None:
    assert post(frozen, "/test/verify", {}).status_code == 302
    assert "Verification queued (job 3" in frozen.get(PAGE).get_data(as_text=True)
    worker = org_app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert worker.output == "verification 3: done\n"
    page = frozen.get(PAGE).get_data(as_text=True)
    assert "Verified at 2016-01-20" in page and "5 frozen rows re-score to the snapshot" in page


def test_the_run_listing_is_exported_as_csv_markdown_and_latex(imported: FlaskClient) -> None:
    listing = imported.get(PAGE + "/test/runs.csv")
    assert listing.status_code == 200
    rows = listing.get_data(as_text=True).splitlines()
    assert rows[1].startswith("Kelp,primary,kelp,active,False,False,")
    md = imported.get(PAGE + "/test/runs.md").get_data(as_text=True)
    assert "| Kelp | kelp (primary) | Kernel methods |" in md
    latex = imported.get(PAGE + "/test/runs.latex").get_data(as_text=True)
    assert "\\toprule" in latex and "Kelp & kelp & primary & Kernel methods" in latex


def test_gold_correction_through_the_form_rescores(
    org_app: Flask, org: FlaskClient, tmp_path: Path
) -> None:
    assert (
        post(
            org,
            "/import",
            {
                "eval_set": "test",
                "team": "Kelp",
                "slot": "primary",
                "mode": "strict",
                "file": (io.BytesIO(oracle_run()), "r.txt"),
            },
        ).status_code
        == 302
    )
    lines = GOLD_TEST_A.read_text().splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if line.endswith("\ttrue\n"))
    lines[i] = lines[i].replace("\ttrue\n", "\tfalse\n")
    resp = post(
        org,
        "/gold",
        {"target": "test|gold", "file": (io.BytesIO("".join(lines).encode()), "fixed.relevancy")},
    )
    assert resp.status_code == 302
    page = org.get(PAGE).get_data(as_text=True)
    # The gold is stored at once; its runs are re-scored by the worker, never in the request.
    assert "Stored gold version 2; re-scoring of test queued (job 1)" in page
    assert "Re-scoring queued (job 1: queued, asked at" in page
    assert re.search(r"gold \(fixed\.relevancy\)</td><td>2</td>", page)
    table = org.get("/tasks/semeval2016-task3/A/results.json").get_json()
    assert table["rows"][0]["cells"]["P"]["display"] == "100.00"
    worker = org_app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert worker.output == "re-score 1: done\n"
    page = org.get(PAGE).get_data(as_text=True)
    assert re.search(r'id="rescore-test" role="status">Re-scored 1 run\(s\) at ', page)
    table = org.get("/tasks/semeval2016-task3/A/results.json").get_json()
    assert table["rows"][0]["cells"]["P"]["display"] != "100.00"
    wrong = post(
        org, "/gold", {"target": "test|gold", "file": (io.BytesIO(b"not a gold file\n"), "x.txt")}
    )
    assert wrong.status_code == 400 and "was refused" in wrong.get_data(as_text=True)


def test_participants_and_visitors_cannot_organize(org_app: Flask) -> None:
    make_participant(org_app, "Aurora", "alice@example.org")
    visitor = org_app.test_client()
    assert visitor.get(PAGE).status_code == 302
    alice = org_app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    assert alice.get(PAGE).status_code == 403
    assert alice.get("/organizer/").status_code == 403
    page = alice.get("/tasks/semeval2016-task3/A/submit").get_data(as_text=True)
    for path in (
        "/phase",
        "/import",
        "/gold",
        "/test/freeze",
        "/test/rescore",
        "/test/baselines",
        "/test/verify",
    ):
        resp = alice.post(PAGE + path, data={"csrf_token": csrf_from(page)})
        assert resp.status_code == 403, path
    assert alice.get(PAGE + "/test/runs.csv").status_code == 403


def test_forms_without_csrf_are_refused(org: FlaskClient) -> None:
    for path in ("/phase", "/test/freeze", "/test/baselines"):
        resp = org.post(PAGE + path, data={"name": "x"})
        assert resp.status_code == 400, path


def test_upload_page_shows_phase_deadline_and_quota(org_app: Flask) -> None:
    from leaderboard.services.campaign.phases import PhaseChange, upsert_phase
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import unit_of

    ext = org_app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        target = resolve(session, "semeval2016-task3", "A", "test")
        change = PhaseChange(
            set_slug="test",
            start=datetime(2016, 1, 10, tzinfo=UTC),
            end=datetime(2016, 1, 31, 23, 59, tzinfo=UTC),
            daily_quota=5,
            total_quota=20,
        )
        with unit_of(session):
            upsert_phase(
                session, target, "test", change, actor="test", now=datetime(2016, 1, 1, tzinfo=UTC)
            )
    make_participant(org_app, "Aurora", "alice@example.org")
    alice = org_app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    page = alice.get("/tasks/semeval2016-task3/A/submit").get_data(as_text=True)
    assert "test (open now)" in page
    assert "2016-01-31 23:59:00 UTC (2016-02-01 02:59 +03)" in page
    assert "5 today (UTC), 20 in this phase" in page
    resp = alice.post(
        "/tasks/semeval2016-task3/A/submit",
        data={
            "csrf_token": csrf_from(page),
            "eval_set": "test",
            "slot": "primary",
            "file": (io.BytesIO(oracle_run()), "r.txt"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 302
    page = alice.get("/tasks/semeval2016-task3/A/submit").get_data(as_text=True)
    assert "4 today (UTC), 19 in this phase" in page


# ---- scores an organizer sees while the public does not

T3 = "semeval2016-task3"
NOTICE = "are hidden from the public and participants; you see them as an organizer."


@pytest.fixture
def hidden_run(make_app: AppFactory) -> tuple[Flask, int]:
    """Return an app whose subtask A has one scored run, its phase's results hidden."""
    app = make_app(clock=FixedClock(datetime(2016, 3, 1, 12, tzinfo=UTC)))
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    run = api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run())
    assert run.status_code == 201, run.get_data(as_text=True)
    phase = post_evaluation_phases(T3, "A")[0]
    cli = app.test_cli_runner()
    for args in (("--results", "hidden"), ("--release-at", "2016-04-01T10:00:00+00:00")):
        done = cli.invoke(args=["leaderboard", "phase", T3, "A", phase, *args])
        assert done.exit_code == 0, done.output
    return app, int(run.get_json()["id"])


def test_organizers_are_told_on_every_page_that_shows_them_hidden_scores(
    hidden_run: tuple[Flask, int],
) -> None:
    app, run_id = hidden_run
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    said = (
        '<p class="status hidden-results organizer-view" role="status" id="hidden-from-public">'
        "Results of phase <bdi>post-evaluation</bdi> (test set) are hidden from the public and "
        'participants until their scheduled release at <time datetime="2016-04-01T10:00:00Z">'
        "2016-04-01 10:00 UTC</time>; you see them as an organizer.</p>"
    )
    for path in (f"/tasks/{T3}/A", f"/runs/{run_id}", f"/runs/{run_id}/queries"):
        page = org.get(path)
        assert page.status_code == 200, path
        assert said in page.get_data(as_text=True), path
    # The organizer sees the scores: the table on the results page, the scores on the run page.
    assert 'class="ranking' in org.get(f"/tasks/{T3}/A").get_data(as_text=True)
    assert 'class="scores' in org.get(f"/runs/{run_id}").get_data(as_text=True)
    # The others see no scores, and no such notice.
    for client, path in ((app.test_client(), f"/tasks/{T3}/A"), (alice, f"/runs/{run_id}")):
        page = client.get(path).get_data(as_text=True)
        assert NOTICE not in page and "hidden until" in page, path


def test_no_notice_once_the_results_are_visible(hidden_run: tuple[Flask, int]) -> None:
    app, run_id = hidden_run
    phase = post_evaluation_phases(T3, "A")[0]
    shown = app.test_cli_runner().invoke(
        args=["leaderboard", "phase", T3, "A", phase, "--results", "visible"]
    )
    assert shown.exit_code == 0, shown.output
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    for path in (f"/tasks/{T3}/A", f"/runs/{run_id}", f"/runs/{run_id}/queries"):
        page = org.get(path)
        assert page.status_code == 200 and NOTICE not in page.get_data(as_text=True), path
