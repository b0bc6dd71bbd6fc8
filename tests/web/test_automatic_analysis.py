"""The automatic analysis: one per revision of a visible set's scores, unless a phase says off."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard.models import AuditEvent, Job, Phase
from leaderboard.services.jobs.automatic import AUTOMATIC, due_sets
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import JobStatus
from leaderboard.worker.jobs import queue_analyses, run_taken, take_next
from tests.conftest import csrf_from, login
from tests.helpers.jobs import sessions
from tests.helpers.sentiment import PATH, SENTIMENT, queue
from tests.runs import api_upload, make_organizer, make_participant, open_phase, token_for

TASK, SUBTASK = "example-sentiment", "A"
RESULTS = f"/tasks/{TASK}/{SUBTASK}/results.json"


def invoke(runner: FlaskCliRunner, *args: str) -> Any:
    return runner.invoke(args=["leaderboard", *args])


def once(runner: FlaskCliRunner) -> str:
    """Run ``leaderboard worker --once``; return what it printed."""
    result = invoke(runner, "worker", "--once")
    assert result.exit_code == 0, result.output
    return str(result.output)


def upload(app: Flask, email: str, slot: str) -> None:
    """Upload the example's valid run into a slot (each upload advances the set's revision)."""
    resp = api_upload(
        app.test_client(),
        token_for(app, email),
        (SENTIMENT / "run-valid.tsv").read_bytes(),
        path=PATH,
        slot=slot,
    )
    assert resp.status_code == 201, resp.get_json()


def revision(app: Flask) -> int:
    with sessions(app)() as session:
        return resolve(session, TASK, SUBTASK).eval_set.revision


def automatic(app: Flask) -> list[Job]:
    """Return the set's automatic analysis jobs, oldest first, reports loaded."""
    with sessions(app)() as session:
        set_id = resolve(session, TASK, SUBTASK).eval_set.id
        rows = session.scalars(
            select(Job)
            .where(Job.eval_set_id == set_id, Job.requested_by == AUTOMATIC)
            .order_by(Job.id)
            .options(undefer(Job.report))
        ).all()
        session.expunge_all()
        return list(rows)


def phase(runner: FlaskCliRunner, *options: str) -> str:
    """Change the example's phase ("test", opened by the fixture); return what it printed."""
    result = invoke(runner, "phase", TASK, SUBTASK, "test", *options)
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_an_upload_to_a_visible_set_is_analysed_by_the_worker_unasked(
    app: Flask, hosted: FlaskCliRunner
) -> None:
    upload(app, "alice@example.org", "contrastive1")
    current = revision(app)
    printed = once(hosted)
    [job] = automatic(app)
    assert f"analysis {job.id}: done" in printed
    assert (job.status, job.revision, job.measure, job.runs) == ("done", current, "", "ranked")
    assert (job.method, job.samples, job.seed) == ("randomization", 10_000, 0)
    assert job.report is not None and job.report["measure"] == "macro-F1"
    # Nobody asked: no organizer's action in the audit log.
    with sessions(app)() as session:
        asked = session.scalars(
            select(AuditEvent.action).where(AuditEvent.action.like("%analysis%"))
        ).all()
    assert asked == []
    # The public table carries its clusters and rank intervals on every ranked row.
    rows = app.test_client().get(RESULTS).get_json()["rows"]
    ranked = [r for r in rows if r["rank"] is not None]
    assert len(ranked) == 2
    for row in ranked:
        low, high = row["rank_interval"]
        assert isinstance(row["cluster"], int) and low <= row["rank"] <= high
    # Analysed once: another pass finds nothing to do.
    assert "analysis" not in once(hosted)
    assert len(automatic(app)) == 1


