"""Two hosts, one site: two gunicorns and two workers over one PostgreSQL, one Redis, one S3 bucket.

Each server and worker has an instance folder of its own (no shared disk), as in the deployment
of ../shared/spec/operations.md; everything runs on loopback. Skipped when PostgreSQL, Redis or
the S3 server cannot start or answer, except under CI=true where that is a failure.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, undefer
from sqlalchemy.pool import NullPool

from bench._common import random_cqa_run, server_env, start_gunicorn, stop_gunicorn
from leaderboard.models import Job, Run, Team
from leaderboard.states import JobPurpose, JobStatus
from tests import redis_server
from tests.conftest import csrf_from
from tests.postgres import DEFAULT as PG_DEFAULT
from tests.runs import GOLD_TEST_A
from tests.seaweed import S3Server
from tests.workers import kill_tree, start_worker, stop_worker, wait_for

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
T3 = "semeval2016-task3"
API = f"/api/v1/tasks/{T3}/A/runs"
PAGE = f"/organizer/tasks/{T3}/A"
ANALYSIS = f"{PAGE}/analysis?set=test"
PASSWORD = "correct horse battery"
ORGANIZER = "org@example.org"
#: Seconds a job may take on a loaded two-core machine before a wait gives up.
JOB_WAIT = 120


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@dataclass
class Deployment:
    """The running site: its database, Redis, the two hosts' URLs and envs, and the workers."""

    database_url: str
    engine: Engine
    redis: redis_server.RedisServer
    urls: dict[str, str]
    envs: dict[str, dict[str, str]]
    root: Path
    tokens: dict[str, str] = field(default_factory=dict)
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    servers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def cli(self, *args: str) -> str:
        """Run ``leaderboard ARGS`` with host A's settings and return its output."""
        out = subprocess.run(
            [str(BIN / "leaderboard"), *args],
            env=self.envs["A"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, f"leaderboard {' '.join(args)}: {out.stdout}{out.stderr}"
        return out.stdout

    def log(self, name: str) -> Path:
        """Return the log file of a process of the deployment."""
        return self.root / f"{name}.log"

    def job(self, job_id: int) -> Job:
        """Return a job row as the database has it now."""
        with Session(self.engine) as session:
            row = session.get(Job, job_id, options=[undefer(Job.report)])
            assert row is not None
            session.expunge(row)
            return row

    def finished(self, job_id: int, what: str, log: str) -> Job:
        """Wait until a job is done or failed; return its row."""
        return wait_for(
            lambda: (row := self.job(job_id)).status in (JobStatus.DONE, JobStatus.FAILED) and row,
            JOB_WAIT,
            what,
            self.log(log),
        )

    def latest_job(self, purpose: JobPurpose) -> Job:
        """Return the newest job row of a purpose."""
        with Session(self.engine) as session:
            row = session.scalars(
                select(Job).where(Job.purpose == purpose).order_by(Job.id.desc())
            ).first()
            assert row is not None, f"no {purpose} job"
            return self.job(row.id)


def _host_env(root: Path, name: str, database_url: str, **settings: str) -> dict[str, str]:
    instance = root / name / "instance"
    instance.mkdir(parents=True)
    env = server_env(instance, database_url, **settings)
    # The console scripts beside sys.executable import the package installed in editable mode;
    # this puts the code under test first.
    env["PYTHONPATH"] = str(REPO)
    return env


def _create_database() -> tuple[Engine, str, str]:
    admin_url = os.environ.get("LEADERBOARD_TEST_DATABASE_URL") or PG_DEFAULT
    try:
        admin = create_engine(
            admin_url,
            isolation_level="AUTOCOMMIT",
            poolclass=NullPool,
            connect_args={"connect_timeout": 5},
        )
        name = f"lb_hosts_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # any failure means: no PostgreSQL to test against
        _unavailable(f"no PostgreSQL at {admin_url}: {type(exc).__name__}: {exc}")
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    return admin, name, url


@pytest.fixture(scope="module")
def site(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Start the whole site; stop every process and drop the database whatever happens."""
    root = tmp_path_factory.mktemp("hosts")
    admin, db_name, database_url = _create_database()
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        redis = redis_server.start(root / "redis")
    except RuntimeError as exc:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)'))
        _unavailable(f"Redis could not start: {exc}")
    shared = {
        "LEADERBOARD_SECRET_KEY": f"hosts-{uuid.uuid4().hex}",
        "LEADERBOARD_QUEUE_URL": redis.url,
        "LEADERBOARD_STORAGE_URL": f"s3://{s3_server.bucket}/hosts-{uuid.uuid4().hex[:10]}/",
        "LEADERBOARD_S3_ENDPOINT_URL": s3_server.endpoint,
        # One heartbeat a second: a killed worker's job is taken over three seconds after.
        "LEADERBOARD_JOB_HEARTBEAT_SECONDS": "1",
    }
    envs = {n: _host_env(root, n, database_url, **shared) for n in ("A", "B", "W1", "W2")}
    site = Deployment(database_url, engine, redis, {}, envs, root)
    try:
        # The subprocesses run this worktree's package, not another checkout's.
        where = subprocess.run(
            [str(BIN / "python"), "-c", "import leaderboard; print(leaderboard.__file__)"],
            env=envs["A"],
            cwd="/",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert Path(where).is_relative_to(REPO), where
        site.cli("init")
        site.cli("create-user", ORGANIZER, "--role", "organizer", "--password", PASSWORD)
        for team, email in (
            ("Aurora", "alice@example.org"),
            ("Borealis", "bob@example.org"),
            ("Cirrus", "carol@example.org"),
        ):
            site.cli("create-team", team)
            site.cli(
                "create-user",
                email,
                "--role",
                "participant",
                "--team",
                team,
                "--password",
                PASSWORD,
            )
            site.tokens[email] = site.cli("token", email).strip()
        for name in ("A", "B"):
            site.urls[name], site.servers[name] = start_gunicorn(
                envs[name], workers=2, timeout=120, log=site.log(name)
            )
        for name in ("W1", "W2"):
            site.workers[name] = start_worker(envs[name], site.log(name))
        yield site
    finally:
        for worker in site.workers.values():
            stop_worker(worker)
        for server in site.servers.values():
            stop_gunicorn(server)
        redis_server.stop(site.redis)
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)'))


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _upload(url: str, token: str, body: bytes, slot: str = "primary") -> requests.Response:
    return requests.post(
        url + API,
        headers=_bearer(token),
        data={"slot": slot, "name": f"run-{slot}"},
        files={"file": ("run.txt", body)},
        timeout=120,
    )


def _organizer(url: str) -> requests.Session:
    """Return a session logged in as the organizer on one host."""
    session = requests.Session()
    page = session.get(url + "/login", timeout=30)
    resp = session.post(
        url + "/login",
        data={"email": ORGANIZER, "password": PASSWORD, "csrf_token": csrf_from(page.text)},
        allow_redirects=False,
        timeout=30,
    )
    assert resp.status_code == 302, resp.text[:500]
    return session


def _post_form(session: requests.Session, url: str, page: str, path: str, **data: Any) -> int:
    """Post a form of ``page`` (with its CSRF token) to ``path``; return the status."""
    token = csrf_from(session.get(url + page, timeout=30).text)
    resp = session.post(
        url + path, data={"csrf_token": token, **data}, allow_redirects=False, timeout=60
    )
    assert resp.status_code == 302, resp.text[:1000]
    return resp.status_code


def _queue_analysis(site: Deployment, host: str, **form: Any) -> int:
    """Queue a significance analysis of subtask A's test set through a host's organizer form."""
    org = _organizer(site.urls[host])
    _post_form(org, site.urls[host], ANALYSIS, ANALYSIS, measure="MAP", **form)
    page = org.get(site.urls[host] + ANALYSIS, timeout=30).text
    return int(re.search(r"Analysis (\d+) is queued", page).group(1))  # type: ignore[union-attr]


def _no_local_objects(site: Deployment) -> None:
    for name in ("A", "B", "W1", "W2"):
        storage = Path(site.envs[name]["LEADERBOARD_INSTANCE_DIR"]) / "storage" / "objects"
        assert not storage.exists(), (
            f"{name} stored files on its own disk: {list(storage.rglob('*'))}"
        )


def test_an_upload_through_one_host_is_listed_served_and_scored_by_the_other(
    site: Deployment,
) -> None:
    alice, bob = site.tokens["alice@example.org"], site.tokens["bob@example.org"]
    body = random_cqa_run(GOLD_TEST_A, random.Random(1))
    resp = _upload(site.urls["A"], alice, body)
    assert resp.status_code == 201, resp.text
    run = resp.json()
    assert run["scores"], run
    # Bob's run, through B, gives the analyses below two runs to compare.
    other = _upload(site.urls["B"], bob, random_cqa_run(GOLD_TEST_A, random.Random(2)))
    assert other.status_code == 201, other.text
    listed = requests.get(site.urls["B"] + "/api/v1/team/runs", headers=_bearer(alice), timeout=30)
    assert listed.status_code == 200
    (seen,) = [r for r in listed.json()["runs"] if r["id"] == run["id"]]
    assert seen["scores"] == run["scores"] and seen["sha256"] == run["sha256"]
    got = requests.get(
        site.urls["B"] + f"/api/v1/runs/{run['id']}/file", headers=_bearer(alice), timeout=30
    )
    assert got.status_code == 200 and got.content == body
    tables = [
        requests.get(
            site.urls[h] + f"/api/v1/tasks/{T3}/A/table", headers=_bearer(alice), timeout=30
        ).json()
        for h in ("A", "B")
    ]
    assert tables[0] == tables[1]
    rows = [r for r in tables[1]["rows"] if r["team"] == "Aurora" and r["slot"] == "primary"]
    assert len(rows) == 1, tables[1]
    _no_local_objects(site)


def test_an_analysis_queued_through_b_is_computed_by_a_worker_and_shown_by_a(
    site: Deployment,
) -> None:
    job = _queue_analysis(site, "B", method="randomization", samples="1000", seed="3")
    done = site.finished(job, "the analysis queued through B", "W1")
    assert done.status == JobStatus.DONE, done.error
    assert done.report is not None and done.report["samples"] == 1000
    org = _organizer(site.urls["A"])
    page = org.get(site.urls["A"] + ANALYSIS, timeout=30).text
    assert f"Analysis {job} describes the current scores" in page
    assert "randomization, 1000 samples, seed 3" in page
    # Its chart is drawn by a worker, stored in the bucket and read back by both hosts.
    path = f"/organizer/analyses/{job}/measure.svg"
    org_b = _organizer(site.urls["B"])
    first = wait_for(
        lambda: (resp := org.get(site.urls["A"] + path, timeout=60)).status_code == 200 and resp,
        60,
        "the analysis' chart drawn by a worker",
    )
    other = org_b.get(site.urls["B"] + path, timeout=60)
    assert other.status_code == 200 and other.content == first.content
    _no_local_objects(site)


def test_a_freeze_through_a_is_verified_through_b(site: Deployment) -> None:
    org_a, org_b = _organizer(site.urls["A"]), _organizer(site.urls["B"])
    _post_form(org_a, site.urls["A"], PAGE, f"{PAGE}/test/freeze")
    frozen = site.finished(site.latest_job(JobPurpose.FREEZE).id, "the freeze", "W1")
    assert frozen.status == JobStatus.DONE, frozen.error
    _post_form(org_b, site.urls["B"], PAGE, f"{PAGE}/test/verify")
    verified = site.finished(site.latest_job(JobPurpose.VERIFY).id, "the verification", "W2")
    assert verified.status == JobStatus.DONE, verified.error
    assert verified.report is not None and verified.report["differences"] == []
    page = org_b.get(site.urls["B"] + PAGE, timeout=30).text
    assert "frozen rows re-score to the snapshot" in page
    assert "could NOT be confirmed" not in page


def test_twenty_parallel_uploads_to_one_slot_over_both_hosts_leave_one_active(
    site: Deployment,
) -> None:
    carol = site.tokens["carol@example.org"]
    bodies = [random_cqa_run(GOLD_TEST_A, random.Random(100 + i)) for i in range(20)]
    with ThreadPoolExecutor(20) as pool:
        answers = list(
            pool.map(
                lambda i: _upload(site.urls["AB"[i % 2]], carol, bodies[i], "contrastive1"),
                range(20),
            )
        )
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {201, 409}, [(a.status_code, a.text[:300]) for a in answers]
    assert statuses.count(201) >= 1
    with Session(site.engine) as session:
        runs = session.scalars(
            select(Run)
            .join(Team, Run.team_id == Team.id)
            .where(Team.name == "Cirrus", Run.slot == "contrastive1")
        ).all()
        assert len(runs) == statuses.count(201)
        assert [r.status for r in runs].count("active") == 1


def _holder(site: Deployment, row: Job) -> str:
    """Return which worker (W1 or W2) runs a job: the one whose process group has its pid."""
    pid = int(row.worker.split(":")[1].split("/")[0])
    group = os.getpgid(pid)
    (name,) = [n for n, w in site.workers.items() if w.pid == group]
    return name


def test_a_killed_worker_and_a_redis_restart_lose_no_job(site: Deployment) -> None:
    long_job = _queue_analysis(site, "A", method="bootstrap", samples="300000", seed="11")
    running = wait_for(
        lambda: (row := site.job(long_job)).status == JobStatus.RUNNING and row,
        JOB_WAIT,
        "the long analysis taken by a worker",
        site.log("W1"),
    )
    holder = _holder(site, running)
    other = "W2" if holder == "W1" else "W1"
    kill_tree(site.workers[holder])  # SIGKILL, pool and all
    killed = site.job(long_job)
    assert killed.status == JobStatus.RUNNING and killed.attempts == 1
    # Redis goes down: a job asked meanwhile is committed, its message lost, the sweep resends it.
    redis_server.stop(site.redis)
    while_down = _queue_analysis(site, "B", method="randomization", samples="500", seed="5")
    site.redis = redis_server.start(site.redis.data_dir, site.redis.port)
    done = site.finished(long_job, "the long analysis finished by the other worker", other)
    assert done.status == JobStatus.DONE, done.error
    assert done.attempts == 2 and done.worker != running.worker
    assert _holder(site, done) == other
    later = site.finished(while_down, "the analysis queued while Redis was down", other)
    assert later.status == JobStatus.DONE, later.error
