"""A participant sees the countdown on the subtask page, uploads from it and finds the run in the
team's table and ranked."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    POST_EVALUATION,
    TASK_A,
    LiveServer,
    click_and_load,
    log_in,
    ranking_rows,
    upload_run,
)
from tests.runs import oracle_run

PASSWORD = "correct horse battery"


def test_upload_from_the_subtask_page_then_see_the_row_and_the_rank(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_participant("Aurora", "alice@example.org", PASSWORD)
    live_server.set_clock(POST_EVALUATION)
    # A phase whose deadline lies 3 days 6 hours ahead; the browser's clock is the server's.
    live_server.cli("phase", "semeval2016-task3", "A", "final", "--set", "test",
                    "--start", "2016-02-04T00:00:00Z", "--end", "2016-02-08T18:00:00Z")  # fmt: skip
    page.clock.set_fixed_time(datetime.fromisoformat(POST_EVALUATION))
    log_in(page, "alice@example.org", PASSWORD)
    page.goto(TASK_A)
    expect(page.locator("#uploads-open")).to_have_text("open")
    countdown = page.locator("#countdown")
    expect(countdown).to_have_attribute("data-deadline", "2016-02-08T18:00:00Z")
    expect(countdown).to_have_text("3 days 6 hours left")
    expect(page.locator("#our-submissions tbody tr")).to_have_count(0)
    expect(page.locator("#quota")).to_contain_text("no quota")
    screenshot(page, "before")
    assert_accessible(page, "the subtask page")

    click_and_load(page, page.locator("#upload-link"))
    expect(page.get_by_role("heading", name="Upload a run for subtask A")).to_be_visible()
    assert_accessible(page, "the upload form")
    upload_run(page, oracle_run(), name="oracle from the page")
    expect(page.get_by_text("The run was accepted and scored.")).to_be_visible()
    run_id = re.search(r"/runs/(\d+)", page.url)
    assert run_id is not None
    rank = page.locator("#run-rank")
    expect(rank).to_have_text(re.compile(r"^\d+$"))
    shown_rank = rank.inner_text()
    screenshot(page, "verdict")
    assert_accessible(page, "the verdict page")

    page.goto(TASK_A)
    # The public table ranks the run where the verdict said.
    ours = [row for row in ranking_rows(page) if row[1][0] == "Aurora-primary"]
    assert len(ours) == 1 and ours[0][0][0] == shown_rank
    row = page.locator(f'#our-submissions tbody tr[data-run-id="{run_id.group(1)}"]')
    expect(row).to_be_visible()
    expect(row).to_contain_text("oracle from the page")
    expect(row.locator("td.run-rank")).to_have_text(shown_rank)
    expect(row.locator("td.run-score")).to_have_text("MAP 96.33")
    expect(page.locator("#our-submissions tbody tr")).to_have_count(1)
    screenshot(page, "our-submissions")
    assert_accessible(page, "the subtask page with the team's run")
    # On a phone the section fits the screen: its wide table scrolls inside its own box.
    page.set_viewport_size({"width": 390, "height": 844})
    fits = page.evaluate(
        """() => {
            const section = document.querySelector('#our-team');
            const box = document.querySelector('#our-submissions').parentElement;
            return [section.scrollWidth <= section.clientWidth,
                    getComputedStyle(box).overflowX, box.clientWidth <= 390];
        }"""
    )
    assert fits == [True, "auto", True]
    screenshot(page, "our-submissions-390")
    page.set_viewport_size({"width": 1280, "height": 900})

    # Withdrawn from the table, the run stays listed, unranked, and the page says so.
    click_and_load(page, row.get_by_role("button", name=f"Withdraw run {run_id.group(1)}"))
    expect(page.get_by_text(f"Run {run_id.group(1)} was withdrawn")).to_be_visible()
    expect(row.locator("td.run-status")).to_have_text("withdrawn (not ranked)")
    expect(row.locator("td.run-rank")).to_have_text("—")
    screenshot(page, "withdrawn")
