"""An organizer creates a task from a zip in the browser: problems first, then preview, confirm."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LiveServer, click_and_load, log_in
from tests.helpers.browser_forms import EXAMPLE, bundle, choose

PASSWORD = "organizer password"


def test_organizer_creates_a_task_from_a_zip(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    log_in(page, "org@example.org", PASSWORD)
    page.get_by_role("link", name="Organizer").click()
    click_and_load(page, page.get_by_role("link", name="New task"))
    expect(page.locator("h1")).to_have_text("New task")
    assert_accessible(page, "the new task form")

    # Two bad gold lines: both are listed with their file and line; nothing is hosted.
    gold = (EXAMPLE / "gold.tsv").read_bytes()
    bad = gold.replace(b"tw-002\tneutral", b"tw-002\tbogus").replace(
        b"tw-004\tnegative", b"tw-004\tworse"
    )
    choose(page, bundle(bad))
    problems = page.locator("#problems li")
    expect(problems).to_have_count(2)
    expect(problems.nth(0)).to_contain_text("gold.tsv, line 3: subtask A (test): label 'bogus'")
    expect(problems.nth(1)).to_contain_text("gold.tsv, line 5: subtask A (test): label 'worse'")
    expect(page.locator("#task-preview")).to_have_count(0)
    screenshot(page, "problems")
    assert_accessible(page, "the problems of a refused task")

    choose(page, bundle(gold))
    preview = page.locator("#task-preview")
    expect(preview).to_contain_text("Example message polarity classification")
    expect(preview.locator("#preview-table-style")).to_have_text("ranked")
    expect(preview.locator('[data-set="test"]')).to_contain_text("gold gold.tsv")
    expect(preview.locator("tr[data-measure]")).to_have_count(5)
    expect(preview.locator('tr[data-measure="macro-F1"] td').nth(2)).to_have_text("yes")
    screenshot(page, "preview")
    assert_accessible(page, "the task preview")

    # Cancel drops the staged upload; the form is shown again, and the same zip previews anew.
    click_and_load(page, page.get_by_role("button", name="Cancel"))
    expect(page.locator(".flash.info")).to_contain_text("The upload was cancelled")
    expect(page.locator("#task-preview")).to_have_count(0)
    choose(page, bundle(gold))
    expect(page.locator("#task-preview")).to_contain_text("Example message polarity")

    click_and_load(page, page.get_by_role("button", name="Add the task"))
    expect(page).to_have_url(live_server.url + "/organizer/tasks/example-sentiment/A")
    expect(page.locator(".flash.info")).to_contain_text("Task example-sentiment added.")
    screenshot(page, "added")
    assert_accessible(page, "the new task's subtask page")
    page.goto("/tasks/example-sentiment")
    expect(page.locator("h1")).to_contain_text("Example message polarity classification")
    screenshot(page, "task-page")
    assert_accessible(page, "the new task's page")
