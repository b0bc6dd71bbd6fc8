"""Races, crashes and recovery through a real gunicorn with several workers (SQLite or PostgreSQL)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from leaderboard.models import QuotaUsage, Run, Score
from tests.conftest import PG_URL
from tests.live import LiveServer
from tests.runs import constant_run, oracle_run, own_campaign

API = "/api/v1/tasks/semeval2016-task3/A/runs"


def with_alice(
    template: Path, root: Path, workers: int, app: str = "wsgi:app", **env: str
) -> LiveServer:
    """Return a started server whose instance has team Aurora and its participant alice.

    ``app`` is the WSGI application gunicorn loads and ``env`` adds to the server's environment.
    """
    live = LiveServer.from_template(template, root, workers=workers, **env)
    live.app = app
    live.cli("create-team", "Aurora")
    live.cli(
        "create-user",
        "alice@example.org",
        "--role",
        "participant",
        "--team",
        "Aurora",
        "--password",
        "x" * 12,
    )
    return live.start()


@pytest.fixture
def server(template_instance: Path, tmp_path: Path) -> Iterator[LiveServer]:
    live = with_alice(template_instance, tmp_path, workers=4)
    yield live
    live.stop()


def runs_in(server: LiveServer) -> list[Run]:
    engine = create_engine(server.database_url, poolclass=NullPool)
    with Session(engine) as session:
        runs = list(session.scalars(select(Run).order_by(Run.id)))
    engine.dispose()
    return runs


def parallel_uploads(
    server: LiveServer, token: str, files: list[Path], slot: str = "primary"
) -> list[tuple[int, dict[str, object]]]:
    """Start one curl process per file at once; return (status, body) of each."""
    procs = []
    for i, path in enumerate(files):
        out = path.with_suffix(f".response{i}")
        procs.append(
            (
                out,
                subprocess.Popen(
                    [
                        "curl", "-s", "-o", str(out), "-w", "%{http_code}",
                        "-H", f"Authorization: Bearer {token}",
                        "-F", f"slot={slot}", "-F", f"name=race-{i}", "-F", f"file=@{path}",
                        server.url + API,
                    ],
                    stdout=subprocess.PIPE,
                    text=True,
                ),
            )
        )  # fmt: skip
    results = []
    for out, proc in procs:
        status, _ = proc.communicate(timeout=120)
        # curl writes no file when the server closes the connection without a response.
        text = out.read_text() if out.exists() else ""
        results.append((int(status), json.loads(text or "{}")))
    return results


def test_twenty_parallel_uploads_into_one_slot_leave_one_active(
    server: LiveServer, tmp_path: Path
) -> None:
    token = server.cli("token", "alice@example.org").strip()
    files = []
    for i in range(20):
        path = tmp_path / f"run{i}.txt"
        path.write_bytes(oracle_run() if i % 2 else constant_run())
        files.append(path)
    results = parallel_uploads(server, token, files)
    statuses = [s for s, _ in results]
    assert set(statuses) <= {201, 409}, results
    refused = [body["error"] for s, body in results if s == 409]
    assert all("same moment" in str(e) for e in refused), refused
    runs = runs_in(server)
    active = [r for r in runs if r.status == "active"]
    assert len(active) == 1
    assert len(runs) == statuses.count(201)
    # Every accepted upload replaced its predecessor in turn: the replaced runs form one chain.
    replaced = [r for r in runs if r.status == "replaced"]
    assert sorted(r.replaced_by_id for r in replaced) == sorted(
        r.id for r in runs if r.id != min(x.id for x in runs)
    )


def test_a_burst_against_a_quota_of_three_accepts_exactly_three(
    server: LiveServer, tmp_path: Path
) -> None:
    own_campaign(server)
    server.cli("phase", "semeval2016-task3", "A", "test", "--set", "test", "--total-quota", "3")
    token = server.cli("token", "alice@example.org").strip()
    files = []
    for i in range(12):
        path = tmp_path / f"q{i}.txt"
        path.write_bytes(oracle_run())
        files.append(path)
    results = parallel_uploads(server, token, files)
    statuses = [s for s, _ in results]
    assert statuses.count(201) == 3, results
    assert statuses.count(409) == 9
    assert all("quota is reached" in str(body["error"]) for s, body in results if s == 409)
    assert len(runs_in(server)) == 3


def test_a_worker_killed_before_the_commit_leaves_nothing_behind(
    template_instance: Path, tmp_path: Path
) -> None:
    flag = tmp_path / "kill"
    live = with_alice(
        template_instance,
        tmp_path,
        workers=1,
        app="tests.kill_before_commit:app",
        LEADERBOARD_TEST_KILL_FLAG=str(flag),
    )
    try:
        own_campaign(live)
        live.cli("phase", "semeval2016-task3", "A", "test", "--set", "test", "--total-quota", "1")
        token = live.cli("token", "alice@example.org").strip()
        flag.touch()
        killed = parallel_uploads(live, token, [_write(tmp_path / "run.txt", oracle_run())])
        # The worker died inside the request: curl got no response at all.
        assert killed[0][0] == 0, killed
        fired = Path(f"{flag}.fired")
        assert fired.exists() and not flag.exists(), "the worker was not killed before the commit"
        (key,) = (f["key"] for f in json.loads(fired.read_text()).values())
        live.wait_ready()  # the master starts a new worker
        engine = create_engine(live.database_url, poolclass=NullPool)
        with Session(engine) as session:
            assert session.scalars(select(Run)).all() == []
            assert session.scalars(select(Score)).all() == []
            # The counter itself is made and committed before scoring; nothing of it is used.
            assert session.scalars(select(QuotaUsage.used)).all() in ([], [0])
        engine.dispose()
        # The file was stored before the crash and stays, referenced by no row: the store is
        # content-addressed, so the same bytes uploaded again reuse it as it is.
        stored = live.instance / "storage" / key
        assert stored.read_bytes() == oracle_run()
        assert list((live.instance / "storage" / "tmp").iterdir()) == []
        # The quota of one run is still whole: the same upload is now accepted, and stored once.
        ok = parallel_uploads(live, token, [_write(tmp_path / "again.txt", oracle_run())])
        assert ok[0][0] == 201, ok
        (run,) = runs_in(live)
        assert run.files["file"]["key"] == key
        assert stored.read_bytes() == oracle_run()
    finally:
        live.stop()


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.skipif(
    not PG_URL, reason="SQLite has no server to restart; this runs in the PostgreSQL pass"
)
def test_the_server_survives_a_database_restart(server: LiveServer, tmp_path: Path) -> None:
    ctl = shutil.which("pg_ctlcluster")
    if ctl is None or os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("restarting PostgreSQL needs pg_ctlcluster and root")
        pytest.skip("restarting PostgreSQL needs pg_ctlcluster and root")
    token = server.cli("token", "alice@example.org").strip()
    assert parallel_uploads(server, token, [_write(tmp_path / "a.txt", oracle_run())])[0][0] == 201
    version = sorted(os.listdir("/etc/postgresql"))[0]
    subprocess.run(
        [ctl, "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        capture_output=True,
    )
    for _ in range(60):
        if subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1"]).returncode == 0:
            break
        time.sleep(0.5)
    # Connections in the workers' pools died with the restart; they are checked on checkout.
    results = parallel_uploads(
        server, token, [_write(tmp_path / f"b{i}.txt", oracle_run()) for i in range(4)]
    )
    assert [s for s, _ in results].count(201) == 4, results
    assert len([r for r in runs_in(server) if r.status == "active"]) == 1
