"""Campaign defaults (issue 19): a subtask is closed until a phase opens it, the presets ship an
open post-evaluation phase, phases can be deleted, and a freeze before a deadline is explicit."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, FrozenTable, Job, Phase, QuotaUsage, Run
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import (
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    token_for,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"
TINY = "/api/v1/tasks/tiny-cqa/main/runs"
TINY_RUN = b"q1\tq1_c1\t0\t0.2\ttrue\nq1\tq1_c2\t0\t0.9\ttrue\nq1\tq1_c3\t0\t0.5\tfalse\nq2\tq2_c1\t0\t0.1\tfalse\nq2\tq2_c2\t0\t0.8\ttrue\n"
T3 = "semeval2016-task3"
ORGANIZE_A = f"/organizer/tasks/{T3}/A"
CLOSED = (
    "Uploads to tiny-cqa main (test set) are closed: no phase is open. A subtask takes runs "
    "only while the organizers open a phase."
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def cli(app: Flask, *args: str) -> Any:
    return app.test_cli_runner().invoke(args=["leaderboard", *args])


def rows(app: Flask, model: Any, *where: Any) -> list[Any]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(model).where(*where)))


def audit(app: Flask, action: str) -> list[dict[str, Any]]:
    return [e.details for e in rows(app, AuditEvent, AuditEvent.action == action)]


def phases(app: Flask) -> dict[tuple[str, str, str], Phase]:
    """Return every phase by (task, subtask, set), read with its subtask and set."""
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return {
            (p.subtask.task.slug, p.subtask.slug, p.eval_set.slug): p
            for p in s.scalars(select(Phase))
        }


def phase_names(app: Flask, task: str, subtask: str) -> dict[str, Phase]:
    """Return a subtask's phases by name."""
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return {
            p.name: p
            for p in s.scalars(select(Phase))
            if (p.subtask.task.slug, p.subtask.slug) == (task, subtask)
        }


@pytest.fixture
def tiny(app: Flask) -> Flask:
    """The app with tiny-cqa added (no phase) and alice of Aurora."""
    added = cli(app, "add-task", str(FIXTURE / "task.toml"))
    assert added.exit_code == 0, added.output
    make_participant(app, "Aurora", "alice@example.org")
    return app


# ------------------------------------------------------------------ 1. closed without a phase


def test_a_subtask_without_a_phase_refuses_every_upload_and_stores_nothing(
    tiny: Flask, tmp_path: Path
) -> None:
    client = tiny.test_client()
    token = token_for(tiny, "alice@example.org")
    api = api_upload(client, token, TINY_RUN, path=TINY)
    assert api.status_code == 409 and api.get_json()["error"] == CLOSED

    browser = tiny.test_client()
    login(browser, "alice@example.org", "correct horse battery")
    page = browser.get("/tasks/tiny-cqa/main/submit").get_data(as_text=True)
    assert '<strong id="uploads-open">closed</strong>' in page
    form = browser.post(
        "/tasks/tiny-cqa/main/submit",
        data={
            "csrf_token": csrf_from(page),
            "eval_set": "test",
            "slot": "primary",
            "file": (io.BytesIO(TINY_RUN), "run.txt"),
        },
        content_type="multipart/form-data",
    )
    assert form.status_code == 409 and CLOSED in form.get_data(as_text=True)
    assert rows(tiny, Run) == [] and rows(tiny, QuotaUsage) == []

    # The client's listing says so too; organizers still import runs and add baselines.
    listing = client.get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"})
    tiny_task = next(t for t in listing.get_json()["tasks"] if t["slug"] == "tiny-cqa")
    assert tiny_task["subtasks"][0]["sets"][0]["uploads_open"] is False
    path = tmp_path / "run.txt"
    path.write_bytes(TINY_RUN)
    imported = cli(tiny, "import-runs", "tiny-cqa", "main", "--team", "Aurora", "--slot",
                   "primary", str(path))  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert cli(tiny, "add-baselines", "tiny-cqa", "main").exit_code == 0
    assert len(rows(tiny, Run)) == 4


