"""``make run`` in a process group of its own: wait until it serves, read its mail, stop it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser.conftest import BOOT_SECONDS

#: How long a mail may take to show on standard error; a bound on waiting, not an assertion.
MAIL_SECONDS = 30


@dataclass
class MakeRun:
    """``make run`` serving a copy of the test instance; its standard error goes to a file."""

    url: str
    stderr: Path
    process: subprocess.Popen[bytes]

    def mail_link(self, email: str) -> tuple[str, str]:
        """Wait for the console mail to ``email``; return the mail's text and its link."""
        deadline = time.monotonic() + MAIL_SECONDS
        pattern = re.compile(
            r"----- mail \(console transport[^\n]*\n(.*?)----- end of mail -----", re.DOTALL
        )
        while time.monotonic() < deadline:
            for text in pattern.findall(self.stderr.read_text(errors="replace")):
                if f"To: {email}\n" in text:
                    link = re.search(r"https?://\S+/verify/\S+", text)
                    assert link is not None, text
                    return text, link.group(0)
            time.sleep(0.2)
        raise AssertionError(f"no mail to {email} on standard error:\n{self.stderr.read_text()}")


def wait_serving(run: MakeRun) -> None:
    deadline = time.monotonic() + BOOT_SECONDS
    while time.monotonic() < deadline:
        if run.process.poll() is not None:
            pytest.fail(f"make run exited with {run.process.returncode}:\n{run.stderr.read_text()}")
        try:
            with urllib.request.urlopen(run.url + "/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"make run did not serve {run.url} in {BOOT_SECONDS} s:\n{run.stderr.read_text()}")


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop make, its shell, the worker and gunicorn: the process group this test started."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
