"""Start `leaderboard worker` (a Celery worker) as a process group of its own, and stop it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def start_worker(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``leaderboard worker ARGS`` with ``env``; its output goes to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(BIN / "leaderboard"), "worker", *args],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            # Its own group: SIGKILL reaches the whole tree (the pool's children too).
            start_new_session=True,
        )


def terminate(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Stop a server process with SIGTERM and wait for it, killing it if it does not stop."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def kill_tree(process: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the worker's whole process group and wait for the worker."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    """Stop a worker as an operator would (SIGTERM: a warm shutdown), killing it if it hangs."""
    if process.poll() is None:
        kill_tree(process, signal.SIGTERM)
    with contextlib.suppress(ProcessLookupError):  # what the pool left behind
        os.killpg(process.pid, signal.SIGKILL)


def wait_for(
    check: Callable[[], T | None], timeout: float, what: str, log: Path | None = None
) -> T:
    """Poll ``check`` until it returns something; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found is not None and found is not False:
            return found
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
    raise AssertionError(f"{what}: not within {timeout:.0f} s\n{tail}")
