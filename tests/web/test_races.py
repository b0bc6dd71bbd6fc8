"""Races, crashes and recovery through a real gunicorn with several workers (SQLite or PostgreSQL)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from leaderboard.models import Run
from tests.conftest import PG_URL
from tests.live import LiveServer
from tests.runs import constant_run, oracle_run

API = "/api/v1/tasks/semeval2016-task3/A/runs"


def with_alice(template: Path, root: Path, workers: int) -> LiveServer:
    """Return a started server whose instance has team Aurora and its participant alice."""
    live = LiveServer.from_template(template, root, workers=workers)
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
        results.append((int(status), json.loads(out.read_text() or "{}")))
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


def _slow_upload(server: LiveServer, token: str, body_size: int) -> socket.socket:
    """Send the headers and half of a multipart body, then stall."""
    boundary = "leaderboardboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="slot"\r\n\r\nprimary\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="run.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", server.port))
    request = (
        f"POST {API} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(head) + body_size + 100}\r\n\r\n"
    ).encode()
    sock.sendall(request + head + oracle_run()[: body_size // 2])
    return sock


def test_a_worker_killed_mid_upload_leaves_nothing_behind(
    template_instance: Path, tmp_path: Path
) -> None:
    live = with_alice(template_instance, tmp_path, workers=1)
    token = live.cli("token", "alice@example.org").strip()
    try:
        objects = live.instance / "storage" / "objects"
        before = sorted(p.name for p in objects.rglob("*") if p.is_file())
        sock = _slow_upload(live, token, len(oracle_run()))
        time.sleep(0.5)
        (worker,) = live.workers_pids()
        os.kill(worker, signal.SIGKILL)
        sock.close()
        live.wait_ready()  # the master starts a new worker
        assert runs_in(live) == []
        after = sorted(p.name for p in objects.rglob("*") if p.is_file())
        assert after == before, "no new stored file may appear for a killed upload"
        ok = parallel_uploads(live, token, [_write(tmp_path / "next.txt", oracle_run())])
        assert ok[0][0] == 201, ok
        (run,) = runs_in(live)
        stored = live.instance / "storage" / run.files["file"]["key"]
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