def test_an_open_phase_opens_the_subtask_and_withdrawal_follows_it(tiny: Flask) -> None:
    client = tiny.test_client()
    token = token_for(tiny, "alice@example.org")
    opened = cli(tiny, "phase", "tiny-cqa", "main", "open", "--start", "2000-01-01T00:00:00Z")
    assert opened.exit_code == 0, opened.output
    run = api_upload(client, token, TINY_RUN, path=TINY)
    assert run.status_code == 201 and run.get_json()["phase"] == "open"
    assert cli(tiny, "phase", "tiny-cqa", "main", "open", "--delete").exit_code == 0
    # Closed again: no upload, no withdrawal.
    assert api_upload(client, token, TINY_RUN, path=TINY).get_json()["error"] == CLOSED
    gone = client.post(
        f"/api/v1/runs/{run.get_json()['id']}/withdraw",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert gone.status_code == 409


# ------------------------------------------------------------------ 2. add-task says so


def test_add_task_says_its_new_subtasks_are_closed(app: Flask) -> None:
    added = cli(app, "add-task", str(FIXTURE / "task.toml"))
    assert added.exit_code == 0
    assert (
        "Subtask main is closed: no phase is open; open one with "
        "`leaderboard phase tiny-cqa main NAME --start ISO [--end ISO]`." in added.output
    )
    assert rows(app, Phase, Phase.name.like("post-evaluation%")) != []  # the presets' only
    assert cli(app, "phase", "tiny-cqa", "main", "open").exit_code == 0
    again = cli(app, "add-task", str(FIXTURE / "task.toml"))
    assert again.exit_code == 0 and "is closed" not in again.output


# ------------------------------------------------------------------ 3. presets' post-evaluation


def test_presets_ship_an_open_post_evaluation_phase_per_set(app: Flask) -> None:
    found = phases(app)
    assert set(found) == {
        *((T3, s, es) for s in "ABCD" for es in ("test", "dev")),
        ("semeval2016-task1", "en", "test"),
        ("semeval2016-task1", "es-en", "test"),
        ("semeval2016-task1", "es-en", "trial"),
        ("trec-car-2017", "passage", "test"),
    }
    test_a, dev_a = found[(T3, "A", "test")], found[(T3, "A", "dev")]
    assert (test_a.name, dev_a.name) == ("post-evaluation", "post-evaluation-dev")
    for p in found.values():
        assert p.ends_at is None and p.daily_quota is None and p.total_quota is None
        assert not p.results_hidden and p.names == "public"
    assert test_a.starts_at.replace(tzinfo=UTC) == at("2016-02-01T00:00:00")
    trec = found[("trec-car-2017", "passage", "test")]
    assert trec.starts_at.replace(tzinfo=UTC) == at("2017-12-01T00:00:00")


def test_a_newcomer_uploads_to_a_preset(app: Flask) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    run = api_upload(app.test_client(), token, oracle_run())
    assert run.status_code == 201 and run.get_json()["phase"] == "post-evaluation"
    assert run.get_json()["official"]["MAP"] is not None


def test_init_again_leaves_the_organizers_phases_as_they_are(app: Flask) -> None:
    assert cli(app, "phase", T3, "A", "post-evaluation", "--delete").exit_code == 0
    changed = cli(app, "phase", T3, "B", "post-evaluation", "--results", "hidden")
    assert changed.exit_code == 0
    before = len(rows(app, Phase))
    again = cli(app, "init")
    assert again.exit_code == 0, again.output
    assert len(rows(app, Phase)) == before
    assert list(phase_names(app, T3, "A")) == ["post-evaluation-dev"]
    assert phase_names(app, T3, "B")["post-evaluation"].results_hidden


# ------------------------------------------------------------------ 4. deleting a phase


def test_phase_delete_keeps_runs_and_is_audited(make_app: AppFactory, tmp_path: Path) -> None:
    app = make_app(clock=FixedClock(at("2016-03-01T12:00:00")))
    make_participant(app, "Aurora", "alice@example.org")
    run = api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run())
    assert run.status_code == 201 and run.get_json()["phase"] == "post-evaluation"

    missing = cli(app, "phase", T3, "A", "no-such", "--delete")
    assert missing.exit_code == 1
    assert "Error: Subtask A has no phase 'no-such'" in missing.output
    mixed = cli(app, "phase", T3, "A", "post-evaluation", "--delete", "--late")
    assert mixed.exit_code == 1 and "--delete takes no other option" in mixed.output

    data = tmp_path / "inputs.txt"
    data.write_bytes(b"inputs\n")
    added = cli(app, "data", "add", T3, "A", str(data), "--phase", "post-evaluation")
    assert added.exit_code == 0, added.output
    refused = cli(app, "phase", T3, "A", "post-evaluation", "--delete")
    assert refused.exit_code == 1
    assert "Phase post-evaluation has 1 task data file(s) attached" in refused.output
    (file_id,) = (
        line.split("\t")[0] for line in cli(app, "data", "list", T3, "A").output.split("\n") if line
    )
    assert cli(app, "data", "delete", T3, "A", file_id).exit_code == 0

    done = cli(app, "phase", T3, "A", "post-evaluation", "--delete")
    assert done.exit_code == 0, done.output
    assert "Deleted phase post-evaluation of semeval2016-task3 A" in done.output
    (kept,) = rows(app, Run, Run.kind == "run")
    assert kept.id == run.get_json()["id"] and kept.phase_id is None and kept.status == "active"
    (event,) = audit(app, "delete-phase")
    assert event["phase"] == "post-evaluation" and event["set"] == "test" and event["runs"] == 1


