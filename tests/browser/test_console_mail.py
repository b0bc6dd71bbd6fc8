"""A fresh install under ``make run``: the sign-up mail shows on the server's standard error.

The server is started by the Makefile's own ``run`` target (gunicorn with gunicorn.conf.py, the
worker beside it, the base URL ``make run`` exports) on a copy of the test instance, with the
default console mail transport. The test signs up in the browser, reads the verification link
from the server's standard error as a newcomer reads their terminal, follows it and logs in.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from bench._common import free_port
from tests.browser.conftest import BOOT_SECONDS, click_and_load
from tests.live import BIN, REPO, LiveServer

EMAIL = "newcomer@example.org"
PASSWORD = "a long and careful secret 7"
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


def _wait_serving(run: MakeRun) -> None:
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


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop make, its shell, the worker and gunicorn: the process group this test started."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def make_run(chromium: Browser, template_instance: Path, tmp_path: Path) -> Iterator[MakeRun]:
    """Run ``make run`` as a newcomer does, on a copy of the test instance and a free port."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # The instance's settings only: no mail URL (console, the default) and no base URL.
    env = LiveServer.from_template(template_instance, tmp_path).env
    env.pop("LEADERBOARD_CLOCK_FILE", None)
    port = free_port()
    stderr = tmp_path / "make-run.stderr"
    with (tmp_path / "make-run.stdout").open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [
                "make",
                "--no-print-directory",
                # The venv is installed already (this test runs in it): no install step.
                "-o",
                str(BIN / ".installed"),
                "run",
                f"VENV={BIN.parent}",
                "HOST=127.0.0.1",
                f"PORT={port}",
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group, stopped whole at the end
        )
    run = MakeRun(url=f"http://127.0.0.1:{port}", stderr=stderr, process=process)
    try:
        _wait_serving(run)
        yield run
    finally:
        _stop(process)


def test_sign_up_under_make_run_reads_the_link_from_standard_error(
    chromium: Browser, make_run: MakeRun, screenshot: Callable[..., Path]
) -> None:
    context = chromium.new_context(base_url=make_run.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        page.goto("/signup")
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=display_name]", "Newcomer")
        page.fill("input[name=password]", PASSWORD)
        page.fill("input[name=password_confirm]", PASSWORD)
        click_and_load(page, page.get_by_role("button", name="Sign up"))
        expect(page.get_by_text("Check your mail", exact=False).first).to_be_visible()
        text, link = make_run.mail_link(EMAIL)
        # The whole mail: headers, body and a link to the address make run serves.
        assert "From: leaderboard@localhost" in text and "Subject: [" in text
        assert "Open this link within 7 days" in text
        assert link.startswith(make_run.url + "/verify/"), link
        page.goto(link)
        click_and_load(page, page.get_by_role("button", name="Confirm my address"))
        expect(page).to_have_url(re.compile(r"/login"))
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=password]", PASSWORD)
        click_and_load(page, page.locator("main form button[type=submit]").first)
        expect(page.get_by_role("link", name="Account")).to_be_visible()
        screenshot(page, "logged-in")
    finally:
        context.close()
