"""A real gunicorn serving a copy of the test template instance, for race, crash and browser tests.

Started with bench._common.start_gunicorn, the one way tests and benchmarks start a server, in
the environment bench._common.server_env builds (no LEADERBOARD_ setting of the caller's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench._common import server_env, start_gunicorn, stop_gunicorn, wait_until_serving, worker_pids
from tests.conftest import app_overrides
from tests.workers import start_worker, stop_worker

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@dataclass
class LiveServer:
    """Gunicorn on loopback over its own instance; ``cli`` runs the leaderboard command against it."""

    instance: Path
    env: dict[str, str]
    workers: int = 3
    #: The WSGI application gunicorn loads (a test may load a wrapper of the production app).
    app: str = "wsgi:app"
    #: Where gunicorn's own output goes (None: discarded).
    log_file: Path | None = None
    #: The loopback port to serve on (0: a free one, chosen at start).
    port: int = 0
    url: str = ""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    #: Whether a Celery worker serving the mail queue runs beside it (for tests that read mail).
    mail_worker: bool = False
    worker: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def from_template(
        cls, template: Path, root: Path, workers: int = 3, **settings: str
    ) -> LiveServer:
        """Copy the template instance into ``root`` and prepare a server for it.

        ``settings`` are extra environment variables of the server and its commands.
        """
        instance = root / "instance"
        shutil.copytree(template, instance)
        defaults = {
            "LEADERBOARD_SECRET_KEY": "live-test-secret",
            "LEADERBOARD_CLOCK_FILE": str(root / "clock"),
        }
        database_url = str(app_overrides(instance)["database_url"])
        env = server_env(instance, database_url, **{**defaults, **settings})
        return cls(instance=instance, env=env, workers=workers)

    @property
    def database_url(self) -> str:
        """Return the database the server uses."""
        return self.env["LEADERBOARD_DATABASE_URL"]

    @property
    def clock_file(self) -> Path:
        """Return the file the server reads its time from (absent: the real time)."""
        return Path(self.env["LEADERBOARD_CLOCK_FILE"])

    def set_clock(self, instant: str) -> None:
        """Move the server's clock to an ISO 8601 instant with zone."""
        # Replace the file whole so a request never reads it half-written.
        tmp = self.clock_file.with_name(self.clock_file.name + ".new")
        tmp.write_text(instant + "\n")
        os.replace(tmp, self.clock_file)

    def cli(self, *args: str) -> str:
        """Run ``leaderboard ARGS`` against the server's instance and return its output."""
        out = subprocess.run(
            [str(BIN / "leaderboard"), *args],
            env=self.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if out.returncode != 0:
            raise RuntimeError(f"leaderboard {' '.join(args)} failed: {out.stdout}{out.stderr}")
        return out.stdout

    def add_participant(self, team: str, email: str, password: str) -> None:
        """Create a team and a participant in it."""
        self.cli("create-team", team)
        self.cli(
            "create-user", email, "--role", "participant", "--team", team, "--password", password
        )

    def add_organizer(self, email: str, password: str) -> None:
        """Create an organizer."""
        self.cli("create-user", email, "--role", "organizer", "--password", password)

    def start(self) -> LiveServer:
        """Start gunicorn and wait until it answers."""
        self.url, self.process = start_gunicorn(
            self.env,
            workers=self.workers,
            app=self.app,
            timeout=120,
            log=self.log_file,
            port=self.port or None,
        )
        if self.mail_worker:
            log = (self.log_file or self.instance / "gunicorn.log").with_name("worker.log")
            self.worker = start_worker(self.env, log, "--queues", "mail")
        return self

    def wait_ready(self) -> None:
        """Wait until the server answers again with all its workers (e.g. after a crash)."""
        assert self.process is not None
        wait_until_serving(self.url, self.process, self.workers)

    def workers_pids(self) -> list[int]:
        """Return the pids of the worker processes."""
        assert self.process is not None
        return worker_pids(self.process.pid)

    def stop(self) -> None:
        """Stop gunicorn (and the mail worker)."""
        if self.worker is not None:
            stop_worker(self.worker)
        if self.process is not None:
            stop_gunicorn(self.process)