def test_the_organizer_page_deletes_a_phase(app: Flask) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get(ORGANIZE_A).get_data(as_text=True)
    assert 'aria-label="Delete phase post-evaluation-dev"' in page
    no_csrf = org.post(f"{ORGANIZE_A}/phase/delete", data={"name": "post-evaluation-dev"})
    assert no_csrf.status_code == 400
    resp = org.post(
        f"{ORGANIZE_A}/phase/delete",
        data={"name": "post-evaluation-dev", "csrf_token": csrf_from(page)},
    )
    assert resp.status_code == 302
    assert list(phase_names(app, T3, "A")) == ["post-evaluation"]
    unknown = org.post(
        f"{ORGANIZE_A}/phase/delete", data={"name": "nope", "csrf_token": csrf_from(page)}
    )
    assert unknown.status_code == 404 and "has no phase" in unknown.get_data(as_text=True)
    (event,) = rows(app, AuditEvent, AuditEvent.action == "delete-phase")
    assert event.actor == "org@example.org" and event.details["phase"] == "post-evaluation-dev"


def test_of_two_open_phases_the_one_that_started_last_admits(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(at("2016-03-05T12:00:00")))
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    for name, start, *quota in (
        ("first-round", "2016-01-01T00:00:00Z"),
        ("second-round", "2016-03-01T00:00:00Z", "--daily-quota", "1"),
    ):
        made = cli(app, "phase", T3, "A", name, "--start", start, *quota)
        assert made.exit_code == 0, made.output
    # Open now: post-evaluation (since 02-01), first-round (01-01) and second-round (03-01).
    first = api_upload(app.test_client(), token, oracle_run())
    assert first.status_code == 201 and first.get_json()["phase"] == "second-round"
    # Its quota applies, not the unlimited ones of the phases that started earlier.
    again = api_upload(app.test_client(), token, constant_run(), slot="contrastive1")
    assert again.status_code == 409 and "quota is reached" in again.get_json()["error"]


