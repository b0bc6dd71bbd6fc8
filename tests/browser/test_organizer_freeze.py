"""An organizer imports runs, adds the baselines and freezes; the public page shows the result."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    BASELINES_A,
    CONSTANT_FALSE_A,
    MEASURES,
    ORACLE_TEST_A,
    ORGANIZE_A,
    TASK_A,
    LiveServer,
    click_and_load,
    log_in,
    ranking_rows,
)
from tests.runs import constant_run, oracle_run

PASSWORD = "organizer password"


def import_run(page: Page, team: str, data: bytes) -> None:
    """Import a primary run for a team with the organizer page's import form."""
    form = page.locator("section#import form")
    form.get_by_label("Evaluation set").select_option("test")
    form.get_by_label("Team (created if missing)").fill(team)
    form.get_by_label("Slot").select_option("primary")
    form.locator('input[type="file"][name="file"]').set_input_files(
        {"name": "subtask_A_primary.txt", "mimeType": "text/plain", "buffer": data}
    )
    click_and_load(page, form.get_by_role("button", name="Import"))


def test_organizer_adds_baselines_and_freezes(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    log_in(page, "org@example.org", PASSWORD)
    page.get_by_role("link", name="Organizer").click()
    page.get_by_role("row", name="semeval2016-task3 A test").get_by_role("link", name="A").click()
    expect(page.locator("h1")).to_have_text(
        "SemEval-2016 Task 3: Community Question Answering · subtask A"
    )

    import_run(page, "Aurora", oracle_run())
    expect(page.locator(".flash.info")).to_have_text("Imported run 1 for Aurora (primary).")
    import_run(page, "Borealis", constant_run())
    expect(page.locator(".flash.info")).to_have_text("Imported run 2 for Borealis (primary).")

    click_and_load(page, page.locator(f'form[action="{ORGANIZE_A}/test/baselines"] button'))
    expect(page.locator(".flash.info")).to_have_text(
        "4 baselines added to semeval2016-task3 A (test)."
    )
    click_and_load(page, page.locator(f'form[action="{ORGANIZE_A}/test/freeze"] button'))
    expect(page.locator(".flash.info")).to_contain_text("Freeze of test queued (job 1)")
    expect(page.locator("p.job.queued")).to_contain_text("Freeze queued (job 1")
    # The worker computes the official table's analysis, then freezes it.
    assert live_server.cli("worker", "--once") == "freeze 1: done\n"
    page.reload()
    expect(page.locator("section#sets")).to_contain_text("Official ranking frozen at 2016-01-05")
    # Frozen once: the freeze button is gone and verify is offered instead.
    expect(page.locator(f'form[action="{ORGANIZE_A}/test/freeze"]')).to_have_count(0)
    expect(page.locator(f'form[action="{ORGANIZE_A}/test/verify"] button')).to_have_text(
        "Verify frozen ranking"
    )
    screenshot(page, "organizer")

    page.get_by_role("link", name="public page").click()
    expect(page).to_have_url(live_server.url + TASK_A)
    expect(page.locator("p.status.frozen")).to_contain_text(
        "Official ranking, frozen at 2016-01-05 12:00:00 UTC."
    )
    expect(page.locator("table.ranking thead th.measure")).to_have_text(MEASURES)
    # The frozen analysis: each value's 95 % interval, and the note on clusters.
    first_ci = page.locator("table.ranking tbody tr").first.locator(".ci").first
    expect(first_ci).to_have_text(re.compile(r"^\[\d+\.\d\d, \d+\.\d\d\]$"))
    expect(page.locator("body")).to_contain_text("Rules separate significance clusters")
    rows = ranking_rows(page)
    # Primary rows: the rank, the label, then every value with its rank as a <sub>.
    assert rows[0] == [("1", None), ("Aurora-primary", None)] + [(v, "1") for v in ORACLE_TEST_A]
    assert rows[1] == [("2", None), ("Borealis-primary", None)] + [
        (v, "2") for v in CONSTANT_FALSE_A
    ]
    # Baseline rows come last: no rank, no subscripts, "—" where a measure is not shown.
    assert rows[2:] == [
        [("", None), (label, None)] + [(v, None) for v in values] for label, values in BASELINES_A
    ]
    assert page.locator("table.ranking tbody tr.row-baseline").count() == 4
    assert page.locator("table.ranking tbody sub").count() == 14
    screenshot(page)
