"""An Arabic team name displays right to left in the results table; a Latin one left to right."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.conftest import POST_EVALUATION, TASK_A, LiveServer, log_in, upload_run
from tests.runs import constant_run, oracle_run

ARABIC_TEAM = "فريق البحث"
PASSWORD = "correct horse battery"

#: Whether the first and last characters of an element's text are laid out right to left:
#: the first one's box lies to the right of the last one's.
FIRST_CHAR_RIGHT_OF_LAST = """element => {
    const text = element.firstChild;
    const box = i => { const r = document.createRange(); r.setStart(text, i);
                       r.setEnd(text, i + 1); return r.getBoundingClientRect(); };
    return box(0).left > box(text.length - 1).left;
}"""


def test_arabic_team_name_displays_right_to_left(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path], tmp_path: Path
) -> None:
    live_server.add_participant(ARABIC_TEAM, "arabic@example.org", PASSWORD)
    live_server.set_clock(POST_EVALUATION)
    latin_run = tmp_path / "subtask_A_primary.txt"
    latin_run.write_bytes(constant_run())
    live_server.cli(
        "import-runs", "semeval2016-task3", "A", "--team", "Aurora", "--slot", "primary",
        str(latin_run),
    )  # fmt: skip
    log_in(page, "arabic@example.org", PASSWORD)
    expect(page.locator("header.site bdi").first).to_have_text(ARABIC_TEAM)
    upload_run(page, oracle_run())
    expect(page.get_by_text("The run was accepted and scored.")).to_be_visible()

    page.goto(TASK_A)
    arabic = page.locator("table.ranking tbody bdi", has_text=ARABIC_TEAM)
    latin = page.locator("table.ranking tbody bdi", has_text="Aurora")
    expect(arabic).to_have_text(f"{ARABIC_TEAM}-primary")
    expect(latin).to_have_text("Aurora-primary")
    # The names sit in cells marked dir="auto", each isolated in its own <bdi>.
    for name in (arabic, latin):
        cell = name.locator("xpath=ancestor::*[self::td or self::th][1]")
        assert cell.get_attribute("dir") == "auto"
    assert arabic.evaluate("e => e.matches(':dir(rtl)')") is True
    assert latin.evaluate("e => e.matches(':dir(ltr)')") is True
    # What a reader sees: the Arabic name runs from right to left, the Latin one does not.
    assert arabic.evaluate(FIRST_CHAR_RIGHT_OF_LAST) is True
    assert latin.evaluate(FIRST_CHAR_RIGHT_OF_LAST) is False
    # The Arabic run (the oracle) ranks first, the Latin one second.
    first, second = page.locator("table.ranking tbody tr").all()[:2]
    expect(first).to_contain_text(ARABIC_TEAM)
    expect(second).to_contain_text("Aurora-primary")
    screenshot(page)
