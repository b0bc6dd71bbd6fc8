"""The message form: no task chosen at first, and the subtask list follows the chosen task."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LiveServer, log_in

PASSWORD = "organizer password"


def enabled_subtasks(page: Page) -> list[str]:
    """Return the subtask options a reader can choose now, in order."""
    return page.eval_on_selector_all(
        "#subtask option",
        "os => os.filter(o => !o.disabled && !(o.parentElement.disabled)).map(o => o.value)",
    )


def test_the_subtask_list_offers_only_the_chosen_tasks_subtasks(
    live_server: LiveServer, page: Page
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    log_in(page, "org@example.org", PASSWORD)
    page.goto("/organizer/messages/new")
    expect(page.locator("#task")).to_have_value("")
    assert enabled_subtasks(page) == [""]
    page.locator("#task").select_option("semeval2016-task3")
    assert enabled_subtasks(page) == ["", "A", "B", "C", "D"]
    page.locator("#subtask").select_option("B")
    assert_accessible(page, "the message form")
    # Another task: the subtask of the first one is no longer chosen.
    page.locator("#task").select_option("semeval2016-task1")
    assert enabled_subtasks(page) == ["", "en", "es-en"]
    expect(page.locator("#subtask")).to_have_value("")
