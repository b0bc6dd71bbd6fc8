"""An organizer queues the significance analysis; the worker computes it; the pages show it.

The organizer's page gets the clusters, intervals, p-value matrix and charts; the public table
its cluster rules and intervals; a participant their run's per-query chart. Every chart is an
image the browser loads under the site's CSP, with its numbers beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.conftest import ORGANIZE_A, TASK_A, LiveServer, click_and_load, log_in
from tests.helpers.browser_forms import import_run
from tests.runs import constant_run, oracle_run

ORGANIZER = ("org@example.org", "organizer password")
PARTICIPANT = ("alice@example.org", "correct horse battery")


def loaded_images(page: Page, scope: str) -> list[tuple[str, int]]:
    """Return (src, natural width) of every image under ``scope``, once each has loaded."""
    for image in page.locator(f"{scope} img").all():
        expect(image).to_have_js_property("complete", True)
    found: list[tuple[str, int]] = page.eval_on_selector_all(
        f"{scope} img", "images => images.map(i => [i.getAttribute('src'), i.naturalWidth])"
    )
    return found


def test_organizer_analyses_a_set_and_the_pages_show_it(
    live_server: LiveServer, open_page: Callable[[], Page], screenshot: Callable[..., Path]
) -> None:
    live_server.add_organizer(*ORGANIZER)
    live_server.add_participant("Aurora", *PARTICIPANT)
    org = open_page()
    refused: list[str] = []
    org.on(
        "console",
        lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    log_in(org, *ORGANIZER)
    org.goto(ORGANIZE_A)
    import_run(org, "Aurora", oracle_run())
    import_run(org, "Borealis", constant_run())
    click_and_load(org, org.locator(f'form[action="{ORGANIZE_A}/test/baselines"] button'))

    # Queued from the page; nothing is computed in the request.
    expect(org.locator("#analysis-status")).to_contain_text("No analysis of this set")
    form = org.locator("#analysis-form")
    form.get_by_label("Samples").fill("2000")
    click_and_load(org, form.get_by_role("button", name="Queue"))
    expect(org.locator("#analysis-status .status.pending")).to_contain_text("queued or running")
    assert live_server.cli("worker", "--once") == "analysis 1: done\n"
    org.goto(ORGANIZE_A)

    expect(org.locator("#analysis-status .status.current")).to_contain_text(
        "Analysis 1 describes the current scores"
    )
    report = org.locator("#analysis-report")
    expect(report.locator("h2")).to_have_text(
        "MAP: randomization, 2000 samples, seed 0; holm correction, α = 0.05"
    )
    # Four rows with a MAP (two primaries, the IR and random baselines; the all-true and
    # all-false baselines show only the label measures), the oracle first in cluster 1.
    measure_rows = report.locator("#measure-table tbody tr")
    expect(measure_rows).to_have_count(4)
    expect(measure_rows.first.locator("td").nth(0)).to_have_text("1")
    expect(measure_rows.first.locator("td").nth(1)).to_have_text("Aurora-primary")
    # In the table's scale: MAP in percent, as the ranking shows it.
    expect(measure_rows.first.locator("td").nth(3)).to_have_text(
        re.compile(r"^\[\d{2,3}\.\d{4}, \d{2,3}\.\d{4}\]$")
    )
    # The p-value matrix: one row per run but the last, one column per run but the first.
    expect(report.locator("#pvalue-matrix tbody tr")).to_have_count(3)
    expect(report.locator("#pvalue-matrix thead th")).to_have_count(4)
    expect(report.locator("#pvalue-matrix td.significant").first).to_be_visible()
    charts = loaded_images(org, "#analysis-report")
    assert len(charts) == 2 and all(width > 0 for _src, width in charts), charts
    screenshot(org, "organizer-analysis")

    # The public table: cluster rules, intervals on the cells, and the note saying what they are.
    public = open_page()
    public.goto(TASK_A)
    expect(public.locator("table.ranking tbody tr.cluster-start").first).to_be_visible()
    expect(public.locator("table.ranking tbody tr").first.locator(".ci").first).to_have_text(
        re.compile(r"^\[\d+\.\d\d, \d+\.\d\d\]$")
    )
    expect(public.locator("body")).to_contain_text("Rules separate significance clusters")
    # Beside the table, the chart of the same analysis for the paper, with its downloads.
    public_chart = loaded_images(public, "#significance")
    assert len(public_chart) == 1 and public_chart[0][1] > 0, public_chart
    expect(public.locator("#significance").get_by_role("link", name="PDF").first).to_be_visible()
    screenshot(public, "public-clusters")

    # Aurora's member opens the run's per-query values: a chart and the table of its numbers.
    alice = open_page()
    log_in(alice, *PARTICIPANT)
    alice.goto("/runs/1")
    alice.get_by_role("link", name=re.compile("Per-query values")).click()
    expect(alice.locator("h1")).to_contain_text("MAP per query")
    expect(alice.locator("#query-table tbody tr")).to_have_count(327)
    per_query = loaded_images(alice, "main")
    assert len(per_query) == 1 and per_query[0][1] > 0, per_query
    screenshot(alice, "per-query")
    assert refused == []
