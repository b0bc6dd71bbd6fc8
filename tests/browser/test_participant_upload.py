"""A participant logs in through the form and uploads a valid and a broken Task 3 run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    MEASURES,
    ORACLE_TEST_A,
    POST_EVALUATION,
    LiveServer,
    log_in,
    upload_run,
)
from tests.runs import oracle_run

PASSWORD = "correct horse battery"


def with_bad_score(run: bytes, line: int, score: str) -> bytes:
    """Return ``run`` with the score column (the 4th) of one 1-based line replaced."""
    lines = run.decode().split("\n")
    columns = lines[line - 1].split("\t")
    columns[3] = score
    lines[line - 1] = "\t".join(columns)
    return "\n".join(lines).encode()


def test_participant_uploads_a_valid_and_a_broken_run(
    live_server: LiveServer, page: Page, screenshot: Callable[..., Path]
) -> None:
    live_server.add_participant("Aurora", "alice@example.org", PASSWORD)
    live_server.set_clock(POST_EVALUATION)
    log_in(page, "alice@example.org", PASSWORD)
    # From the home page, as a person would: the task's section, subtask A, "upload a run".
    task3 = page.locator("section.task").filter(has_text="SemEval-2016 Task 3")
    task3.locator("li").filter(has_text="Subtask A:").get_by_role(
        "link", name="upload a run"
    ).click()
    expect(page.get_by_role("heading", name="Upload a run for subtask A")).to_be_visible()

    upload_run(page, oracle_run(), name="oracle")
    expect(page.get_by_text("The run was accepted and scored.")).to_be_visible()
    expect(page.locator("h1")).to_have_text("Run 1: oracle")
    scores = page.locator("table.scores")
    expect(scores.locator("th")).to_have_text(MEASURES)
    expect(scores.locator("td")).to_have_text(ORACLE_TEST_A)
    screenshot(page, "accepted")

    broken = with_bad_score(oracle_run(), 5, "abc")
    assert broken.split(b"\n")[4].split(b"\t")[3] == b"abc"
    upload_run(page, broken, name="broken")
    verdict = page.locator("section.verdict.rejected")
    expect(verdict.locator("h2")).to_have_text("The run was rejected: 1 error.")
    expect(verdict.locator("ul.issues.errors li")).to_have_count(1)
    expect(verdict.locator("ul.issues.errors li .line")).to_have_text("line 5")
    expect(verdict.locator("ul.issues.errors li .msg")).to_have_text("score 'abc' is not a number.")
    # The line is named once.
    expect(verdict.locator("ul.issues.errors li")).to_have_text(
        "line 5: score 'abc' is not a number."
    )
    expect(verdict).to_contain_text("Nothing was stored")
    # A rejected upload shows no scores and the form stays ready for the fixed file.
    expect(page.locator("table.scores")).to_have_count(0)
    expect(page.get_by_role("button", name="Upload and score")).to_be_visible()
    screenshot(page)

    # The team's runs: only the accepted one was stored.
    page.get_by_role("link", name="Team Aurora").click()
    expect(page.locator("table.runs tbody tr")).to_have_count(1)
    expect(page.locator("table.runs tbody tr td").nth(4)).to_have_text("oracle")
