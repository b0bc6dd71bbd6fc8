"""The task page's tabs switch (by click, keyboard and address), the schedule shows the reader's
local times, and the subtask page's countdown ticks; without JavaScript every section shows."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LiveServer
from tests.shared_data import REPO_ROOT

EXAMPLE = REPO_ROOT / "docs" / "examples" / "task-page" / "task.toml"
TASK = "/tasks/example-task-page"
PANELS = ("tab-overview", "tab-evaluation", "tab-data", "tab-terms")


def iso(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def shown(page: Page) -> list[str]:
    return [p for p in PANELS if page.locator(f"#{p}").is_visible()]


def test_tabs_switch_and_the_schedule_counts_down(
    chromium: Browser, live_server: LiveServer, screenshot: Callable[..., Path]
) -> None:
    # The reader's clock is the real one: the server's must agree for the countdown to.
    now = datetime.now(UTC).replace(microsecond=0)
    live_server.set_clock(now.isoformat())
    live_server.cli("add-task", str(EXAMPLE))
    deadline = now + timedelta(minutes=30)
    live_server.cli("phase", "example-task-page", "A", "test",
                    "--start", iso(now - timedelta(days=1)), "--end", iso(deadline))  # fmt: skip

    context = chromium.new_context(
        base_url=live_server.url,
        viewport={"width": 1280, "height": 900},
        timezone_id="Asia/Tokyo",
        locale="en-US",
    )
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        page.goto(TASK)
        tablist = page.get_by_role("tablist", name="Task sections")
        expect(tablist).to_be_visible()
        expect(page.get_by_role("tab")).to_have_count(4)
        overview = page.get_by_role("tab", name="Overview")
        expect(overview).to_have_attribute("aria-selected", "true")
        assert shown(page) == ["tab-overview"]

        page.get_by_role("tab", name="Terms").click()
        expect(page.locator("#tab-terms")).to_be_visible()
        expect(page.get_by_role("tabpanel")).to_contain_text("to use it for research only")
        assert shown(page) == ["tab-terms"]
        assert page.url.endswith("#tab-terms")
        expect(page.get_by_role("tab", name="Terms")).to_have_attribute("aria-selected", "true")
        expect(overview).to_have_attribute("aria-selected", "false")

        # Keyboard: the arrow keys move between tabs, Home goes to the first.
        page.keyboard.press("ArrowLeft")
        expect(page.get_by_role("tab", name="Data")).to_be_focused()
        expect(page.locator("#tab-data")).to_be_visible()
        assert shown(page) == ["tab-data"]
        page.keyboard.press("Home")
        expect(overview).to_be_focused()
        assert shown(page) == ["tab-overview"]

        # The schedule below the tabs: UTC from the server, the reader's (Tokyo) time by script.
        deadline_time = page.locator(f'#schedule time[datetime="{iso(deadline)}"]')
        expect(deadline_time).to_have_text(deadline.strftime("%Y-%m-%d %H:%M:%S UTC"))
        local = page.locator("#schedule .local-time").last
        expect(local).to_contain_text("GMT+9")
        tokyo = deadline + timedelta(hours=9)
        expect(local).to_contain_text(f"{tokyo.day}, {tokyo.year}")
        screenshot(page, "task-page")
        assert_accessible(page, "the task page")

        # The address chooses the tab when the page opens.
        page.goto(f"{TASK}#tab-evaluation")
        expect(page.locator("#tab-evaluation")).to_be_visible()
        assert shown(page) == ["tab-evaluation"]
        expect(page.locator("#tab-evaluation table")).to_contain_text("macro-F1")

        page.goto(f"{TASK}/A")
        expect(page.locator("#uploads-open")).to_have_text("open")
        countdown = page.locator("#countdown")
        expect(countdown).to_have_attribute("data-deadline", iso(deadline))
        # The script words it with seconds in the last hour, and ticks.
        expect(countdown).to_have_text(re.compile(r"^(29|30) minutes \d+ seconds? left$"))
        first = countdown.inner_text()
        expect(countdown).not_to_have_text(first, timeout=5_000)
        expect(page.locator("#schedule .local-time").first).to_contain_text("GMT+9")
        screenshot(page, "subtask-page")
        assert_accessible(page, "the subtask page")
    finally:
        context.close()

    # Without JavaScript: every section shows under the links, and the server's countdown text.
    plain = chromium.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = plain.new_page()
        page.goto(TASK)
        assert shown(page) == list(PANELS)
        expect(page.locator("nav.tabs a")).to_have_count(4)
        expect(page.get_by_role("tab")).to_have_count(0)
        page.goto(f"{TASK}/A")
        expect(page.locator("#countdown")).to_have_text(re.compile(r"^(29|30) minutes left$"))
        expect(page.locator("#schedule .local-time")).to_have_count(0)
        screenshot(page, "without-javascript")
    finally:
        plain.close()
