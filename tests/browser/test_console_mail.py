"""A fresh install under ``make run``: the sign-up mail shows on the server's standard error.

The server is started by the Makefile's own ``run`` target (gunicorn with gunicorn.conf.py, the
worker beside it, the base URL ``make run`` exports) on a copy of the test instance, with the
default console mail transport. The test signs up in the browser, reads the verification link
from the server's standard error as a newcomer reads their terminal, follows it and logs in.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from bench._common import free_port
from tests.browser.conftest import click_and_load
from tests.helpers.make_run import MakeRun, stop_group, wait_serving
from tests.live import BIN, REPO, LiveServer

EMAIL = "newcomer@example.org"
PASSWORD = "a long and careful secret 7"


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
        wait_serving(run)
        yield run
    finally:
        stop_group(process)


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
