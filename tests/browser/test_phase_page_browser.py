"""An organizer edits a phase on the phase page: date-time inputs in a chosen zone, a scheduled
release set and cleared, a refused time; the public schedule shows the saved deadline in UTC."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import ORGANIZE_A, TASK_A, LiveServer, click_and_load, log_in

PASSWORD = "organizer password"


def test_an_organizer_edits_a_phase_in_paris_time_with_a_scheduled_release(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    log_in(page, "org@example.org", PASSWORD)
    page.goto(ORGANIZE_A)
    click_and_load(page, page.locator("#phase-page-link"))
    form = page.locator("#phase-form")
    form.get_by_label("Phase (an existing name edits it").fill("final")
    form.get_by_label("Evaluation set").select_option("test")
    form.get_by_label("Time zone").fill("Europe/Paris")
    # Paris is UTC+1 in March, UTC+2 in July; the script shows each instant in UTC as typed.
    form.locator("#start").fill("2016-03-01T09:00")
    form.locator("#end").fill("2016-07-01T18:30")
    form.locator("#release_at").fill("2016-07-08T12:00")
    expect(page.locator("#start-utc")).to_have_text("= 2016-03-01 08:00 UTC")
    expect(page.locator("#end-utc")).to_have_text("= 2016-07-01 16:30 UTC")
    expect(page.locator("#release_at-utc")).to_have_text("= 2016-07-08 10:00 UTC")
    form.locator('select[name="results"]').select_option("hidden")
    screenshot(page, "filled")
    assert_accessible(page, "the phase page")
    click_and_load(page, form.get_by_role("button", name="Save phase"))

    expect(page.locator(".flash.info")).to_have_text("Phase final saved.")
    assert page.url.endswith("/phase?name=final&zone=Europe/Paris")
    row = page.locator("#phase-list tbody tr", has_text="final")
    expect(row.locator('time[datetime="2016-03-01T08:00:00Z"]')).to_be_visible()
    expect(row.locator('time[datetime="2016-07-01T16:30:00Z"]')).to_be_visible()
    expect(row).to_contain_text("hidden; released at 2016-07-08 10:00:00 UTC")
    # The form shows the saved phase again, in Paris time.
    expect(page.locator("#end")).to_have_value("2016-07-01T18:30")
    expect(page.locator("#release_at")).to_have_value("2016-07-08T12:00")
    screenshot(page, "saved")
    assert_accessible(page, "the saved phase")

    # A release time the Paris clocks skip is refused; nothing changes.
    page.locator("#release_at").fill("2016-03-27T02:30")
    click_and_load(page, form.get_by_role("button", name="Save phase"))
    expect(page.locator("#phase-error")).to_contain_text("does not exist in Europe/Paris")
    screenshot(page, "refused")
    assert_accessible(page, "the refused phase")
    page.goto(f"{ORGANIZE_A}/phase?name=final&zone=Europe/Paris")
    expect(page.locator("#release_at")).to_have_value("2016-07-08T12:00")

    # The box clears the scheduled release.
    page.get_by_label("No scheduled release (clear it)").check()
    click_and_load(page, form.get_by_role("button", name="Save phase"))
    expect(page.locator(".flash.info")).to_have_text("Phase final saved.")
    expect(page.locator("#release_at")).to_have_value("")
    expect(row.locator("td").nth(4)).to_have_text("hidden")
    screenshot(page, "cleared")

    # The public schedule shows the deadline in UTC: in the phase list and as the next deadline.
    page.goto(TASK_A)
    expect(page.locator('#schedule time[datetime="2016-07-01T16:30:00Z"]')).to_have_count(2)
    expect(page.locator("#schedule .next-deadline")).to_contain_text("phase final")
    screenshot(page, "schedule")


def test_choosing_berlin_time_moves_nothing_and_an_edited_deadline_is_read_there(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    log_in(page, "org@example.org", PASSWORD)
    page.goto(f"{ORGANIZE_A}/phase?zone=UTC")
    form = page.locator("#phase-form")
    form.get_by_label("Phase (an existing name edits it").fill("final")
    form.get_by_label("Evaluation set").select_option("test")
    form.locator("#start").fill("2016-03-01T09:00")
    form.locator("#end").fill("2016-07-01T18:30")
    click_and_load(page, form.get_by_role("button", name="Save phase"))
    expect(page.locator(".flash.info")).to_have_text("Phase final saved.")
    row = page.locator("#phase-list tbody tr", has_text="final")

    # Choosing Berlin shows the same instants in Berlin time (UTC+1 in March, UTC+2 in July).
    form.get_by_label("Time zone").fill("Europe/Berlin")
    expect(page.locator("#start")).to_have_value("2016-03-01T10:00")
    expect(page.locator("#end")).to_have_value("2016-07-01T20:30")
    expect(page.locator("#start-utc")).to_have_text("= 2016-03-01 09:00 UTC")
    screenshot(page, "berlin")
    click_and_load(page, form.get_by_role("button", name="Save phase"))
    expect(page.locator(".flash.info")).to_have_text("Phase final saved.")
    expect(row.locator('time[datetime="2016-03-01T09:00:00Z"]')).to_be_visible()
    expect(row.locator('time[datetime="2016-07-01T18:30:00Z"]')).to_be_visible()

    # Only the deadline edited, Berlin chosen: it alone moves, read in Berlin summer time.
    page.goto(f"{ORGANIZE_A}/phase?name=final&zone=UTC")
    form.get_by_label("Time zone").fill("Europe/Berlin")
    form.locator("#end").fill("2016-07-02T20:30")
    click_and_load(page, form.get_by_role("button", name="Save phase"))
    expect(row.locator('time[datetime="2016-03-01T09:00:00Z"]')).to_be_visible()
    expect(row.locator('time[datetime="2016-07-02T18:30:00Z"]')).to_be_visible()
    expect(page.locator("#end")).to_have_value("2016-07-02T20:30")
    screenshot(page, "deadline moved")
