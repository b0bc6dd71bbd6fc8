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
from tests.helpers.browser_forms import import_run
from tests.runs import constant_run, oracle_run, own_campaign

PASSWORD = "organizer password"


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
    # The worker computes the official table's analysis, then freezes it; then, unasked, it
    # analyses the live table, whose results are visible.
    assert live_server.cli("worker", "--once") == "freeze 1: done\nanalysis 2: done\n"
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
    expect(page.locator("body")).to_contain_text("Rank interval (lo–hi)")
    rows = ranking_rows(page)
    # Primary rows: the rank with its rank interval (the oracle is first on every resample),
    # the label, then every value with its rank as a <sub>, then how many runs the team
    # uploaded (one each).
    assert rows[0] == [("1 (1–1)", None), ("Aurora-primary", None)] + [
        (v, "1") for v in ORACLE_TEST_A
    ] + [("1", None)]
    assert rows[1] == [("2 (2–2)", None), ("Borealis-primary", None)] + [
        (v, "2") for v in CONSTANT_FALSE_A
    ] + [("1", None)]
    # Baseline rows come last: no rank but the interval of their rank "as if", no subscripts,
    # "—" where a measure is not shown, no upload count.
    assert [row[1:] for row in rows[2:]] == [
        [(label, None)] + [(v, None) for v in values] + [("", None)]
        for label, values in BASELINES_A
    ]
    # The official MAP is the first measure: a baseline showing it has a rank interval.
    for row in rows[2:]:
        shown = row[2][0] != "—"
        assert bool(re.fullmatch(r"\(\d–\d\)", row[0][0])) is shown and (
            shown or row[0][0] == ""
        ), row
    assert page.locator("table.ranking tbody tr.row-baseline").count() == 4
    assert page.locator("table.ranking tbody sub").count() == 14
    screenshot(page)


def test_a_freeze_before_the_deadline_needs_the_organizers_confirmation(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path], tmp_path: Path
) -> None:
    live_server.add_organizer("org@example.org", PASSWORD)
    # The organizers' own campaign on A: phase test until 2016-01-31 23:59 UTC; now is 01-05.
    own_campaign(live_server)
    live_server.cli(
        "phase", "semeval2016-task3", "A", "test", "--start", "2016-01-01T00:00:00Z",
        "--end", "2016-01-31T23:59:00Z",
    )  # fmt: skip
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    live_server.cli("import-runs", "semeval2016-task3", "A", "--team", "Aurora",
                    "--slot", "primary", str(run))  # fmt: skip
    log_in(page, "org@example.org", PASSWORD)
    page.goto(ORGANIZE_A)
    ahead = page.locator("#deadline-ahead-test")
    expect(ahead).to_contain_text("The deadline of phase test is ahead: 2016-01-31 23:59:00 UTC")
    expect(ahead.locator("time")).to_have_attribute("datetime", "2016-01-31T23:59:00Z")
    freeze = page.locator(f'form[action="{ORGANIZE_A}/test/freeze"]')

    # Without the confirmation the freeze is refused at once, saying why; nothing is queued.
    click_and_load(page, freeze.get_by_role("button", name="Freeze official ranking"))
    expect(page.locator(".flash.error")).to_have_text(
        "Not frozen: Phase test of the test set has its deadline at 2016-01-31 23:59 UTC, still "
        "ahead: freezing now would leave out runs submitted on time before it. Freeze after the "
        "deadline, or confirm that you freeze before it."
    )
    expect(page.locator("p.job")).to_have_count(0)
    screenshot(page, "refused")

    # Ticked, it is queued; the worker freezes it; the audit log records the early freeze.
    freeze.get_by_label("Freeze before the deadline anyway").check()
    click_and_load(page, freeze.get_by_role("button", name="Freeze official ranking"))
    expect(page.locator(".flash.info")).to_contain_text("Freeze of test queued (job 1)")
    assert live_server.cli("worker", "--once") == "freeze 1: done\n"
    page.reload()
    expect(page.locator("section#sets")).to_contain_text("Official ranking frozen at 2016-01-05")
    freeze_row = page.locator("section#audit tbody tr").filter(
        has=page.locator("td", has_text=re.compile(r"^freeze$"))
    )
    expect(freeze_row).to_have_count(1)
    early = "before the deadline of phase test (2016-01-31 23:59 UTC)"
    expect(freeze_row.locator("td").last).to_contain_text(
        "froze the official ranking of semeval2016-task3 A (test set): 1 run(s)"
    )
    expect(freeze_row.locator("td").last).to_contain_text(early)
    asked = page.locator("section#audit tbody tr").filter(
        has=page.locator("td", has_text=re.compile(r"^request-freeze$"))
    )
    expect(asked.locator("td").last).to_have_text(
        f"asked for a freeze of semeval2016-task3 A (test set); {early}"
    )
    screenshot(page, "frozen")

    # The premature freeze is superseded on the page, with a reason; the old version stays.
    supersede = page.locator("form#supersede-test")
    expect(supersede).to_contain_text(
        "The current official ranking (frozen on 2016-01-05) will be kept and shown as "
        "superseded; a new frozen version will be the official ranking."
    )
    reason = "Frozen before the deadline by mistake"
    supersede.get_by_label("Reason for superseding").fill(reason)
    supersede.get_by_label("Freeze before the deadline anyway").check()
    click_and_load(page, supersede.get_by_role("button", name="Supersede the frozen ranking"))
    expect(page.locator(".flash.info")).to_contain_text("Supersession of test queued (job 2)")
    assert live_server.cli("worker", "--once") == "freeze 2: done\n"
    page.reload()
    versions = page.locator("#frozen-versions-test li")
    expect(versions).to_have_count(2)
    expect(versions.last).to_contain_text(
        f"Version 1, frozen at 2016-01-05 12:00:00 UTC by org@example.org: superseded on "
        f"2016-01-05 by org@example.org: {reason}"
    )
    superseded = page.locator("section#audit tbody tr").filter(
        has=page.locator("td", has_text=re.compile(r"^supersede-freeze$"))
    )
    expect(superseded.locator("td").last).to_have_text(
        f"superseded frozen version 1 of semeval2016-task3 A (test set) by version 2: {reason}"
    )
    click_and_load(page, versions.last.get_by_role("link", name="table"))
    expect(page.locator("p.status.superseded")).to_have_text(
        f"Superseded on 2016-01-05: {reason}. The official ranking is version 2."
    )
    screenshot(page, "superseded")
