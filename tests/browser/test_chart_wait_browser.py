"""A progress chart not drawn yet is announced on the subtask page, then put in place once stored."""

from __future__ import annotations

from playwright.sync_api import Page, Route, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    POST_EVALUATION,
    TASK_A,
    LiveServer,
    click_and_load,
    log_in,
    upload_run,
)
from tests.runs import oracle_run

PASSWORD = "correct horse battery"
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
    '<rect width="40" height="20" fill="#369"/></svg>'
)


def test_the_page_announces_the_chart_then_shows_it_without_a_reload(
    live_server: LiveServer, page: Page
) -> None:
    live_server.add_participant("Aurora", "alice@example.org", PASSWORD)
    live_server.set_clock(POST_EVALUATION)
    log_in(page, "alice@example.org", PASSWORD)
    page.goto(TASK_A)
    click_and_load(page, page.locator("#upload-link"))
    upload_run(page, oracle_run(), name="oracle")
    expect(page.get_by_text("The run was accepted and scored.")).to_be_visible()
    # No worker draws here: the server answers "being drawn" (404) until one would. The chart
    # route is answered by the test instead: twice still being drawn, then the stored chart.
    asked: list[str] = []

    def chart(route: Route) -> None:
        asked.append(route.request.url)
        if len(asked) <= 2:
            route.fulfill(status=404, body="This chart is being drawn.", content_type="text/plain")
        else:
            route.fulfill(status=200, body=SVG, content_type="image/svg+xml")

    page.route("**/progress.svg*", chart)
    page.goto(TASK_A)
    waiting = page.locator("#progress-drawing")
    expect(waiting).to_contain_text("The chart is being drawn")
    expect(page.locator("#progress img")).to_have_count(0)
    assert_accessible(page, "the subtask page while its chart is drawn")
    page.evaluate("window.notReloaded = true")
    expect(page.locator("#progress img")).to_be_visible(timeout=30_000)
    expect(waiting).to_have_count(0)
    assert page.evaluate("window.notReloaded") is True
    assert len(asked) >= 3 and all("set=test" in url for url in asked)
    alt = page.locator("#progress img").get_attribute("alt") or ""
    assert alt.startswith("Each team's best test-set score on the official measure so far")
