"""The whole campaign of tests/web/test_campaign.py, clicked through in a real browser.

An organizer and two participants, each in their own browser context, on one live server
whose clock the test moves by rewriting the clock file: phases made with the phase form,
uploads with the upload form, hidden results, a daily quota, the deadline, late runs, the
release, baselines, the freeze, a corrected gold file and the verification.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    BASELINES_A,
    CONSTANT_TRUE_A,
    MEASURES,
    ORACLE_TEST_A,
    ORGANIZE_A,
    TASK_A,
    LiveServer,
    click_and_load,
    download,
    log_in,
    upload_run,
)
from tests.runs import GOLD_TEST_A, constant_run, oracle_run, own_campaign

DEV_A = (
    GOLD_TEST_A.parents[1] / "dev" / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
)
PASSWORD = "correct horse battery"
HIDDEN = "The results of phase test are hidden until the organizers release them."
RUN_HIDDEN = (
    "The run was validated and stored. Its scores are hidden until the organizers release "
    "the results of phase test."
)

Row = tuple[str, str, int | None, str, list[tuple[str, int | None] | None]]

#: The official table expected from the uploads, derived by hand: the primaries are ranked
#: (Borealis ties Aurora on R, both at 100 %), the contrastive run is unranked, the baselines
#: come last; Borealis' late contrastive run is not in it.
OFFICIAL: list[Row] = [
    ("Aurora-primary", "run", 1, "", [(v, 1) for v in ORACLE_TEST_A]),
    ("Aurora-contrastive1", "run", None, "", [(v, None) for v in ORACLE_TEST_A]),
    (
        "Borealis-primary",
        "run",
        2,
        "",
        list(zip(CONSTANT_TRUE_A, [2, 2, 2, 2, 1, 2, 2], strict=True)),
    ),
    *[
        (label, "baseline", None, "", [None if v == "—" else (v, None) for v in values])
        for label, values in BASELINES_A
    ],
]


def table_rows(table: dict[str, Any]) -> list[Row]:
    """Return a table JSON's rows as (label, kind, rank, marker, [(display, rank) | None])."""
    out: list[Row] = []
    for r in table["rows"]:
        cells = [r["cells"].get(m) for m in MEASURES]
        shown = [None if c is None else (c["display"], c["rank"]) for c in cells]
        out.append((r["label"], r["kind"], r["rank"], r["rank_marker"], shown))
    return out


def display(table: dict[str, Any], label: str, measure: str) -> str:
    """Return the displayed value of one cell of a table JSON."""
    row = next(r for r in table["rows"] if r["label"] == label)
    return str(row["cells"][measure]["display"])


def corrected_gold() -> bytes:
    """Return the test gold of A with its first `true` label flipped to `false`."""
    lines = GOLD_TEST_A.read_text().splitlines(keepends=True)
    first_true = next(i for i, line in enumerate(lines) if line.endswith("\ttrue\n"))
    lines[first_true] = lines[first_true].replace("\ttrue\n", "\tfalse\n")
    return "".join(lines).encode()


def save_phase(
    org: Page,
    name: str,
    eval_set: str,
    *,
    start: str = "",
    end: str = "",
    late: str = "",
    results: str = "",
    daily_quota: str = "",
) -> None:
    """Fill and submit the phase form of the organizer subtask page (blank: unchanged)."""
    if not org.url.endswith(ORGANIZE_A):
        org.goto(ORGANIZE_A)
    form = org.locator("#phase-form")
    form.get_by_label("Phase name").fill(name)
    form.get_by_label("Evaluation set").select_option(eval_set)
    form.get_by_label("Start (ISO 8601 with zone)").fill(start)
    form.get_by_label("Deadline (ISO 8601 with zone)").fill(end)
    form.get_by_label("Late runs").select_option(late)
    # By name: the label "Results" alone would also match "Late runs".
    form.locator('select[name="results"]').select_option(results)
    form.get_by_label("Runs per team per day (0: none)").fill(daily_quota)
    click_and_load(org, form.get_by_role("button", name="Save phase"))