def test_a_burst_of_uploads_is_analysed_once_at_its_last_revision(
    app: Flask, hosted: FlaskCliRunner
) -> None:
    for email in ("alice@example.org", "bob@example.org"):
        for slot in ("contrastive1", "contrastive2"):
            upload(app, email, slot)
    printed = once(hosted)
    [job] = automatic(app)
    assert printed.count(": done") == 1 and f"analysis {job.id}: done" in printed
    assert job.revision == revision(app)


def test_a_job_queued_before_more_uploads_analyses_the_revision_current_when_it_starts(
    app: Flask, hosted: FlaskCliRunner
) -> None:
    ext = app.extensions["leaderboard"]
    with sessions(app)() as session:
        [queued] = queue_analyses(session, ext["clock"].now())
        # While it waits, the set is not due again, however often the worker looks.
        assert queue_analyses(session, ext["clock"].now()) == []
    asked_at = revision(app)
    upload(app, "alice@example.org", "contrastive1")
    upload(app, "bob@example.org", "contrastive1")
    with sessions(app)() as session:
        assert due_sets(session) == []
        job = take_next(session, worker="w")
        assert job is not None and job.id == queued
        done = run_taken(
            session,
            job,
            sessions=sessions(app),
            store=ext["store"],
            settings=ext["settings"],
            clock=ext["clock"].now,
        )
        assert done.status == JobStatus.DONE
        # The revision it was asked at is superseded: it analysed the one current when it ran.
        assert done.revision == revision(app) > asked_at
        assert queue_analyses(session, ext["clock"].now()) == []
    assert len(automatic(app)) == 1


def test_an_analysis_stored_meanwhile_is_not_made_again(app: Flask, hosted: FlaskCliRunner) -> None:
    ext = app.extensions["leaderboard"]
    with sessions(app)() as session:
        [queued] = queue_analyses(session, ext["clock"].now())
    # The organizer analyses the current scores from the command line before the worker starts.
    assert invoke(hosted, "significance", TASK, SUBTASK, "--samples", "300").exit_code == 0
    printed = once(hosted)
    assert printed.startswith(f"analysis {queued}: failed (Not needed: revision ")
    [job] = automatic(app)
    assert job.report is None and "has an analysis already" in job.error
    # The table shows the organizer's analysis, still the latest.
    with sessions(app)() as session:
        latest = session.scalar(
            select(Job).where(Job.status == JobStatus.DONE).order_by(Job.id.desc()).limit(1)
        )
        assert latest is not None and latest.samples == 300
    assert "cluster" in app.test_client().get(RESULTS).get_json()["rows"][0]


def test_hidden_results_are_analysed_once_released(app: Flask, hosted: FlaskCliRunner) -> None:
    assert "results hidden" in phase(hosted, "--results", "hidden")
    upload(app, "alice@example.org", "contrastive1")
    assert "analysis" not in once(hosted)
    assert automatic(app) == []
    phase(hosted, "--results", "visible")
    printed = once(hosted)
    [job] = automatic(app)
    assert printed.count(": done") == 1 and job.revision == revision(app)


def test_a_job_queued_before_the_results_were_hidden_does_not_run(
    app: Flask, hosted: FlaskCliRunner
) -> None:
    ext = app.extensions["leaderboard"]
    with sessions(app)() as session:
        [queued] = queue_analyses(session, ext["clock"].now())
    phase(hosted, "--results", "hidden")
    assert (
        once(hosted)
        == f"analysis {queued}: failed (Not needed: the set's results are hidden now.)\n"
    )


def test_analysis_off_leaves_the_set_to_the_organizers(app: Flask, hosted: FlaskCliRunner) -> None:
    assert phase(hosted, "--analysis", "off").rstrip().endswith("; automatic analysis off.")
    upload(app, "alice@example.org", "contrastive1")
    assert "analysis" not in once(hosted)
    assert automatic(app) == []
    assert "cluster" not in app.test_client().get(RESULTS).get_json()["rows"][0]
    # An organizer's analysis still works.
    asked = queue(app, Request(samples=300))
    assert once(hosted) == f"analysis {asked}: done\n"
    assert "cluster" in app.test_client().get(RESULTS).get_json()["rows"][0]
    # On again: the next change is analysed unasked.
    assert phase(hosted, "--analysis", "on").rstrip().endswith("; automatic analysis on.")
    upload(app, "bob@example.org", "contrastive1")
    assert "analysis" in once(hosted) and len(automatic(app)) == 1


