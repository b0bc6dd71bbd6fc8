"""Every route of the app, for every kind of visitor: the status each one gets.

Visitors: anonymous, a participant of team A (Aurora), a participant of team B (Borealis) and an
organizer. Web routes are called with each visitor's session (and a valid CSRF token on every
form POST); API routes with each visitor's bearer token. ``EXPECTED`` must name every
(endpoint, method) pair of ``app.url_map``: a new route without an expectation fails the suite.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sklearn import metrics

from leaderboard.clock import FixedClock
from tests.conftest import app_on_copy, csrf_from, dispose, login
from tests.dispatch import draw_asked, summarize_changed
from tests.helpers.item_tasks import pairs
from tests.runs import (
    GOLD_TEST_A,
    PRESET,
    make_organizer,
    make_participant,
    open_phase,
    open_task,
    own_campaign,
    token_for,
)

# anon; carol, signed up but unverified; alice, captain of Aurora; amy, a plain member of Aurora;
# bob, captain of Borealis (another team); the organizer.
ROLES = ("anon", "carol", "alice", "amy", "bob", "org")
EMAILS = {
    "carol": "carol@example.org",
    "alice": "alice@example.org",
    "amy": "amy@example.org",
    "bob": "bob@example.org",
    "org": "org@example.org",
}
PASSWORDS = {role: "correct horse battery" for role in ("carol", "alice", "amy", "bob")}
PASSWORDS["org"] = "organizer password"
LOGGED_IN = ("alice", "amy", "bob", "org")
NOW = datetime(2016, 1, 15, 12, 0, tzinfo=UTC)
GOLD_DEV_A = (
    PRESET / "gold" / "dev" / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
)
GOLD_TEST_B = PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy"
BOB_SECRET = "Borealis secret sauce 7f3a"
T3 = "semeval2016-task3"
# The split task: the classification example with half of its items public.
SENTIMENT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
SPLIT = "example-sentiment"
FRACTION, SEED = 0.5, 2016
LABELS = ["positive", "negative", "neutral"]


def bob_split_run() -> dict[str, str]:
    """Return Borealis' predictions: the example run with every third item's label moved on."""
    run = pairs(SENTIMENT / "run-valid.tsv")
    return {
        item: LABELS[(LABELS.index(label) + 1) % 3] if n % 3 == 0 else label
        for n, (item, label) in enumerate(sorted(run.items()))
    }


def as_file(run: dict[str, str]) -> bytes:
    """Return a classification run file."""
    return "".join(f"{item}\t{label}\n" for item, label in run.items()).encode()


def run_for(gold: Path, score: str, every: int = 3) -> bytes:
    """Return a run giving ``score`` to most candidates and 0.9 to every ``every``-th one."""
    lines = []
    for i, line in enumerate(gold.read_text().splitlines()):
        qid, cid, *_ = line.split("\t")
        s = "0.9" if i % every == 0 else score
        lines.append(f"{qid}\t{cid}\t0\t{s}\t{'true' if i % every == 0 else 'false'}")
    return ("\n".join(lines) + "\n").encode()


@dataclass
class World:
    """The app, one logged-in client and token per visitor, and the ids of the runs made."""

    app: Flask
    clients: dict[str, FlaskClient]
    tokens: dict[str, str]
    ids: dict[str, int]
    csrf: dict[str, str] = field(default_factory=dict)
    #: Every response body each visitor got, by "METHOD path".
    seen: dict[str, dict[str, str]] = field(default_factory=dict)


def _api_upload(
    client: FlaskClient, token: str, subtask: str, data: bytes, **form: str
) -> dict[str, Any]:
    resp = client.post(
        f"/api/v1/tasks/{T3}/{subtask}/runs",
        data={**form, "file": (io.BytesIO(data), "run.txt")},
        headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, template_instance: Path) -> Iterator[World]:
    """Build the app: two teams with runs, baselines, and a phase whose results are hidden."""
    # Mailed links need a base URL (never the request's host); mail goes to the console.
    app = app_on_copy(
        template_instance,
        tmp_path_factory.mktemp("matrix"),
        clock=FixedClock(NOW),
        base_url="https://lb.example.org",
    )
    make_organizer(app, EMAILS["org"])
    make_participant(app, "Aurora", EMAILS["alice"])  # the first member: captain
    make_participant(app, "Aurora", EMAILS["amy"])
    make_participant(app, "Borealis", EMAILS["bob"])
    tokens = {role: token_for(app, email) for role, email in EMAILS.items() if role != "carol"}
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from leaderboard.services.accounts import core as accounts

        # Signed up (a team-less participant), the address never verified; an organizer even
        # issued a token, which must open nothing.
        carol = accounts.create_user(
            session, EMAILS["carol"], role="organizer", password=PASSWORDS["carol"], actor="test"
        )
        carol.role, carol.verified_at = "participant", None
        session.commit()
    tokens["carol"] = token_for(app, EMAILS["carol"])
    runner = app.test_cli_runner()
    # The organizers' own campaign: A open on both sets (no deadline), B's phases below, and a
    # spare phase for the deletion probe.
    own_campaign(app, T3, ("A", "B"))
    open_phase(app, T3, "A", "open", "--set", "test")
    open_phase(app, T3, "A", "open-dev", "--set", "dev")
    open_phase(app, T3, "A", "spare", "--set", "dev")
    hidden = runner.invoke(
        args=[
            "leaderboard",
            "phase",
            T3,
            "B",
            "test",
            "--set",
            "test",
            "--start",
            "2016-01-10T00:00:00Z",
            "--end",
            "2016-01-31T00:00:00Z",
            "--results",
            "hidden",
        ]
    )
    assert hidden.exit_code == 0, hidden.output
    api = app.test_client()
    ids = {
        "run_a": _api_upload(
            api, tokens["alice"], "A", run_for(GOLD_TEST_A, "0.3"), slot="primary", name="aurora-a"
        )["id"],
        "run_b": _api_upload(
            api,
            tokens["bob"],
            "A",
            run_for(GOLD_TEST_A, "0.4242", every=4),
            slot="primary",
            name="borealis-b",
            description=BOB_SECRET,
        )["id"],
    }
    data_dir = tmp_path_factory.mktemp("matrix-data")
    later = runner.invoke(
        args=[
            "leaderboard",
            "phase",
            T3,
            "B",
            "later",
            "--set",
            "test",
            "--start",
            "2016-03-01T00:00:00Z",
            "--end",
            "2016-04-01T00:00:00Z",
        ]
    )
    assert later.exit_code == 0, later.output
    for name, phase in (("data_b", "test"), ("data_future", "later"), ("data_del", "test")):
        (data_dir / f"{name}.txt").write_text(f"task data {name}\n")
        added = runner.invoke(
            args=[
                "leaderboard",
                "data",
                "add",
                T3,
                "B",
                str(data_dir / f"{name}.txt"),
                "--phase",
                phase,
            ]
        )
        assert added.exit_code == 0, added.output
    hidden_run = _api_upload(
        api, tokens["alice"], "B", run_for(GOLD_TEST_B, "0.2", every=5), slot="primary"
    )
    assert hidden_run["scores_hidden"] is True and hidden_run["scores"] == {}
    ids["run_hidden"] = hidden_run["id"]
    # Runs for the withdrawal probes (the web button and the API), and a spare token of Alice's
    # for the revocation probe (her main one serves the API probes).
    for key, slot in (("run_w", "contrastive1"), ("run_w2", "contrastive2")):
        ids[key] = _api_upload(
            api, tokens["alice"], "A", run_for(GOLD_TEST_A, "0.5"), slot=slot, name=key
        )["id"]
    # A run of Bob's replaced in its slot: its per-query page is his team's and the organizers'.
    for key in ("run_replaced", "run_replacing"):
        ids[key] = _api_upload(
            api, tokens["bob"], "A", run_for(GOLD_TEST_A, "0.6"), slot="contrastive1", name=key
        )["id"]
    token_for(app, EMAILS["alice"])
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from sqlalchemy import func, select

        from leaderboard.models import ApiToken

        ids["alice_spare_token"] = session.scalar(select(func.max(ApiToken.id)))
    added = runner.invoke(args=["leaderboard", "add-baselines", T3, "A"])
    assert added.exit_code == 0, added.output
    table = api.get(
        f"/api/v1/tasks/{T3}/A/table", headers={"Authorization": f"Bearer {tokens['org']}"}
    ).get_json()
    assert any(r["kind"] == "baseline" for r in table["rows"])
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from sqlalchemy import select

        from leaderboard.models import Run

        ids["baseline"] = session.scalar(select(Run.id).where(Run.kind == "baseline").limit(1))
        from leaderboard.models import Team

        aurora = session.scalar(select(Team).where(Team.name == "Aurora"))
        assert aurora is not None and aurora.invite_code
        # Formatted into probe paths like the ids; the first CLI-made member is the captain.
        ids["aurora_code"] = aurora.invite_code  # type: ignore[assignment]
        ids["borealis"] = session.scalar(select(Team.id).where(Team.name == "Borealis"))

        from leaderboard.models import TaskDataFile

        for data_file in session.scalars(select(TaskDataFile)):
            ids[data_file.filename.removesuffix(".txt")] = data_file.id
    ids.update(_host_split(app, api, tokens, tmp_path_factory.mktemp("split")))
    clients = {role: app.test_client() for role in ROLES}
    for role in LOGGED_IN:
        login(clients[role], EMAILS[role], PASSWORDS[role])
    w = World(app, clients, tokens, ids)
    for role in ("anon", "carol"):
        page = clients[role].get("/login").get_data(as_text=True)
        w.csrf[role] = csrf_from(page)
    # An unverified account's log-in opens no session: carol stays a visitor without one.
    refused = clients["carol"].post(
        "/login",
        data={
            "email": EMAILS["carol"],
            "password": PASSWORDS["carol"],
            "csrf_token": w.csrf["carol"],
        },
    )
    assert refused.status_code == 403 and "not verified" in refused.get_data(as_text=True)
    for role in LOGGED_IN:
        w.csrf[role] = csrf_from(clients[role].get("/").get_data(as_text=True))
    # What the worker would have done by now: the sets' summaries, and the charts the probes
    # read (a run's difference chart names nobody, so one file serves every reader).
    summarize_changed(app)
    for key, fmt in (("run_a", "svg"), ("run_hidden", "pdf")):
        clients["org"].get(f"/runs/{ids[key]}/queries.{fmt}")
    # The progress chart of A's test set names teams alike for every reader here: one file.
    clients["org"].get(f"/tasks/{T3}/A/progress.svg")
    # The split set's: its runs' difference charts, its progress chart (its analysis' charts
    # were drawn with it).
    for key in ("split_a", "split_b"):
        for fmt in ("svg", "pdf"):
            clients["org"].get(f"/runs/{ids[key]}/queries.{fmt}")
    clients["org"].get(f"{SPL}/progress.svg")
    draw_asked(app)
    yield w
    dispose(app)


def _host_split(app: Flask, api: FlaskClient, tokens: dict[str, str], tmp: Path) -> dict[str, int]:
    """Host the split task with a run of each team, its baselines and an analysis; return ids."""
    folder = tmp / "task"
    shutil.copytree(SENTIMENT, folder)
    toml = folder / "task.toml"
    public = f"public = {{ fraction = {FRACTION}, seed = {SEED} }}"
    toml.write_text(toml.read_text().replace('gold = "gold.tsv"', f'gold = "gold.tsv"\n{public}'))
    runner = app.test_cli_runner()
    added = runner.invoke(args=["leaderboard", "add-task", str(toml)])
    assert added.exit_code == 0, added.output
    open_task(app, toml)
    ids = {}
    for key, role, run in (
        ("split_a", "alice", pairs(SENTIMENT / "run-valid.tsv")),
        ("split_b", "bob", bob_split_run()),
    ):
        resp = api.post(
            f"/api/v1/tasks/{SPLIT}/A/runs",
            data={"slot": "primary", "file": (io.BytesIO(as_file(run)), "run.tsv")},
            headers={"Authorization": f"Bearer {tokens[role]}"},
            content_type="multipart/form-data",
        )
        assert resp.status_code == 201, resp.get_json()
        assert resp.get_json()["part"] == "public"
        ids[key] = resp.get_json()["id"]
    added = runner.invoke(args=["leaderboard", "add-baselines", SPLIT, "A"])
    assert added.exit_code == 0, added.output
    # Stored with its charts drawn, as the worker leaves an analysis.
    analysed = runner.invoke(args=["leaderboard", "significance", SPLIT, "A", "--samples", "200"])
    assert analysed.exit_code == 0, analysed.output
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        from sqlalchemy import func, select

        from leaderboard.models import EvalSet, Job, Run, Subtask, Task

        subtask = select(Subtask.id).join(Task).where(Task.slug == SPLIT)
        ids["split_baseline"] = session.scalar(
            select(func.min(Run.id)).where(Run.kind == "baseline", Run.subtask_id.in_(subtask))
        )
        ids["split_analysis"] = session.scalar(
            select(func.max(Job.id)).join(EvalSet).where(EvalSet.subtask_id.in_(subtask))
        )
    return ids


# ------------------------------------------------------------------------------- expectations

Form = Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Probe:
    """One request and the status each visitor must get (``{ids}`` in the path are filled in)."""

    method: str
    path: str
    expect: dict[str, int]
    form: Form | None = None
    api: bool = False
    csrf: bool = True


def each(status: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, status)


def by_role(
    anon: int, alice: int, bob: int, org: int, *, amy: int | None = None, carol: int | None = None
) -> dict[str, int]:
    """Return the statuses by visitor: amy (Aurora's plain member) gets alice's unless given,
    carol (unverified, so without a session or a working token) the anonymous visitor's."""
    return {
        "anon": anon,
        "carol": anon if carol is None else carol,
        "alice": alice,
        "amy": alice if amy is None else amy,
        "bob": bob,
        "org": org,
    }


LOGIN = 302  # login_required sends anonymous visitors to the login page
ORGANIZER_ONLY = by_role(LOGIN, 403, 403, 200)
ORGANIZER_ACTION = by_role(LOGIN, 403, 403, 302)


def _file(data: bytes) -> tuple[io.BytesIO, str]:
    return (io.BytesIO(data), "run.txt")


def submit_form() -> dict[str, Any]:
    return {
        "eval_set": "dev",
        "slot": "contrastive1",
        "name": "web-upload",
        "description": "a web upload",
        "file": _file(run_for(GOLD_DEV_A, "0.1")),
    }


def api_form() -> dict[str, Any]:
    return {"set": "dev", "slot": "contrastive2", "file": _file(run_for(GOLD_DEV_A, "0.2"))}


def phase_form() -> dict[str, Any]:
    return {
        "name": "development",
        "eval_set": "dev",
        "start": "2016-01-01T00:00:00Z",
        "end": "2016-12-31T00:00:00Z",
        "late": "",
        "corrections": "",
        "results": "visible",
        "daily_quota": "",
        "total_quota": "",
    }


def analysis_form() -> dict[str, Any]:
    return {"measure": "MAP", "method": "randomization", "samples": "100", "seed": "0"}


def import_form() -> dict[str, Any]:
    return {
        "eval_set": "dev",
        "team": "Imported team",
        "slot": "primary",
        "name": "imported",
        "description": "",
        "mode": "strict",
        "file": _file(run_for(GOLD_DEV_A, "0.3")),
    }


def gold_form() -> dict[str, Any]:
    corrected = GOLD_DEV_A.read_bytes().replace(b"\ttrue\n", b"\tfalse\n", 1)
    return {"target": "dev|gold", "file": (io.BytesIO(corrected), "gold.txt")}


def task_bundle_form() -> dict[str, Any]:
    return {"bundle": (io.BytesIO(b"not a zip"), "bundle.zip")}


def team_form() -> dict[str, Any]:
    return {"name": "Matrix team", "affiliation": "Matrix University"}


def rename_form() -> dict[str, Any]:
    return {"name": "Renamed in the matrix"}


def new_team_form() -> dict[str, Any]:
    return {"name": "Created in the matrix"}


def merge_form() -> dict[str, Any]:
    # An existing team; the source id is what the probe varies.
    return {"into": "Aurora"}


def member_form() -> dict[str, Any]:
    return {"email": "bob@example.org"}


def data_form() -> dict[str, Any]:
    return {"phase": "test", "title": "Inputs", "file": (io.BytesIO(b"inputs\n"), "in.txt")}


def signup_form() -> dict[str, Any]:
    return {
        "email": "newcomer@example.org",
        "display_name": "Newcomer",
        "password": "a long enough secret 42",
        "password_confirm": "a long enough secret 42",
        "affiliation": "",
    }


def nobody_form() -> dict[str, Any]:
    return {"email": "nobody@example.org"}


def new_password_form() -> dict[str, Any]:
    return {"password": "a long enough secret 42", "password_confirm": "a long enough secret 42"}


def profile_form() -> dict[str, Any]:
    return {"display_name": "Someone", "affiliation": "Somewhere"}


def notifications_form() -> dict[str, Any]:
    # Every kind on (the default), so that the matrix's other probes see the settings unchanged.
    return dict.fromkeys(
        (
            "notify_join_requests",
            "notify_results_released",
            "notify_deadline",
            "notify_rejected_api",
            "notify_organizer_messages",
        ),
        "y",
    )


def message_form() -> dict[str, Any]:
    # Previewed only: sending needs a confirm field (and a base URL for the links).
    return {"task": T3, "audience": "members", "subject": "Hello", "body": "Hi *all*."}


def invite_form() -> dict[str, Any]:
    return {"email": "invited@example.org"}


def settings_form() -> dict[str, Any]:
    # The defaults, so that the matrix's other probes see the site unchanged.
    return {
        "registration": "open",
        "max_team_size": "10",
        "site_name": "Shared-task leaderboard",
        "terms": "",
    }


SUB = f"/tasks/{T3}/A"
ORG = f"/organizer/tasks/{T3}/A"
CAR = "trec-car-2017"
API = f"/api/v1/tasks/{T3}"
SPL = f"/tasks/{SPLIT}/A"
SPL_API = f"/api/v1/tasks/{SPLIT}/A"
#: Until the split set's private part is released only organizers may ask for it (or all).
HIDDEN_PARTS = ("private", "all")
PART_REFUSED = by_role(403, 403, 403, 200)

#: (endpoint, method) -> probes, run in this order (GETs first; state-changing POSTs last).
EXPECTED: dict[tuple[str, str], list[Probe]] = {
    ("static", "GET"): [
        Probe("GET", "/static/style.css", each(200)),
        Probe("GET", "/static/no-such-file.css", each(404)),
        Probe("GET", "/static/../leaderboard.sqlite3", each(404)),
    ],
    ("public.home", "GET"): [Probe("GET", "/", each(200))],
    ("ops.healthz", "GET"): [Probe("GET", "/healthz", each(200))],
    ("public.task_page", "GET"): [
        Probe("GET", f"/tasks/{T3}", each(200)),
        Probe("GET", "/tasks/no-such-task", each(404)),
        # The split task's page: its split's seed is the organizers' until the release.
        Probe("GET", f"/tasks/{SPLIT}", each(200)),
    ],
    ("public.results", "GET"): [
        Probe("GET", SUB, each(200)),
        # A hidden phase: the page is there for everyone, its scores for organizers only.
        Probe("GET", f"/tasks/{T3}/B", each(200)),
        Probe("GET", f"/tasks/{T3}/Z", each(404)),
        Probe("GET", f"{SUB}?set=no-such-set", each(404)),
        Probe("GET", f"{SUB}?view=sideways", each(400)),
        # The split set: its public part for everyone, the others for organizers only.
        Probe("GET", SPL, each(200)),
        Probe("GET", f"{SPL}?part=public", each(200)),
        *(Probe("GET", f"{SPL}?part={part}", PART_REFUSED) for part in HIDDEN_PARTS),
        Probe("GET", f"{SPL}?part=secret", each(400)),
    ],
    ("public.download", "GET"): [
        *(Probe("GET", f"{SUB}/results.{ext}", each(200)) for ext in ("csv", "json", "md", "tex")),
        *(
            Probe("GET", f"/tasks/{T3}/B/results.{ext}", by_role(403, 403, 403, 200))
            for ext in ("csv", "json", "md", "tex")
        ),
        Probe("GET", f"{SUB}/results.exe", each(404)),
        *(Probe("GET", f"{SPL}/results.{ext}", each(200)) for ext in ("csv", "json", "md", "tex")),
        *(
            Probe("GET", f"{SPL}/results.{ext}?part={part}", PART_REFUSED)
            for ext in ("csv", "json", "md", "tex")
            for part in HIDDEN_PARTS
        ),
    ],
    ("auth.login", "GET"): [Probe("GET", "/login", by_role(200, 302, 302, 302))],
    ("participant.submit", "GET"): [
        Probe("GET", f"{SUB}/submit", by_role(LOGIN, 200, 200, 403)),
        Probe("GET", f"/tasks/{T3}/Z/submit", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", f"{SPL}/submit", by_role(LOGIN, 200, 200, 403)),
    ],
    ("analysis.run_queries", "GET"): [
        # A team sees its own run's diagnostics once results are visible; nobody else unless the
        # phase makes them public; during a hidden phase only organizers see values (they are
        # scores): the team's own page says they are hidden.
        Probe("GET", "/runs/{run_a}/queries", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/{run_b}/queries", by_role(404, 404, 200, 200)),
        Probe("GET", "/runs/{run_hidden}/queries", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/999999/queries", by_role(404, 404, 404, 404)),
        Probe("GET", "/runs/99999999999999999999/queries", by_role(404, 404, 404, 404)),
        Probe("GET", "/runs/{run_replaced}/queries", by_role(404, 404, 200, 200)),
        Probe("GET", "/runs/{split_a}/queries", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/{split_b}/queries", by_role(404, 404, 200, 200)),
        Probe("GET", "/runs/{split_a}/queries?measure=Acc", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/{split_baseline}/queries", by_role(404, 404, 404, 200)),
    ],
    ("analysis.run_queries_file", "GET"): [
        Probe("GET", "/runs/{run_a}/queries.csv", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/{run_a}/queries.svg", by_role(404, 200, 404, 200)),
        Probe("GET", "/runs/{run_hidden}/queries.pdf", by_role(404, 404, 404, 200)),
        Probe("GET", "/runs/{run_a}/queries.exe", each(404)),
        Probe("GET", "/runs/{run_replaced}/queries.csv", by_role(404, 404, 200, 200)),
        *(
            Probe("GET", f"/runs/{{{key}}}/queries.{fmt}", expect)
            for key, expect in (
                ("split_a", by_role(404, 200, 404, 200)),
                ("split_b", by_role(404, 404, 200, 200)),
            )
            for fmt in ("csv", "svg", "pdf")
        ),
        Probe("GET", "/runs/{split_b}/queries.csv?measure=Acc", by_role(404, 404, 200, 200)),
        # Routes that take no part ignore one asked for (the scan checks they show none).
        Probe("GET", "/runs/{split_a}/queries.csv?part=private", by_role(404, 200, 404, 200)),
    ],
    ("analysis.public_chart", "GET"): [
        # No analysis has been computed in this world: nothing to show, to anyone.
        Probe("GET", f"{SUB}/analysis/measure.svg", each(404)),
        Probe("GET", f"/tasks/{T3}/B/analysis/matrix.csv", by_role(403, 403, 403, 404)),
        # The split set's analysis, on its public part.
        *(
            Probe("GET", f"{SPL}/analysis/{name}.{fmt}", each(200))
            for name in ("measure", "matrix")
            for fmt in ("svg", "pdf", "csv")
        ),
    ],
    ("analysis.progress", "GET"): [
        Probe("GET", f"{SUB}/progress.svg", each(200)),
        Probe("GET", f"{SUB}/progress.csv", each(200)),
        # Hidden results: no progress either, but for the organizers.
        Probe("GET", f"/tasks/{T3}/B/progress.csv", by_role(403, 403, 403, 200)),
        Probe("GET", f"/tasks/{T3}/B/progress.svg", by_role(403, 403, 403, 404)),
        Probe("GET", f"{SUB}/progress.pdf", each(404)),
        Probe("GET", f"/tasks/{T3}/Z/progress.csv", each(404)),
        Probe("GET", f"{SPL}/progress.svg", each(200)),
        Probe("GET", f"{SPL}/progress.csv", each(200)),
        Probe("GET", f"{SPL}/progress.csv?part=all", each(200)),
    ],
    ("analysis.organizer_page", "GET"): [
        Probe("GET", f"{ORG}/analysis", ORGANIZER_ONLY),
        Probe("GET", f"/organizer/tasks/{SPLIT}/A/analysis", ORGANIZER_ONLY),
    ],
    ("analysis.organizer_chart", "GET"): [
        Probe("GET", "/organizer/analyses/999/measure.svg", by_role(LOGIN, 403, 403, 404)),
        Probe(
            "GET",
            "/organizer/analyses/99999999999999999999/measure.svg",
            by_role(LOGIN, 403, 403, 404),
        ),
        *(
            Probe("GET", f"/organizer/analyses/{{split_analysis}}/{name}.{fmt}", ORGANIZER_ONLY)
            for name in ("measure", "matrix")
            for fmt in ("svg", "csv")
        ),
    ],
    ("participant.run_page", "GET"): [
        # Another team's run and a baseline answer like a missing id (no counting of uploads).
        Probe("GET", "/runs/{run_a}", by_role(LOGIN, 200, 404, 200)),
        Probe("GET", "/runs/{run_b}", by_role(LOGIN, 404, 200, 200)),
        Probe("GET", "/runs/{run_hidden}", by_role(LOGIN, 200, 404, 200)),
        Probe("GET", "/runs/{baseline}", by_role(LOGIN, 404, 404, 200)),
        Probe("GET", "/runs/999999", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", "/runs/99999999999999999999", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", "/runs/9223372036854775808", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", "/runs/{split_a}", by_role(LOGIN, 200, 404, 200)),
        Probe("GET", "/runs/{split_b}", by_role(LOGIN, 404, 200, 200)),
        Probe("GET", "/runs/{split_baseline}", by_role(LOGIN, 404, 404, 200)),
    ],
    ("participant.run_file", "GET"): [
        Probe("GET", "/runs/{run_a}/file", by_role(LOGIN, 200, 404, 200)),
        Probe("GET", "/runs/{run_b}/file", by_role(LOGIN, 404, 200, 200)),
        Probe("GET", "/runs/{baseline}/file", by_role(LOGIN, 404, 404, 200)),
        Probe("GET", "/runs/999999/file", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", "/runs/99999999999999999999/file", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", "/runs/{split_a}/file", by_role(LOGIN, 200, 404, 200)),
    ],
    # The team's page lists its runs of every task, the split one's on its public part.
    ("teams.team_page", "GET"): [Probe("GET", "/team", by_role(LOGIN, 200, 200, 403))],
    # alice and bob are the captains (first members) of Aurora and Borealis.
    ("teams.new_team", "GET"): [Probe("GET", "/teams/new", by_role(LOGIN, 302, 302, 403))],
    ("teams.join", "GET"): [
        Probe("GET", "/teams/join/{aurora_code}", by_role(LOGIN, 200, 200, 403)),
        Probe("GET", "/teams/join/no-such-code", by_role(LOGIN, 404, 404, 404)),
    ],
    ("organizer_teams.teams", "GET"): [Probe("GET", "/organizer/teams/", ORGANIZER_ONLY)],
    ("organizer_tasks.new_task", "GET"): [Probe("GET", "/organizer/tasks/new", ORGANIZER_ONLY)],
    ("organizer_tasks.edit_definition", "GET"): [Probe("GET", f"{ORG}/definition", ORGANIZER_ONLY)],
    ("organizer.dashboard", "GET"): [Probe("GET", "/organizer/", ORGANIZER_ONLY)],
    ("organizer.audit", "GET"): [
        Probe("GET", "/organizer/audit", ORGANIZER_ONLY),
        Probe(
            "GET",
            "/organizer/audit?page=2&actor=cli&action=create-phase",
            by_role(LOGIN, 403, 403, 404),
        ),
        Probe("GET", "/organizer/audit?page=x", by_role(LOGIN, 403, 403, 400)),
    ],
    ("organizer.phase", "GET"): [
        Probe("GET", f"{ORG}/phase?name=open&zone=Europe/Paris", ORGANIZER_ONLY),
        Probe("GET", f"{ORG}/phase?zone=Nowhere/Else", by_role(LOGIN, 403, 403, 400)),
        Probe("GET", f"/organizer/tasks/{T3}/Z/phase", by_role(LOGIN, 403, 403, 404)),
    ],
    ("organizer.subtask_page", "GET"): [
        Probe("GET", ORG, ORGANIZER_ONLY),
        Probe("GET", f"/organizer/tasks/{T3}/Z", by_role(LOGIN, 403, 403, 404)),
    ],
    ("organizer.listing", "GET"): [
        *(
            Probe("GET", f"{ORG}/test/runs.{e}", ORGANIZER_ONLY)
            for e in ("json", "csv", "md", "latex")
        ),
        Probe("GET", f"{ORG}/test/runs.exe", by_role(LOGIN, 403, 403, 404)),
    ],
    ("data.download_file", "GET"): [
        Probe("GET", f"/tasks/{T3}/B/data/{{data_b}}", by_role(LOGIN, 200, 200, 200)),
        # A phase that has not started: its files answer like missing ones (organizers: served).
        Probe("GET", f"/tasks/{T3}/B/data/{{data_future}}", by_role(LOGIN, 404, 404, 200)),
        Probe("GET", f"/tasks/{T3}/A/data/{{data_b}}", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", f"/tasks/{T3}/B/data/999999", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", f"/tasks/{T3}/B/data/99999999999999999999", by_role(LOGIN, 404, 404, 404)),
        Probe("GET", f"/tasks/{T3}/Z/data/{{data_b}}", by_role(LOGIN, 404, 404, 404)),
    ],
    ("api.openapi", "GET"): [Probe("GET", "/api/openapi.json", each(200), api=True)],
    ("api.get_run", "GET"): [
        Probe("GET", "/api/v1/runs/{run_a}", by_role(401, 200, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/{run_b}", by_role(401, 404, 200, 200), api=True),
        Probe("GET", "/api/v1/runs/{run_hidden}", by_role(401, 200, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/{baseline}", by_role(401, 404, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/999999", by_role(401, 404, 404, 404), api=True),
        Probe("GET", "/api/v1/runs/99999999999999999999", by_role(401, 404, 404, 404), api=True),
        Probe("GET", "/api/v1/runs/{split_a}", by_role(401, 200, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/{split_a}?part=private", by_role(401, 200, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/{split_b}", by_role(401, 404, 200, 200), api=True),
        Probe("GET", "/api/v1/runs/{split_baseline}", by_role(401, 404, 404, 200), api=True),
    ],
    ("api.tasks", "GET"): [Probe("GET", "/api/v1/tasks", by_role(401, 200, 200, 200), api=True)],
    ("api.my_team_runs", "GET"): [
        Probe("GET", "/api/v1/team/runs", by_role(401, 200, 200, 200), api=True)
    ],
    ("api.run_file", "GET"): [
        Probe("GET", "/api/v1/runs/{run_a}/file", by_role(401, 200, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/{run_b}/file", by_role(401, 404, 200, 200), api=True),
        Probe("GET", "/api/v1/runs/{baseline}/file", by_role(401, 404, 404, 200), api=True),
        Probe("GET", "/api/v1/runs/999999/file", by_role(401, 404, 404, 404), api=True),
        Probe(
            "GET", "/api/v1/runs/99999999999999999999/file", by_role(401, 404, 404, 404), api=True
        ),
    ],
    ("tokens.tokens_page", "GET"): [Probe("GET", "/account/tokens", by_role(LOGIN, 200, 200, 200))],
    ("api.table", "GET"): [
        Probe("GET", f"{API}/A/table", by_role(401, 200, 200, 200), api=True),
        Probe("GET", f"{API}/B/table", by_role(401, 403, 403, 200), api=True),
        Probe("GET", f"{API}/Z/table", by_role(401, 404, 404, 404), api=True),
        Probe("GET", f"{SPL_API}/table", by_role(401, 200, 200, 200), api=True),
        Probe("GET", f"{SPL_API}/table?part=public", by_role(401, 200, 200, 200), api=True),
        *(
            Probe("GET", f"{SPL_API}/table?part={part}", by_role(401, 403, 403, 200), api=True)
            for part in HIDDEN_PARTS
        ),
    ],
    # ---- self-service accounts and the organizer's users and settings pages
    ("account.signup", "GET"): [Probe("GET", "/signup", by_role(200, 302, 302, 302))],
    ("account.verify_page", "GET"): [Probe("GET", "/verify/not-a-token", each(400))],
    ("account.resend", "GET"): [Probe("GET", "/verify/resend", each(200))],
    ("account.forgot", "GET"): [Probe("GET", "/password/forgot", each(200))],
    ("account.reset", "GET"): [Probe("GET", "/password/reset/not-a-token", each(400))],
    ("account.account_page", "GET"): [Probe("GET", "/account", by_role(LOGIN, 200, 200, 200))],
    ("notifications.unsubscribe_page", "GET"): [
        Probe("GET", "/unsubscribe/not-a-token", each(400)),
    ],
    ("organizer_messages.new_message", "GET"): [
        Probe("GET", "/organizer/messages/new", ORGANIZER_ONLY)
    ],
    ("organizer_accounts.users", "GET"): [Probe("GET", "/organizer/users", ORGANIZER_ONLY)],
    ("organizer_accounts.site_settings", "GET"): [
        Probe("GET", "/organizer/settings", ORGANIZER_ONLY)
    ],
    # ---- POSTs: refused visitors first, so that only the last (allowed) one changes anything.
    ("auth.login", "POST"): [
        Probe(
            "POST",
            "/login",
            by_role(401, 302, 302, 302),
            form=lambda: {"email": "alice@example.org", "password": "not the password"},
        ),
        Probe("POST", "/login", by_role(400, 400, 400, 400), csrf=False),
    ],
    ("participant.submit", "POST"): [
        Probe("POST", f"{SUB}/submit", by_role(LOGIN, 302, 302, 403), form=submit_form),
        Probe("POST", f"{SUB}/submit", by_role(400, 400, 400, 400), form=submit_form, csrf=False),
    ],
    ("api.upload", "POST"): [
        Probe("POST", f"{API}/A/runs", by_role(401, 201, 201, 403), form=api_form, api=True),
        Probe("POST", f"{API}/Z/runs", by_role(401, 404, 404, 403), form=api_form, api=True),
    ],
    ("analysis.organizer_page", "POST"): [
        Probe("POST", f"{ORG}/analysis", ORGANIZER_ACTION, form=analysis_form),
        Probe("POST", f"{ORG}/analysis", each(400), form=analysis_form, csrf=False),
    ],
    ("teams.new_team", "POST"): [
        Probe("POST", "/teams/new", by_role(LOGIN, 409, 409, 403), form=team_form),
        Probe("POST", "/teams/new", each(400), form=team_form, csrf=False),
    ],
    ("teams.join", "POST"): [
        Probe("POST", "/teams/join/{aurora_code}", by_role(LOGIN, 409, 409, 403)),
        Probe("POST", "/teams/join/{aurora_code}", each(400), csrf=False),
        Probe("POST", "/teams/join/no-such-code", by_role(LOGIN, 404, 404, 404)),
    ],
    ("teams.accept_request", "POST"): [
        Probe("POST", "/team/requests/999999/accept", by_role(LOGIN, 404, 404, 403, amy=403)),
        Probe(
            "POST",
            "/team/requests/99999999999999999999/accept",
            by_role(LOGIN, 404, 404, 403, amy=403),
        ),
        Probe("POST", "/team/requests/999999/accept", each(400), csrf=False),
    ],
    ("teams.decline_request", "POST"): [
        Probe("POST", "/team/requests/999999/decline", by_role(LOGIN, 404, 404, 403, amy=403)),
        Probe(
            "POST",
            "/team/requests/99999999999999999999/decline",
            by_role(LOGIN, 404, 404, 403, amy=403),
        ),
        Probe("POST", "/team/requests/999999/decline", each(400), csrf=False),
    ],
    ("teams.withdraw_request", "POST"): [
        Probe("POST", "/team/requests/999999/withdraw", by_role(LOGIN, 404, 404, 404)),
        Probe(
            "POST", "/team/requests/99999999999999999999/withdraw", by_role(LOGIN, 404, 404, 404)
        ),
        Probe("POST", "/team/requests/999999/withdraw", each(400), csrf=False),
    ],
    ("teams.hand_over", "POST"): [
        Probe("POST", "/team/members/999999/captain", by_role(LOGIN, 404, 404, 403, amy=403)),
        Probe(
            "POST",
            "/team/members/99999999999999999999/captain",
            by_role(LOGIN, 404, 404, 403, amy=403),
        ),
        Probe("POST", "/team/members/999999/captain", each(400), csrf=False),
    ],
    ("teams.remove_member", "POST"): [
        Probe("POST", "/team/members/999999/remove", by_role(LOGIN, 404, 404, 403, amy=403)),
        Probe(
            "POST",
            "/team/members/99999999999999999999/remove",
            by_role(LOGIN, 404, 404, 403, amy=403),
        ),
        Probe("POST", "/team/members/999999/remove", each(400), csrf=False),
    ],
    # Leaving for real would take alice out of Aurora for the later tests; web tests do that.
    ("teams.leave", "POST"): [Probe("POST", "/team/leave", each(400), csrf=False)],
    ("teams.leave", "GET"): [Probe("GET", "/team/leave", each(405))],
    ("teams.regenerate_invite", "POST"): [
        Probe("POST", "/team/invite", each(400), csrf=False),
        # Captains only: amy is a plain member of Aurora.
        Probe("POST", "/team/invite", by_role(LOGIN, 302, 302, 403, amy=403)),
    ],
    **{
        (f"organizer_teams.{action}", "POST"): [
            Probe("POST", f"/organizer/teams/{{borealis}}/{action}", each(400), csrf=False),
            Probe("POST", f"/organizer/teams/999999/{action}", by_role(LOGIN, 403, 403, 404)),
            Probe(
                "POST",
                f"/organizer/teams/99999999999999999999/{action}",
                by_role(LOGIN, 403, 403, 404),
            ),
        ]
        for action in ("approve", "withdraw", "delete")
    },
    ("organizer_teams.new_team", "POST"): [
        Probe("POST", "/organizer/teams/new", each(400), form=new_team_form, csrf=False),
        Probe("POST", "/organizer/teams/new", ORGANIZER_ACTION, form=new_team_form),
    ],
    ("organizer_teams.rename", "POST"): [
        Probe(
            "POST", "/organizer/teams/{borealis}/rename", each(400), form=rename_form, csrf=False
        ),
        Probe(
            "POST",
            "/organizer/teams/999999/rename",
            by_role(LOGIN, 403, 403, 404),
            form=rename_form,
        ),
        Probe(
            "POST",
            "/organizer/teams/99999999999999999999/rename",
            by_role(LOGIN, 403, 403, 404),
            form=rename_form,
        ),
    ],
    ("organizer_teams.add_member", "POST"): [
        Probe(
            "POST", "/organizer/teams/{borealis}/members", each(400), form=member_form, csrf=False
        ),
        # bob is in Borealis already: the organizer's add is refused, nothing changes.
        Probe(
            "POST",
            "/organizer/teams/{borealis}/members",
            by_role(LOGIN, 403, 403, 409),
            form=member_form,
        ),
        Probe(
            "POST",
            "/organizer/teams/999999/members",
            by_role(LOGIN, 403, 403, 404),
            form=member_form,
        ),
        Probe(
            "POST",
            "/organizer/teams/99999999999999999999/members",
            by_role(LOGIN, 403, 403, 404),
            form=member_form,
        ),
    ],
    ("organizer_teams.merge", "POST"): [
        Probe("POST", "/organizer/teams/{borealis}/merge", each(400), form=merge_form, csrf=False),
        Probe(
            "POST", "/organizer/teams/999999/merge", by_role(LOGIN, 403, 403, 404), form=merge_form
        ),
        Probe(
            "POST",
            "/organizer/teams/99999999999999999999/merge",
            by_role(LOGIN, 403, 403, 404),
            form=merge_form,
        ),
    ],
    ("api.withdraw", "POST"): [
        # Alice withdraws first; her teammate then finds the slot empty.
        Probe(
            "POST",
            "/api/v1/runs/{run_w2}/withdraw",
            by_role(401, 200, 404, 403, amy=409),
            api=True,
        ),
        Probe("POST", "/api/v1/runs/999999/withdraw", by_role(401, 404, 404, 404), api=True),
        Probe(
            "POST",
            "/api/v1/runs/99999999999999999999/withdraw",
            by_role(401, 404, 404, 404),
            api=True,
        ),
    ],
    ("participant.withdraw", "POST"): [
        Probe("POST", "/runs/{run_w}/withdraw", each(400), csrf=False),
        Probe("POST", "/runs/{run_w}/withdraw", by_role(LOGIN, 302, 404, 403, amy=409)),
    ],
    ("tokens.tokens_page", "POST"): [
        Probe("POST", "/account/tokens", each(400), form=lambda: {"name": "x"}, csrf=False),
        Probe("POST", "/account/tokens", by_role(LOGIN, 200, 200, 200), form=lambda: {"name": "x"}),
    ],
    ("tokens.revoke", "POST"): [
        Probe("POST", "/account/tokens/{alice_spare_token}/revoke", each(400), csrf=False),
        # A token is its owner's alone, even within a team.
        Probe(
            "POST",
            "/account/tokens/{alice_spare_token}/revoke",
            by_role(LOGIN, 302, 404, 404, amy=404),
        ),
        Probe("POST", "/account/tokens/999999/revoke", by_role(LOGIN, 404, 404, 404)),
        Probe("POST", "/account/tokens/99999999999999999999/revoke", by_role(LOGIN, 404, 404, 404)),
    ],
    ("organizer.phase", "POST"): [
        Probe("POST", f"{ORG}/phase", ORGANIZER_ACTION, form=phase_form),
        Probe("POST", f"{ORG}/phase", each(400), form=phase_form, csrf=False),
    ],
    ("data.accept", "POST"): [
        Probe("POST", f"/tasks/{T3}/B/data/{{data_b}}", each(400), csrf=False),
        Probe("POST", f"/tasks/{T3}/B/data/{{data_future}}", by_role(LOGIN, 404, 404, 302)),
        Probe("POST", f"/tasks/{T3}/B/data/{{data_b}}", by_role(LOGIN, 302, 302, 302)),
    ],
    ("organizer.add_data", "POST"): [
        Probe("POST", f"{ORG}/data", each(400), form=data_form, csrf=False),
        Probe("POST", f"{ORG}/data", by_role(LOGIN, 403, 403, 400), form=data_form),
        Probe("POST", f"/organizer/tasks/{T3}/B/data", ORGANIZER_ACTION, form=data_form),
    ],
    ("organizer.delete_data", "POST"): [
        Probe("POST", f"/organizer/tasks/{T3}/B/data/{{data_del}}/delete", each(400), csrf=False),
        Probe("POST", f"{ORG}/data/{{data_del}}/delete", by_role(LOGIN, 403, 403, 404)),
        Probe("POST", f"/organizer/tasks/{T3}/B/data/{{data_del}}/delete", ORGANIZER_ACTION),
    ],
    ("organizer.baselines", "POST"): [Probe("POST", f"{ORG}/dev/baselines", ORGANIZER_ACTION)],
    ("organizer.import_run", "POST"): [
        Probe("POST", f"{ORG}/import", ORGANIZER_ACTION, form=import_form)
    ],
    ("organizer.gold", "POST"): [Probe("POST", f"{ORG}/gold", ORGANIZER_ACTION, form=gold_form)],
    # An unreadable bundle: refused (422) for the organizer, and nothing staged to confirm.
    ("organizer_tasks.new_task", "POST"): [
        Probe("POST", "/organizer/tasks/new", each(400), form=task_bundle_form, csrf=False),
        Probe("POST", "/organizer/tasks/new", by_role(LOGIN, 403, 403, 422), form=task_bundle_form),
    ],
    ("organizer_tasks.confirm_new", "POST"): [
        Probe("POST", "/organizer/tasks/new/confirm", each(400), csrf=False),
        Probe("POST", "/organizer/tasks/new/confirm", by_role(LOGIN, 403, 403, 409)),
    ],
    # Nothing staged: a cancel still answers with the upload form.
    ("organizer_tasks.cancel_new", "POST"): [
        Probe("POST", "/organizer/tasks/new/cancel", each(400), csrf=False),
        Probe("POST", "/organizer/tasks/new/cancel", ORGANIZER_ACTION),
    ],
    ("organizer_tasks.cancel_edit", "POST"): [
        Probe("POST", f"{ORG}/definition/cancel", each(400), csrf=False),
        Probe("POST", f"{ORG}/definition/cancel", ORGANIZER_ACTION),
    ],
    ("organizer_tasks.edit_definition", "POST"): [
        Probe("POST", f"{ORG}/definition", each(400), form=task_bundle_form, csrf=False),
        Probe("POST", f"{ORG}/definition", by_role(LOGIN, 403, 403, 422), form=task_bundle_form),
    ],
    ("organizer_tasks.confirm_edit", "POST"): [
        Probe("POST", f"{ORG}/definition/confirm", each(400), csrf=False),
        Probe("POST", f"{ORG}/definition/confirm", by_role(LOGIN, 403, 403, 409)),
    ],
    ("organizer.rescore", "POST"): [Probe("POST", f"{ORG}/dev/rescore", ORGANIZER_ACTION)],
    ("organizer.delete_phase_view", "POST"): [
        Probe("POST", f"{ORG}/phase/delete", each(400), form=lambda: {"name": "spare"}, csrf=False),
        Probe("POST", f"{ORG}/phase/delete", ORGANIZER_ACTION, form=lambda: {"name": "spare"}),
        Probe(
            "POST",
            f"{ORG}/phase/delete",
            by_role(LOGIN, 403, 403, 404),
            form=lambda: {"name": "spare"},
        ),
    ],
    ("organizer.freeze_set", "POST"): [
        Probe("POST", f"{ORG}/dev/freeze", each(400), csrf=False),
        # The phase probe above set a deadline ahead on dev: a freeze needs the confirmation.
        Probe("POST", f"{ORG}/dev/freeze", by_role(LOGIN, 403, 403, 409)),
        Probe("POST", f"{ORG}/dev/freeze", ORGANIZER_ACTION, form=lambda: {"before_deadline": "1"}),
    ],
    # Hidden by the organizer's probe, then shown again; a hidden task's routes answer 404 to
    # everyone else, even before their login check.
    ("organizer_task_state.hide_task", "POST"): [
        Probe("POST", f"/organizer/tasks/{CAR}/hide", each(400), csrf=False),
        Probe("POST", f"/organizer/tasks/{CAR}/hide", ORGANIZER_ACTION),
    ],
    ("organizer_task_state.show_task", "POST"): [
        Probe("POST", f"/organizer/tasks/{CAR}/show", each(400), csrf=False),
        Probe("POST", f"/organizer/tasks/{CAR}/show", by_role(404, 404, 404, 302)),
    ],
    # Not confirmed by the task's name typed: refused, nothing deleted.
    ("organizer_task_state.delete_task_view", "POST"): [
        Probe("POST", f"/organizer/tasks/{CAR}/delete", each(400), csrf=False),
        Probe(
            "POST",
            f"/organizer/tasks/{CAR}/delete",
            by_role(LOGIN, 403, 403, 400),
            form=lambda: {"confirm": "no"},
        ),
    ],
    ("organizer.supersede_set", "POST"): [
        Probe("POST", f"{ORG}/dev/supersede", each(400), csrf=False),
        # The freeze above is only queued: there is no frozen ranking to supersede yet.
        Probe(
            "POST",
            f"{ORG}/dev/supersede",
            by_role(LOGIN, 403, 403, 409),
            form=lambda: {"reason": "r"},
        ),
    ],
    ("organizer.verify_set", "POST"): [
        # The freeze above is only queued (no worker runs here): there is nothing to verify.
        Probe("POST", f"{ORG}/dev/verify", by_role(LOGIN, 403, 403, 404))
    ],
    ("account.signup", "POST"): [
        Probe("POST", "/signup", each(400), form=signup_form, csrf=False),
        Probe("POST", "/signup", by_role(200, 302, 302, 302), form=signup_form),
    ],
    ("account.verify_page", "POST"): [
        Probe("POST", "/verify/not-a-token", each(400), csrf=False),
        Probe("POST", "/verify/not-a-token", each(400)),
    ],
    ("account.resend", "POST"): [
        Probe("POST", "/verify/resend", each(400), form=nobody_form, csrf=False),
        # One address, six requests in the hour: the sixth meets the per-address limit.
        Probe("POST", "/verify/resend", {**each(200), "org": 429}, form=nobody_form),
    ],
    ("account.forgot", "POST"): [
        Probe("POST", "/password/forgot", each(400), form=nobody_form, csrf=False),
        Probe("POST", "/password/forgot", {**each(200), "org": 429}, form=nobody_form),
    ],
    ("account.reset", "POST"): [
        Probe("POST", "/password/reset/not-a-token", each(400), form=new_password_form, csrf=False),
        Probe("POST", "/password/reset/not-a-token", each(400), form=new_password_form),
    ],
    ("account.account_page", "POST"): [
        Probe("POST", "/account", each(400), form=profile_form, csrf=False),
        Probe("POST", "/account", by_role(LOGIN, 302, 302, 302), form=profile_form),
    ],
    ("notifications.save", "POST"): [
        Probe("POST", "/account/notifications", each(400), form=notifications_form, csrf=False),
        Probe(
            "POST", "/account/notifications", by_role(LOGIN, 302, 302, 302), form=notifications_form
        ),
    ],
    # The one-click unsubscribe takes no CSRF token (mail clients send none): the signed
    # token in the path is what authorizes it, and a forged one changes nothing.
    ("notifications.unsubscribe_page", "POST"): [
        Probe("POST", "/unsubscribe/not-a-token", each(400), csrf=False),
        Probe("POST", "/unsubscribe/not-a-token", each(400)),
    ],
    ("organizer_messages.new_message", "POST"): [
        Probe("POST", "/organizer/messages/new", each(400), form=message_form, csrf=False),
        Probe("POST", "/organizer/messages/new", ORGANIZER_ONLY, form=message_form),
    ],
    ("organizer_accounts.user_action", "POST"): [
        Probe("POST", "/organizer/users/999999/resend", each(400), csrf=False),
        Probe("POST", "/organizer/users/999999/resend", by_role(LOGIN, 403, 403, 404)),
        # Ids past any key (SQLite cannot even compare them) answer like missing ones.
        Probe(
            "POST", "/organizer/users/99999999999999999999/disable", by_role(LOGIN, 403, 403, 404)
        ),
    ],
    ("organizer_accounts.invite", "POST"): [
        Probe("POST", "/organizer/users/invite", each(400), form=invite_form, csrf=False),
        Probe("POST", "/organizer/users/invite", ORGANIZER_ACTION, form=invite_form),
    ],
    ("organizer_accounts.site_settings", "POST"): [
        Probe("POST", "/organizer/settings", each(400), form=settings_form, csrf=False),
        Probe("POST", "/organizer/settings", ORGANIZER_ACTION, form=settings_form),
    ],
    # Methods a route does not have (with a valid token, so that CSRF is not what refuses).
    ("public.home", "POST"): [Probe("POST", "/", each(405))],
    ("auth.logout", "GET"): [Probe("GET", "/logout", each(405))],
    ("auth.logout", "POST"): [Probe("POST", "/logout", by_role(LOGIN, 302, 302, 302))],
}


def _routes(app: Flask) -> set[tuple[str, str]]:
    return {
        (rule.endpoint, method)
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }


def test_every_route_has_an_expectation(world: World) -> None:
    missing = sorted(_routes(world.app) - set(EXPECTED))
    assert not missing, f"routes without an access expectation in {__name__}.EXPECTED: {missing}"


def _call(w: World, role: str, probe: Probe) -> tuple[int, str]:
    client = w.clients[role]
    path = probe.path.format(**w.ids)
    headers = {}
    if probe.api and role != "anon":
        headers["Authorization"] = f"Bearer {w.tokens[role]}"
    data = probe.form() if probe.form else {}
    if probe.method == "POST" and probe.csrf and not probe.api:
        data["csrf_token"] = w.csrf[role]
    if probe.method == "GET":
        resp = client.get(path, headers=headers)
    else:
        resp = client.post(path, data=data, headers=headers, content_type="multipart/form-data")
    # Binary answers (PDF charts) are scanned too, as text where their bytes are text.
    body = resp.get_data().decode("utf-8", errors="replace")
    w.seen.setdefault(role, {})[f"{probe.method} {path}"] = body
    if resp.status_code == 302 and role == "anon" and probe.expect["anon"] == LOGIN:
        assert resp.headers["Location"].startswith("/login"), (path, resp.headers["Location"])
    return resp.status_code, body


def test_access_matrix(world: World) -> None:
    """Call every probe as every visitor; report every status that differs from the table."""
    wrong = []
    for probes in EXPECTED.values():
        for probe in probes:
            for role in ROLES:
                status, body = _call(world, role, probe)
                assert status != 500, (probe, role, body[:500])
                if status != probe.expect[role]:
                    wrong.append(
                        f"{probe.method} {probe.path} as {role}: {status}, "
                        f"expected {probe.expect[role]} ({body[:160]!r})"
                    )
    assert not wrong, "\n".join(wrong)


def test_participants_never_reach_gold_other_teams_runs_or_hidden_scores(world: World) -> None:
    """Scan every body participants and anonymous visitors got for what they must not see."""
    if not world.seen:
        test_access_matrix(world)
    hidden_path = f"/api/v1/runs/{world.ids['run_hidden']}"
    hidden = (
        world.app.test_client()
        .get(hidden_path, headers={"Authorization": f"Bearer {world.tokens['org']}"})
        .get_json()
    )
    # The organizer sees the hidden run's scores; nobody else may see any of them.
    assert set(hidden["official"]) == {"MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc"}
    secrets = [f'"{v}"' for v in hidden["official"].values()]
    secrets += [format(float(v) * 100, ".2f") for k, v in hidden["official"].items() if k != "MRR"]
    gold_lines = [
        *GOLD_TEST_A.read_text().splitlines()[:3],
        *GOLD_TEST_B.read_text().splitlines()[:3],
        *GOLD_DEV_A.read_text().splitlines()[:3],
    ]
    bob_run_line = run_for(GOLD_TEST_A, "0.4242", every=4).decode().splitlines()[1]
    leaks = []
    for role in ("anon", "carol", "alice", "amy", "bob"):
        for request, body in world.seen.get(role, {}).items():
            for line in gold_lines:
                if line in body or json.dumps(line)[1:-1] in body:
                    leaks.append(f"{role} {request}: gold line {line!r}")
            if "/B" in request or request.endswith(
                (f"/runs/{world.ids['run_hidden']}", "/team", "/team/runs")
            ):
                leaks += [f"{role} {request}: hidden score {s}" for s in secrets if s in body]
            if role != "bob":
                for secret in (BOB_SECRET, bob_run_line):
                    if secret in body:
                        leaks.append(f"{role} {request}: Borealis' {secret!r}")
    assert not leaks, "\n".join(leaks)
    # And the hidden run, asked for directly by its own team: stored, validated, no score.
    alice = world.app.test_client().get(
        hidden_path, headers={"Authorization": f"Bearer {world.tokens['alice']}"}
    )
    assert alice.status_code == 200
    body = alice.get_json()
    assert body["scores_hidden"] is True and body["scores"] == {} and body["official"] == {}


def public_by_rule(unit: str) -> bool:
    """Return whether a unit of the split set is public, by the rule as published."""
    digest = hashlib.sha256(f"{SEED}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < FRACTION


def _official_values(gold: dict[str, str], run: dict[str, str], ids: list[str]) -> list[float]:
    """Return scikit-learn's macro-F1 and accuracy of a run on some items."""
    truth, said = [gold[i] for i in ids], [run[i] for i in ids]
    return [
        float(metrics.f1_score(truth, said, labels=LABELS, average="macro")),
        float(metrics.accuracy_score(truth, said)),
    ]


def _number(value: float) -> list[str]:
    """Return the ways a value on the table's scale (1, 4 decimals) may be printed.

    Rounded as the table shows it, and its first four decimals as a longer float starts.
    """
    return sorted({format(value, ".4f"), format(value, ".12f")[:6]})


def _pattern(text: str) -> re.Pattern[str]:
    # Not the tail of a longer number ("120.7243" in a chart's coordinates is no score).
    return re.compile(r"(?<![\d.])" + re.escape(text) + (r"(?!\d)" if text[-1].isdigit() else ""))


def test_nothing_of_the_private_part_reaches_participants(world: World) -> None:
    """Scan every body non-organizers got for the split set's private values, ids and count."""
    if not world.seen:
        test_access_matrix(world)
    gold = pairs(SENTIMENT / "gold.tsv")
    public = [u for u in gold if public_by_rule(u)]
    private = [u for u in gold if not public_by_rule(u)]
    assert public and private
    runs = {
        "Aurora": pairs(SENTIMENT / "run-valid.tsv"),
        "Borealis": bob_split_run(),
        # The deterministic baselines; the random one's draws are the server's own.
        "all positive": dict.fromkeys(gold, "positive"),
        "majority": dict.fromkeys(gold, "neutral"),
    }
    org = world.app.test_client()
    headers = {"Authorization": f"Bearer {world.tokens['org']}"}
    table = org.get(f"{SPL_API}/table?part=private", headers=headers).get_json()
    assert table["part"] == "private"
    # The computed values are the ones the organizer's table shows (scale 1, 4 decimals).
    shown = {c["cells"]["macro-F1"]["display"] for c in table["rows"]}
    expected = _official_values(gold, runs["Aurora"], private)[0]
    assert format(expected, ".4f") in shown
    # Whatever the public part shows legitimately: a secret equal to one of these is no secret.
    public_table = org.get(f"{SPL_API}/table", headers=headers).get_json()
    assert public_table["part"] == "public"
    public_texts = {
        text
        for row in public_table["rows"]
        for cell in row["cells"].values()
        if cell is not None
        for value in (cell["value"], *(cell.get("ci") or ()))
        for text in _number(value)
    }
    public_texts |= {t for run in runs.values() for v in _official_values(gold, run, public)
                     for t in _number(v)}  # fmt: skip
    secrets: dict[str, re.Pattern[str]] = {}
    for name, run in runs.items():
        for part, ids in (("private", private), ("all", list(gold))):
            for value in _official_values(gold, run, ids):
                for text in _number(value):
                    if text not in public_texts:
                        secrets[f"{name}'s {part} value {text}"] = _pattern(text)
    for unit in private:
        secrets[f"private unit {unit}"] = _pattern(unit)
    # The private part's size (the whole set's is no secret: participants label every item).
    secrets[f"unit count {len(private)}"] = re.compile(
        rf"(?<![\d.]){len(private)}\s+(items?|units?)\b|\"units\":\s*{len(private)}\b"
    )
    secrets["the split's seed"] = re.compile(rf"seed\W{{0,4}}{SEED}\b")
    # Aurora's own run file names every item it labelled: its members' download, not a leak.
    own_files = {f"GET /runs/{world.ids['split_a']}/file"}
    leaks = []
    for role in ("anon", "carol", "alice", "amy", "bob"):
        for request, body in world.seen.get(role, {}).items():
            if role in ("alice", "amy") and request in own_files:
                continue
            leaks += [f"{role} {request}: {what}" for what, p in secrets.items() if p.search(body)]
    assert not leaks, "\n".join(leaks)
    # The scan can fail: the organizer's private table has private values, a run file ids.
    private_body = json.dumps(table)
    assert any(p.search(private_body) for what, p in secrets.items() if "value" in what)
    own_file = world.seen["alice"][next(iter(own_files))]
    per_item = world.seen["alice"][f"GET /runs/{world.ids['split_a']}/queries.csv"]
    assert all(_pattern(u).search(per_item) for u in public)
    # And the pages scanned do show the public part's values where a team's own runs are.
    aurora_public = format(_official_values(gold, runs["Aurora"], public)[0], ".4f")
    for request in ("GET /team", f"GET /api/v1/runs/{world.ids['split_a']}", f"GET {SPL}"):
        assert _pattern(aurora_public).search(world.seen["alice"][request]), request
    assert all(secrets[f"private unit {u}"].search(own_file) for u in private)


def test_the_api_ignores_session_cookies(world: World) -> None:
    """A logged-in browser session is not an API credential: no token, 401."""
    for role in ("alice", "org"):
        client = world.app.test_client()
        login(client, EMAILS[role], PASSWORDS[role])
        assert client.get("/runs/{run_a}".format(**world.ids)).status_code == 200
        for path in (f"/api/v1/runs/{world.ids['run_a']}", f"{API}/A/table"):
            resp = client.get(path)
            assert resp.status_code == 401, (role, path)
            assert resp.headers["WWW-Authenticate"] == 'Bearer realm="leaderboard"'