def organizer_action(org: Page, eval_set: str, action: str) -> None:
    """Press one of a set's action buttons (baselines, freeze, verify) on the organizer page."""
    if not org.url.endswith(ORGANIZE_A):
        org.goto(ORGANIZE_A)
    click_and_load(org, org.locator(f'form[action="{ORGANIZE_A}/{eval_set}/{action}"] button'))


def expect_refused(page: Page, message: str) -> None:
    """Expect the upload page's verdict to refuse the run with this message."""
    expect(page.locator("section.verdict.rejected h2")).to_have_text(message)
    expect(page.locator("table.scores")).to_have_count(0)


def expect_accepted_hidden(page: Page) -> None:
    """Expect the run page of an accepted run whose scores are hidden."""
    expect(page.get_by_text("The run was accepted and scored.")).to_be_visible()
    expect(page.locator("p.hidden-results")).to_have_text(RUN_HIDDEN)
    expect(page.locator("table.scores")).to_have_count(0)


def expect_quota(page: Page, text: str) -> None:
    """Open the upload page and expect its quota line."""
    page.goto(TASK_A + "/submit")
    expect(page.locator("#quota")).to_have_text(
        f"Runs your team may still submit: {text}. Rejected files do not count."
    )


def test_a_whole_campaign_in_the_browser(
    live_server: LiveServer,
    open_page: Callable[[], Page],
    screenshot: Callable[..., Path],
) -> None:
    live_server.add_organizer("org@example.org", "organizer password")
    live_server.add_participant("Aurora", "alice@example.org", PASSWORD)
    live_server.add_participant("Borealis", "bob@example.org", PASSWORD)
    own_campaign(live_server)
    org, alice, bob, public = open_page(), open_page(), open_page(), open_page()
    log_in(org, "org@example.org", "organizer password")
    log_in(alice, "alice@example.org", PASSWORD)
    log_in(bob, "bob@example.org", PASSWORD)

    # 2016-01-05: the organizer opens a trial phase on dev and a hidden test phase with a quota.
    save_phase(org, "trial", "dev", start="2016-01-01T00:00:00Z", end="2016-01-09T00:00:00Z")
    expect(org.locator(".flash.info")).to_have_text("Phase trial saved.")
    save_phase(
        org, "test", "test", start="2016-01-10T00:00:00Z", end="2016-01-31T23:59:00+00:00",
        results="hidden", daily_quota="2",
    )  # fmt: skip
    expect(org.locator(".flash.info")).to_have_text("Phase test saved.")
    save_phase(org, "test", "test", end="2016-01-31T23:59:00")
    expect(org.locator(".flash.error")).to_contain_text(
        "Phase not saved: '2016-01-31T23:59:00' has no time zone"
    )
    org.goto(ORGANIZE_A)
    phases = org.locator("#phases table tbody tr")
    expect(phases.nth(0).locator("td")).to_have_text(
        ["trial", "dev", "2016-01-01 00:00:00 UTC", "2016-01-09 00:00:00 UTC"]
        + [
            "refused",
            "refused",
            "visible",
            "public",
            "teams",
            "hidden",
            "slots",
            "automatic",
            "—",
            "—",
            "Delete",
        ]
    )
    expect(phases.nth(1).locator("td")).to_have_text(
        ["test", "test", "2016-01-10 00:00:00 UTC", "2016-01-31 23:59:00 UTC"]
        + ["refused", "refused", "hidden", "public", "teams", "hidden", "slots", "automatic"]
        + ["2", "—", "Delete"]
    )
    screenshot(org, "phases")

    # The test set is not open yet; the dev set is, with its scores visible: 211 of the 244 dev
    # questions have a `true` comment, so the oracle's MAP is 86.48.
    upload_run(alice, oracle_run())
    expect_refused(alice, "Phase test opens at 2016-01-10 00:00 UTC; uploads are not open yet.")
    upload_run(alice, oracle_run(DEV_A), eval_set="dev", name="trial-oracle")
    expect(alice.get_by_text("The run was accepted and scored.")).to_be_visible()
    expect(alice.locator("table.scores td").first).to_have_text("86.48")

    # 2016-01-12: the test phase is open, results hidden, 2 runs a day.
    live_server.set_clock("2016-01-12T08:00:00+00:00")
    expect_quota(alice, "2 today (UTC)")
    expect(alice.locator("tr.current td").first).to_have_text("test (open now)")
    upload_run(alice, oracle_run().replace(b"\ttrue\n", b"\tyes\n", 1))
    expect(alice.locator("section.verdict.rejected ul.errors li .line")).to_have_text(["line 1"])
    expect(alice.locator("section.verdict.rejected")).not_to_contain_text("MAP")
    expect_quota(alice, "2 today (UTC)")  # a rejected file does not count
    upload_run(alice, constant_run(), name="constant")
    expect_accepted_hidden(alice)
    expect_quota(alice, "1 today (UTC)")
    upload_run(alice, oracle_run(), name="oracle")
    expect_accepted_hidden(alice)
    screenshot(alice, "hidden-run")
    expect_quota(alice, "0 today (UTC)")
    upload_run(alice, oracle_run(), slot="contrastive1", name="oracle-again")
    expect_refused(
        alice, "Your team has used its 2 run(s) today (2016-01-12 UTC); the quota is reached."
    )
    screenshot(alice, "quota")
    # Hidden means hidden: the public page, the team page and the downloads.
    alice.goto(TASK_A)
    expect(alice.locator("p.hidden-results")).to_have_text(HIDDEN)
    expect(alice.locator("table.ranking")).to_have_count(0)
    assert "96.33" not in alice.content()
    alice.goto("/team")
    expect(alice.locator("table.runs")).to_contain_text("hidden until released")
    assert "96.33" not in alice.content()
    public.goto(TASK_A)
    expect(public.locator("p.hidden-results")).to_have_text(HIDDEN)
    assert public.request.get(TASK_A + "/results.json?view=live").status == 403

    # The next UTC day the quota is fresh; Borealis uploads a week later.
    live_server.set_clock("2016-01-13T09:00:00+00:00")
    expect_quota(alice, "2 today (UTC)")
    upload_run(alice, oracle_run(), slot="contrastive1", name="oracle-again")
    expect_accepted_hidden(alice)
    live_server.set_clock("2016-01-20T10:00:00+00:00")
    upload_run(bob, constant_run(label="true"), name="all-true")
    expect_accepted_hidden(bob)

    # 2016-02-01: past the deadline, refused until the organizer accepts late runs.
    live_server.set_clock("2016-02-01T00:00:00+00:00")
    upload_run(bob, oracle_run(), slot="contrastive1", name="late-oracle")
    expect_refused(
        bob,
        "The deadline of phase test passed at 2016-01-31 23:59 UTC; late submissions are closed.",
    )
    screenshot(bob, "deadline")
    save_phase(org, "test", "test", late="yes")
    expect(org.locator(".flash.info")).to_have_text("Phase test saved.")
    expect(org.locator("#phases table tbody tr").nth(1).locator("td").nth(4)).to_have_text(
        "accepted"
    )
    bob.goto(TASK_A + "/submit")
    expect(bob.locator("section.phases tbody tr").nth(1).locator("td").nth(4)).to_have_text(
        "late runs accepted"
    )
    upload_run(bob, oracle_run(), slot="contrastive1", name="late-oracle")
    expect_accepted_hidden(bob)
    expect(bob.locator("dl.facts")).to_contain_text("active, late")

    # The organizer releases the results and adds the baselines; the live table marks the late run.
    save_phase(org, "test", "test", results="visible")
    expect(org.locator("#phases table tbody tr").nth(1).locator("td").nth(6)).to_have_text(
        "visible (released 2016-02-01 00:00:00 UTC)"
    )
    organizer_action(org, "test", "baselines")
    expect(org.locator(".flash.info")).to_have_text(
        "4 baselines added to semeval2016-task3 A (test)."
    )
    public.goto(TASK_A)
    late_row = public.locator("table.ranking tbody tr.row-late")
    expect(late_row).to_have_count(1)
    expect(late_row.locator(".meta-submission, th").first).to_contain_text("Borealis-contrastive1")
    expect(late_row.locator(".marker")).to_have_text("*")
    screenshot(public, "live-before-freeze")

    # 2016-02-02: the freeze; the official table has the on-time runs only.
    live_server.set_clock("2016-02-02T12:00:00+00:00")
    organizer_action(org, "test", "freeze")
    expect(org.locator(".flash.info")).to_contain_text("Freeze of test queued (job ")
    # The worker analyses the official table, then freezes it as of the organizer's request.
    assert live_server.cli("worker", "--once").startswith("freeze ")
    org.reload()
    expect(org.locator("p.frozen-analysis").first).to_contain_text(
        "Analysis frozen with it (randomization, 10,000 samples, seed 0; "
    )
    public.goto(TASK_A)
    expect(public.locator("p.status.frozen")).to_contain_text(
        "Official ranking, frozen at 2016-02-02 12:00:00 UTC."
    )
    expect(public.locator("table.ranking tbody")).not_to_contain_text("Borealis-contrastive1")
    screenshot(public)
    official_before = download(public, "JSON")
    public.goto(TASK_A + "?view=live")
    live_before = json.loads(download(public, "JSON"))

    # A corrected gold file through the organizer's gold form, then the verification.
    org.goto(ORGANIZE_A)
    gold_form = org.locator("section#gold form")
    gold_form.get_by_label("File to replace").select_option(label="test: gold")
    gold_form.locator('input[type="file"][name="file"]').set_input_files(
        {"name": "corrected.relevancy", "mimeType": "text/plain", "buffer": corrected_gold()}
    )
    click_and_load(org, gold_form.get_by_role("button", name="Store and re-score"))
    expect(org.locator(".flash.info")).to_contain_text(
        "Stored gold version 2; re-scoring of test queued"
    )
    expect(org.locator("#rescore-test")).to_contain_text("Re-scoring queued (job ")
    organizer_action(org, "test", "verify")
    expect(org.locator("div.verify.pending")).to_contain_text("Verification queued (job ")
    worked = live_server.cli("worker", "--once").splitlines()
    assert worked[0].startswith("re-score ") and worked[1].startswith("verification ")
    org.reload()
    expect(org.locator("#rescore-test")).to_contain_text(
        "Re-scored 9 run(s) at "
    )  # replaced runs too
    org.reload()
    expect(org.locator("div.verify.ok")).to_contain_text(
        "7 frozen rows re-score to the snapshot; its analysis recomputes to the same p-values, "
        "clusters and intervals; hashes match."
    )
    screenshot(org, "verified")

    # The official download is byte-identical; the live view changed.
    public.goto(TASK_A)
    official_after = download(public, "JSON")
    assert official_after == official_before
    public.goto(TASK_A + "?view=live")
    live_after = json.loads(download(public, "JSON"))
    screenshot(public, "live-after-correction")

    official = json.loads(official_before)
    assert (official["official"], official["frozen_at"]) == (True, "2016-02-02T12:00:00+00:00")
    # The command line prints the same official table.
    cli = live_server.cli("table", "semeval2016-task3", "A", "--official", "--format", "json")
    assert json.loads(cli) == official
    assert table_rows(official) == OFFICIAL
    assert [r["label"] for r in live_before["rows"] if r["late"]] == ["Borealis-contrastive1"]
    late = next(r for r in table_rows(live_before) if r[0] == "Borealis-contrastive1")
    assert late[2:4] == (None, "*")
    # The oracle labelled the corrected comment `true`: of its 1,329 `true` labels, 1,328 are
    # now right (P = 99.92), and 3,269 of the 3,270 labels (Acc = 99.97).
    assert (
        display(live_before, "Aurora-primary", "P"),
        display(live_after, "Aurora-primary", "P"),
    ) == ("100.00", "99.92")
    assert (
        display(live_before, "Aurora-primary", "Acc"),
        display(live_after, "Aurora-primary", "Acc"),
    ) == ("100.00", "99.97")