# ------------------------------------------------------------------ 5. freeze before a deadline


@pytest.fixture
def deadline_app(make_app: AppFactory) -> Flask:
    """Subtask A's own campaign: phase test until 2016-01-31 23:59 UTC, one run in; now 01-20."""
    app = make_app(clock=FixedClock(at("2016-01-20T12:00:00")))
    own_campaign(app)
    made = cli(app, "phase", T3, "A", "test", "--start", "2016-01-10T00:00:00Z",
               "--end", "2016-01-31T23:59:00Z")  # fmt: skip
    assert made.exit_code == 0, made.output
    make_participant(app, "Aurora", "alice@example.org")
    run = api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run())
    assert run.status_code == 201
    return app


def test_cli_freeze_before_the_deadline_needs_before_deadline(deadline_app: Flask) -> None:
    refused = cli(deadline_app, "freeze", T3, "A")
    assert refused.exit_code == 1
    assert (
        "Error: Phase test of the test set has its deadline at 2016-01-31 23:59 UTC, still "
        "ahead: freezing now would leave out runs submitted on time before it." in refused.output
    )
    assert "add --before-deadline" in refused.output
    assert rows(deadline_app, FrozenTable) == [] and audit(deadline_app, "freeze") == []
    frozen = cli(deadline_app, "freeze", T3, "A", "--before-deadline")
    assert frozen.exit_code == 0, frozen.output
    (event,) = audit(deadline_app, "freeze")
    assert event["before_deadline"] is True and event["phase"] == "test"
    assert event["deadline"].startswith("2016-01-31T23:59:00")


def test_cli_freeze_after_the_deadline_needs_nothing(make_app: AppFactory) -> None:
    clock = FixedClock(at("2016-01-20T12:00:00"))
    app = make_app(clock=clock)
    own_campaign(app)
    assert cli(app, "phase", T3, "A", "test", "--end", "2016-01-31T23:59:00Z").exit_code == 0
    clock.set(at("2016-02-01T00:00:00"))
    frozen = cli(app, "freeze", T3, "A")
    assert frozen.exit_code == 0, frozen.output
    (event,) = audit(app, "freeze")
    assert "before_deadline" not in event


def _org(app: Flask) -> tuple[Any, str]:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get(ORGANIZE_A).get_data(as_text=True)
    return org, page


def test_web_freeze_before_the_deadline_needs_the_confirmation(deadline_app: Flask) -> None:
    org, page = _org(deadline_app)
    assert 'id="deadline-ahead-test"' in page and 'name="before_deadline"' in page
    assert 'datetime="2016-01-31T23:59:00Z"' in page
    assert 'id="deadline-ahead-dev"' not in page
    refused = org.post(f"{ORGANIZE_A}/test/freeze", data={"csrf_token": csrf_from(page)})
    assert refused.status_code == 409
    assert "Not frozen: Phase test of the test set has its deadline at 2016-01-31 23:59" in (
        refused.get_data(as_text=True)
    )
    assert rows(deadline_app, Job) == []
    queued = org.post(
        f"{ORGANIZE_A}/test/freeze",
        data={"csrf_token": csrf_from(page), "before_deadline": "1"},
    )
    assert queued.status_code == 302
    (job,) = rows(deadline_app, Job)
    assert job.purpose == "freeze" and job.before_deadline is True
    (asked,) = audit(deadline_app, "request-freeze")
    assert asked["before_deadline"] is True and asked["deadline"].startswith("2016-01-31T23:59")
    assert cli(deadline_app, "worker", "--once").output == f"freeze {job.id}: done\n"
    (event,) = audit(deadline_app, "freeze")
    assert event["before_deadline"] is True


