"""`make run`'s own worker (no flag) makes a scheduled release when the server's clock passes it.

The server and its worker are started by the Makefile's ``run`` target on a copy of the test
instance, both reading their time from a clock file the test moves, as in a rehearsal. An
organizer schedules the release of hidden results on the phase page, a participant uploads,
the clock moves past the release time, and the public page shows the ranking once the worker
has released it; the dashboard says when the worker was last seen.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from bench._common import free_port
from tests.browser.conftest import (
    ORGANIZE_A,
    START,
    TASK_A,
    click_and_load,
    log_in,
    upload_run,
)
from tests.helpers.make_run import MakeRun, stop_group, wait_serving
from tests.live import BIN, REPO, LiveServer
from tests.runs import oracle_run, own_campaign

PASSWORD = "correct horse battery"
HIDDEN = "The results of phase test are hidden until the organizers release them."
#: The worker checks the campaign every minute: a bound on waiting, not an assertion.
RELEASE_SECONDS = 150


@pytest.fixture
def rehearsal(
    chromium: Browser, template_instance: Path, tmp_path: Path
) -> Iterator[tuple[MakeRun, LiveServer]]:
    """Run ``make run`` on a copy of the test instance whose clock file stands at START."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Log-ins last so long by the server's clock, which the test moves by a month.
    server = LiveServer.from_template(
        template_instance, tmp_path, LEADERBOARD_SESSION_HOURS=str(24 * 366)
    )
    server.set_clock(START)
    own_campaign(server)
    server.add_organizer("org@example.org", "organizer password")
    server.add_participant("Aurora", "alice@example.org", PASSWORD)
    port = free_port()
    stderr = tmp_path / "make-run.stderr"
    with (tmp_path / "make-run.stdout").open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            ["make", "--no-print-directory", "-o", str(BIN / ".installed"), "run",
             f"VENV={BIN.parent}", "HOST=127.0.0.1", f"PORT={port}"],
            cwd=REPO,
            env=server.env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )  # fmt: skip
    run = MakeRun(url=f"http://127.0.0.1:{port}", stderr=stderr, process=process)
    try:
        wait_serving(run)
        yield run, server
    finally:
        stop_group(process)


def reload_until_ranked(page: Page, run: MakeRun) -> None:
    """Reload the public page until it shows a ranking (the worker released the results)."""
    deadline = time.monotonic() + RELEASE_SECONDS
    while time.monotonic() < deadline:
        page.goto(TASK_A)
        if page.locator("table.ranking").count():
            return
        time.sleep(2)
    raise AssertionError(f"not released in {RELEASE_SECONDS} s:\n{run.stderr.read_text()[-4000:]}")


def test_make_runs_worker_releases_a_scheduled_phase_when_the_clock_passes_it(
    chromium: Browser,
    rehearsal: tuple[MakeRun, LiveServer],
    screenshot: Callable[..., Path],
) -> None:
    run, server = rehearsal
    contexts = []

    def open_page() -> Page:
        context = chromium.new_context(base_url=run.url, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(20_000)
        contexts.append(context)
        return context.new_page()

    try:
        org, alice, public = open_page(), open_page(), open_page()
        log_in(org, "org@example.org", "organizer password")
        # 2016-01-05: a test phase with hidden results, released at 2016-02-01 12:00 UTC.
        org.goto(ORGANIZE_A)
        click_and_load(org, org.locator("#phase-page-link"))
        form = org.locator("#phase-form")
        form.get_by_label("Phase (an existing name edits it").fill("test")
        form.get_by_label("Evaluation set").select_option("test")
        form.locator("#start").fill("2016-01-01T00:00")
        form.locator("#end").fill("2016-01-31T23:59")
        form.locator("#release_at").fill("2016-02-01T12:00")
        form.locator('select[name="results"]').select_option("hidden")
        click_and_load(org, form.get_by_role("button", name="Save phase"))
        expect(org.locator(".flash.info")).to_have_text("Phase test saved.")
        row = org.locator("#phase-list tbody tr", has_text="test")
        expect(row).to_contain_text("hidden; released at 2016-02-01 12:00:00 UTC")

        log_in(alice, "alice@example.org", PASSWORD)
        upload_run(alice, oracle_run())
        expect(alice.get_by_text("The run was accepted and scored.")).to_be_visible()
        public.goto(TASK_A)
        expect(public.locator("p.hidden-results")).to_have_text(HIDDEN)
        expect(public.locator("table.ranking")).to_have_count(0)

        # The dashboard: make run's worker is alive, so no warning.
        org.goto("/organizer/")
        expect(org.locator("#worker-seen")).to_contain_text("Worker last seen")
        expect(org.locator("#worker-warning")).to_have_count(0)
        screenshot(org, "dashboard")

        # A minute past the release time: the worker (no flag) releases the results.
        server.set_clock("2016-02-01T12:01:00+00:00")
        reload_until_ranked(public, run)
        expect(public.locator("p.hidden-results")).to_have_count(0)
        expect(public.locator("table.ranking tbody tr").first).to_contain_text("Aurora")
        screenshot(public, "released")
        org.goto(f"{ORGANIZE_A}/phase")
        expect(
            org.locator("#phase-list tbody tr", has_text="test").locator("td").nth(4)
        ).to_have_text("visible")
    finally:
        for context in contexts:
            context.close()
