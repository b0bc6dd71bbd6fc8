"""A real gunicorn serving a copy of the test template instance, for race, crash and browser tests."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import app_overrides

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    """Gunicorn on loopback over its own instance; ``cli`` runs the leaderboard command against it."""

    instance: Path
    workers: int = 3
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: The WSGI application gunicorn loads (a test may load a wrapper of the production app).
    app: str = "wsgi:app"

    @classmethod
    def from_template(cls, template: Path, root: Path, workers: int = 3) -> LiveServer:
        """Copy the template instance into ``root`` and prepare a server for it."""
        instance = root / "instance"
        shutil.copytree(template, instance)
        overrides = app_overrides(instance)
        server = cls(instance=instance, workers=workers)
        server.env = {
            **os.environ,
            "LEADERBOARD_INSTANCE_DIR": str(instance),
            "LEADERBOARD_DATABASE_URL": str(overrides["database_url"]),
            "LEADERBOARD_STORAGE_DIR": str(instance / "storage"),
            "LEADERBOARD_SECRET_KEY": "live-test-secret",
            "LEADERBOARD_CLOCK_FILE": str(root / "clock"),
        }
        return server

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def database_url(self) -> str:
        """Return the database the server uses."""
        return self.env["LEADERBOARD_DATABASE_URL"]

    def set_time(self, iso: str) -> None:
        """Move the server's clock."""
        Path(self.env["LEADERBOARD_CLOCK_FILE"]).write_text(iso)

    def cli(self, *args: str) -> str:
        """Run ``leaderboard ARGS`` against the server's instance and return its output."""
        out = subprocess.run(
            [str(BIN / "leaderboard"), *args], env=self.env, capture_output=True, text=True
        )
        if out.returncode != 0:
            raise RuntimeError(f"leaderboard {' '.join(args)} failed: {out.stdout}{out.stderr}")
        return out.stdout

    def start(self) -> LiveServer:
        """Start gunicorn and wait until it answers."""
        self.process = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "--workers", str(self.workers),
                "--timeout", "120",
                "--bind", f"127.0.0.1:{self.port}",
                self.app,
            ],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30) -> None:
        """Wait until /healthz answers 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("gunicorn did not become ready")

    def workers_pids(self) -> list[int]:
        """Return the pids of the worker processes."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(p) for p in children.read_text().split()]

    def stop(self) -> None:
        """Stop gunicorn."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
