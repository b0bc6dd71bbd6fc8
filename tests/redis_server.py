"""Start a Redis server of the test's own on a free loopback port, keeping its data on disk."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.workers import terminate


@dataclass
class RedisServer:
    """A running redis-server: its port, its data folder and its process."""

    port: int
    data_dir: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        """Return the broker URL of database 0."""
        return f"redis://127.0.0.1:{self.port}/0"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start(data_dir: Path, port: int | None = None, timeout: float = 20.0) -> RedisServer:
    """Start redis-server with an append-only file in ``data_dir``; raise why not."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server on PATH (Debian package redis-server)")
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    # Every write is logged before it is answered: a restart loses nothing the broker took.
    args = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(data_dir),
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
        "--daemonize",
        "no",
    ]
    log = (data_dir / "redis.log").open("ab")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    server = RedisServer(port, data_dir, process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        if _answers(port):
            return server
        time.sleep(0.1)
    stop(server)
    raise RuntimeError(f"redis-server did not answer within {timeout:.0f} s")


def stop(server: RedisServer) -> None:
    """Stop the server (it writes its append-only file first) and wait for it."""
    terminate(server.process)


def restart(server: RedisServer) -> RedisServer:
    """Stop the server and start it again on the same port with the same data."""
    stop(server)
    return start(server.data_dir, server.port)