def test_the_worker_checks_the_deadline_again(make_app: AppFactory) -> None:
    clock = FixedClock(at("2016-02-02T12:00:00"))
    app = make_app(clock=clock)
    own_campaign(app)
    assert cli(app, "phase", T3, "A", "test", "--end", "2016-02-01T00:00:00Z").exit_code == 0
    org, page = _org(app)
    # Asked after the deadline: queued without a confirmation.
    queued = org.post(f"{ORGANIZE_A}/test/freeze", data={"csrf_token": csrf_from(page)})
    assert queued.status_code == 302
    # The organizers extend the deadline before the worker runs: the job fails, saying why.
    assert cli(app, "phase", T3, "A", "test", "--end", "2016-02-10T00:00:00Z").exit_code == 0
    (job,) = rows(app, Job)
    assert job.before_deadline is False
    failed = cli(app, "worker", "--once").output
    assert failed.startswith(
        f"freeze {job.id}: failed (Phase test of the test set has its deadline at 2016-02-10"
    )
    assert rows(app, FrozenTable) == []
    assert "The freeze asked at" in org.get(ORGANIZE_A).get_data(as_text=True)


def test_a_freeze_with_no_deadline_ahead_is_not_marked(app: Flask, runner: FlaskCliRunner) -> None:
    frozen = runner.invoke(args=["leaderboard", "freeze", T3, "A"])
    assert frozen.exit_code == 0, frozen.output
    (event,) = audit(app, "freeze")
    assert "before_deadline" not in event


def test_upgrading_an_install_opens_its_presets_that_have_no_phase(
    empty_database_url: str, tmp_path: Path
) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory
    from sqlalchemy import delete

    from leaderboard.db import make_engine, make_sessionmaker
    from leaderboard.migrate import alembic_config
    from leaderboard.services.tasks.catalog import install_presets, resolve
    from leaderboard.storage import LocalStore
    from leaderboard.unit_of_work import unit_of

    config = alembic_config(empty_database_url)
    before = ScriptDirectory.from_config(config).get_revision("0013").down_revision
    assert isinstance(before, str)
    # The models are today's: the old install is made at head, then taken down to the schema
    # it had before presets had phases (the rows stay), and upgraded again.
    command.upgrade(config, "head")
    engine = make_engine(empty_database_url)
    make = make_sessionmaker(engine)
    with make() as s:
        with unit_of(s):
            install_presets(s, LocalStore(tmp_path / "storage"), actor="test")
        # As an install made before presets had phases; B runs a campaign of its own.
        s.execute(delete(Phase))
        b = resolve(s, T3, "B")
        s.add(Phase(subtask_id=b.subtask.id, eval_set_id=b.eval_set.id, name="test"))
        s.commit()
    engine.dispose()
    command.downgrade(config, before)
    command.upgrade(config, "head")
    with make() as s:
        found = {
            (p.subtask.task.slug, p.subtask.slug, p.name): (p.eval_set.slug, p.starts_at)
            for p in s.scalars(select(Phase))
        }
    engine.dispose()
    assert found[(T3, "A", "post-evaluation")][0] == "test"
    assert found[(T3, "A", "post-evaluation-dev")][0] == "dev"
    assert found[(T3, "A", "post-evaluation")][1] == at("2016-02-01T00:00:00")
    assert found[("trec-car-2017", "passage", "post-evaluation")][1] == at("2017-12-01T00:00:00")
    assert [k for k in found if k[:2] == (T3, "B")] == [(T3, "B", "test")]


def test_deleting_a_phase_with_a_hostile_name_is_a_404(app: Flask) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    token = csrf_from(org.get(ORGANIZE_A).get_data(as_text=True))
    for name in ("", "nul\x00byte", "x" * 65, "<script>alert(1)</script>"):
        resp = org.post(f"{ORGANIZE_A}/phase/delete", data={"name": name, "csrf_token": token})
        assert resp.status_code == 404, name
        assert "<script>alert" not in resp.get_data(as_text=True)
    assert len(phase_names(app, T3, "A")) == 2