def test_off_on_any_phase_of_the_set_turns_it_off(app: Flask, hosted: FlaskCliRunner) -> None:
    # A second phase on the same set (say, the post-evaluation), with the analysis off.
    result = invoke(hosted, "phase", TASK, SUBTASK, "post", "--analysis", "off")
    assert result.exit_code == 0, result.output
    assert stored(app) == [True, False]
    with sessions(app)() as session:
        assert due_sets(session) == []
    assert "analysis" not in once(hosted)


def test_a_best_or_ladder_board_is_not_analysed_unasked(app: Flask, hosted: FlaskCliRunner) -> None:
    """Such a board shows no analysis, and the public chart of one would show every run's value."""
    for board in ("best", "ladder"):
        phase(hosted, "--board", board)
        with sessions(app)() as session:
            assert due_sets(session) == []
    phase(hosted, "--board", "slots")
    with sessions(app)() as session:
        assert [s for s, _ in due_sets(session)] == [resolve(session, TASK, SUBTASK).eval_set.id]


def test_a_set_with_fewer_than_two_runs_is_not_looked_at(
    app: Flask, runner: FlaskCliRunner
) -> None:
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    open_phase(app, TASK, SUBTASK, "test")
    make_participant(app, "Aurora", "alice@example.org")
    upload(app, "alice@example.org", "primary")
    # One run: nothing to compare, nothing queued (no failed analysis on the organizer's page).
    with sessions(app)() as session:
        assert due_sets(session) == []
    assert "analysis" not in once(runner)
    assert invoke(runner, "add-baselines", TASK, SUBTASK).exit_code == 0
    with sessions(app)() as session:
        assert [s for s, _ in due_sets(session)] == [resolve(session, TASK, SUBTASK).eval_set.id]


def test_the_analysis_option_refuses_a_bad_value(app: Flask, hosted: FlaskCliRunner) -> None:
    result = invoke(hosted, "phase", TASK, SUBTASK, "test", "--analysis", "sometimes")
    assert result.exit_code == 2 and "'sometimes' is not one of 'on', 'off'" in result.output


def stored(app: Flask) -> list[bool]:
    """Return the automatic-analysis setting of each phase of the example's set."""
    with sessions(app)() as session:
        set_id = resolve(session, TASK, SUBTASK).eval_set.id
        query = select(Phase.auto_analysis).where(Phase.eval_set_id == set_id).order_by(Phase.id)
        return list(session.scalars(query))


def test_the_phase_page_form_sets_the_analysis(app: Flask, hosted: FlaskCliRunner) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = f"/organizer/tasks/{TASK}/{SUBTASK}/phase"
    html = org.get(f"{page}?name=test").get_data(as_text=True)
    assert re.search(r'<option selected value="on">', html), "the stored setting is shown"
    data = {"csrf_token": csrf_from(html), "name": "test", "eval_set": "test", "zone": "UTC"}
    # The other settings left unchanged, as the page's "unchanged" choices post them.
    data.update(late="", corrections="", results="", names="", diagnostics="")
    bad = org.post(page, data={**data, "analysis": "sometimes"})
    assert bad.status_code == 400 and "Check the fields below" in bad.get_data(as_text=True)
    assert stored(app) == [True]
    assert org.post(page, data={**data, "analysis": "off"}).status_code == 302
    assert stored(app) == [False]
    html = org.get(f"{page}?name=test").get_data(as_text=True)
    assert re.search(r'<option selected value="off">', html)
    audit = org.get("/organizer/audit?action=update-phase").get_data(as_text=True)
    assert "automatic analysis on → off" in audit
