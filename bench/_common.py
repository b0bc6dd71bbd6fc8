"""Shared helpers of the benchmarks: free ports, fresh instances, gunicorn, peak RSS, percentiles."""

from __future__ import annotations

import contextlib
import math
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LEADERBOARD = str(BIN / "leaderboard")
GUNICORN = str(BIN / "gunicorn")


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def random_cqa_run(gold: Path, rng: random.Random) -> bytes:
    """Return a valid CQA run: every gold pair, a random score and the label it implies."""
    out = []
    for line in gold.read_text().splitlines():
        q, c, *_ = line.split("\t")
        score = rng.random()
        out.append(f"{q}\t{c}\t0\t{score:.6f}\t{'true' if score > 0.5 else 'false'}")
    return ("\n".join(out) + "\n").encode()


def percentile(values: Sequence[float], p: float) -> float:
    """Return the p-th percentile (0-100) by the nearest-rank method; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """Return the median (mean of the middle two for an even count)."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return math.nan
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def peak_rss_mb(pid: int) -> float:
    """Return a live process's peak resident set size (VmHWM) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """Return a live process's CPU time so far (user + system), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Timed:
    """One child process's wall time, CPU time (user + system), peak RSS and output."""

    seconds: float
    cpu_seconds: float
    peak_mb: float
    stdout: str


def run_timed(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Timed:
    """Run a command to completion; return its wall and CPU times and its own peak RSS.

    The peak is read from wait4()'s rusage, which covers this child (and its waited-for
    descendants) only, unlike RUSAGE_CHILDREN, which keeps the maximum over all children.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=dict(env) if env is not None else None, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, list(argv), out)
    return Timed(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out)


class Instance:
    """A fresh leaderboard instance in a folder, driven through the ``leaderboard`` CLI."""

    def __init__(self, root: Path, database_url: str | None = None) -> None:
        self.root = root
        self.instance_dir = root / "instance"
        self.database_url = database_url or f"sqlite:///{self.instance_dir / 'leaderboard.sqlite3'}"
        self.env = server_env(self.instance_dir, self.database_url)

    def cli(self, *args: str) -> str:
        """Run a ``leaderboard`` command on this instance and return its output."""
        return subprocess.run(
            [LEADERBOARD, *args], env=self.env, check=True, capture_output=True, text=True
        ).stdout

    def app(self) -> Any:
        """Return the Flask application of this instance, in this process."""
        from leaderboard.web import create_app

        return create_app(
            {
                "instance_dir": self.instance_dir,
                "database_url": self.database_url,
                "storage_dir": self.instance_dir / "storage",
            }
        )

    def init(self) -> None:
        """Create the database and load the presets."""
        self.cli("init")

    def participant_token(self, team: str, email: str, password: str) -> str:
        """Create a team with one participant and return an API token of theirs."""
        self.cli("create-team", team)
        self.cli(
            "create-user", email, "--role", "participant", "--team", team, "--password", password
        )
        return self.cli("token", email).strip()


def server_env(instance_dir: Path, database_url: str, **settings: str) -> dict[str, str]:
    """Return the environment of a server or command on an instance, with extra settings.

    This process's environment without its LEADERBOARD_ settings (a developer's clock file or
    database must not leak into a test server) nor GUNICORN_CMD_ARGS (which gunicorn would add
    to every command line), then the instance's folders and database, then ``settings``.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LEADERBOARD_") and k != "GUNICORN_CMD_ARGS"
    }
    env.update(
        LEADERBOARD_INSTANCE_DIR=str(instance_dir),
        LEADERBOARD_DATABASE_URL=database_url,
        LEADERBOARD_STORAGE_DIR=str(instance_dir / "storage"),
        **settings,
    )
    return env


def worker_pids(master: int) -> list[int]:
    """Return the pids of a gunicorn master's workers."""
    children = Path(f"/proc/{master}/task/{master}/children")
    return [int(p) for p in children.read_text().split()]


def wait_until_serving(
    url: str, server: subprocess.Popen[bytes], workers: int = 1, seconds: float = 60
) -> None:
    """Wait until ``url``/healthz answers 200 and the master has ``workers`` workers."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                if resp.status == 200 and len(worker_pids(server.pid)) >= workers:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gunicorn did not serve {url}/healthz within {seconds} s")


def start_gunicorn(
    env: Mapping[str, str],
    *,
    workers: int = 1,
    threads: int = 1,
    app: str = "wsgi:app",
    timeout: int = 300,
    extra: Sequence[str] = (),
    log: Path | None = None,
    port: int | None = None,
) -> tuple[str, subprocess.Popen[bytes]]:
    """Start gunicorn serving ``app`` on a loopback port; return (base URL, master).

    The one way tests and benchmarks start a server: run from the repository (so gunicorn
    reads gunicorn.conf.py there) with the settings given overriding it, its output in
    ``log`` or discarded. Returns once the app answers; ``stop_gunicorn`` ends it.
    ``port``: a free one when None.
    """
    port = port or free_port()
    argv = [
        GUNICORN,
        "--workers", str(workers),
        "--threads", str(threads),
        "--timeout", str(timeout),
        "--bind", f"127.0.0.1:{port}",
        *extra,
        app,
    ]  # fmt: skip
    out = log.open("wb") if log is not None else None
    try:
        server = subprocess.Popen(
            argv,
            cwd=REPO,
            env=dict(env),
            stdout=out if out is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if out is not None else subprocess.DEVNULL,
        )
    finally:
        if out is not None:
            out.close()  # the child has its own copy
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, server, workers)
    except BaseException:
        stop_gunicorn(server)
        raise
    return url, server


def stop_gunicorn(server: subprocess.Popen[bytes]) -> None:
    """Stop a gunicorn master (and so its workers), killing it if it takes over 30 s."""
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@contextlib.contextmanager
def gunicorn(
    env: Mapping[str, str],
    *,
    workers: int = 1,
    threads: int = 1,
    app: str = "wsgi:app",
    timeout: int = 300,
    extra: Sequence[str] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Serve ``app`` with gunicorn on a free loopback port; yield (base URL, master process)."""
    url, server = start_gunicorn(
        env, workers=workers, threads=threads, app=app, timeout=timeout, extra=extra
    )
    try:
        yield url, server
    finally:
        stop_gunicorn(server)
