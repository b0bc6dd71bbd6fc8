"""A new participant, with no command line on the server: sign-up, the verification mail, a team,
a second member by invite link, a token made in the browser, a scored upload by ``remote submit``.

The server is gunicorn with its mail going to a real SMTP server on loopback (aiosmtpd); the test
follows the links in the messages it receives, as a person would from their mailbox.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import POST_EVALUATION, click_and_load, serve
from tests.live import BIN, REPO, LiveServer
from tests.runs import oracle_run
from tests.smtp import MailServer, link_in, smtp_server

DANA = "dana@example.org"
EVE = "eve@example.org"
PASSWORD = "a long and careful secret 7"


@pytest.fixture
def mail() -> Iterator[MailServer]:
    """Run the SMTP server the site sends its mail to."""
    with smtp_server() as server:
        yield server


@pytest.fixture
def live_server(
    chromium: Browser, tmp_path: Path, template_instance: Path, mail: MailServer
) -> Iterator[LiveServer]:
    """Serve a fresh instance whose mail goes to the loopback SMTP server (``open_page`` uses it)."""
    with serve(
        template_instance,
        tmp_path,
        mail_worker=True,
        LEADERBOARD_MAIL_URL=f"smtp://{mail.host}:{mail.port}",
        LEADERBOARD_MAIL_FROM="leaderboard@example.org",
    ) as server:
        yield server


def sign_up_and_verify(
    page: Page, mail: MailServer, email: str, name: str, shot: Callable[..., Path]
) -> None:
    """Sign up through the form, open the link of the verification mail, confirm, log in."""
    page.goto("/")
    click_and_load(page, page.get_by_role("link", name="Sign up"))
    page.fill("input[name=email]", email)
    page.fill("input[name=display_name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=password_confirm]", PASSWORD)
    page.fill("input[name=affiliation]", "Example University")
    click_and_load(page, page.get_by_role("button", name="Sign up"))
    expect(page.get_by_text("Check your mail", exact=False).first).to_be_visible()
    shot(page, f"{name}-check-mail")
    (message,) = mail.inbox.wait_for(email)
    link = link_in(message)
    assert "/verify/" in link
    page.goto(link)
    click_and_load(page, page.get_by_role("button", name="Confirm my address"))
    expect(page).to_have_url(re.compile(r"/login"))
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    click_and_load(page, page.locator("main form button[type=submit]").first)
    expect(page.get_by_role("link", name="Account")).to_be_visible()


def test_sign_up_team_invite_token_and_remote_submit(
    live_server: LiveServer,
    mail: MailServer,
    open_page: Callable[[], Page],
    screenshot: Callable[..., Path],
    tmp_path: Path,
) -> None:
    live_server.set_clock(POST_EVALUATION)  # the team submits to a preset's post-evaluation
    dana = open_page()
    sign_up_and_verify(dana, mail, DANA, "Dana", screenshot)

    # A team: the creator is its captain and gets the invite link.
    dana.goto("/teams/new")
    dana.fill("input[name=name]", "Nebula")
    dana.fill("input[name=affiliation]", "Example University")
    click_and_load(dana, dana.get_by_role("button", name="Create team"))
    expect(dana.locator("h1")).to_have_text("Team Nebula")
    expect(dana.locator("ul.members li")).to_have_count(1)
    expect(dana.locator("ul.members .captain")).to_have_count(1)
    invite = dana.locator("#invite-link").inner_text().strip()
    assert re.search(r"/teams/join/\S+$", invite), invite
    screenshot(dana, "team-created")

    # A second person signs up, verifies, opens the invite link and joins at once (open mode).
    eve = open_page()
    sign_up_and_verify(eve, mail, EVE, "Eve", screenshot)
    eve.goto(invite)
    click_and_load(eve, eve.get_by_role("button", name="Join the team"))
    expect(eve.locator("h1")).to_have_text("Team Nebula")
    dana.goto("/team")
    expect(dana.locator("ul.members li")).to_have_count(2)
    expect(dana.locator("ul.members")).to_contain_text("Eve")
    screenshot(dana, "two-members")

    # A named token, shown once.
    dana.goto("/account/tokens")
    dana.fill("input[name=name]", "laptop script")
    click_and_load(dana, dana.get_by_role("button", name="Create token"))
    token = dana.locator("#new-token").inner_text().strip()
    assert token.startswith("lb_")
    screenshot(dana, "token")
    dana.goto("/account/tokens")
    expect(dana.locator("#new-token")).to_have_count(0)  # never shown again
    expect(dana.locator("main")).to_contain_text("laptop script")

    # The upload, from a script: validated locally, sent, scored.
    run = tmp_path / "subtask_A_primary.txt"
    run.write_bytes(oracle_run())
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "LEADERBOARD_DATABASE_URL": "sqlite:////nonexistent/folder/no.sqlite3",
        "LEADERBOARD_TOKEN": token,
    }
    done = subprocess.run(
        [str(BIN / "leaderboard"), "remote", "submit", "--server", live_server.url,
         "semeval2016-task3", "A", str(run), "--set", "test", "--name", "first try"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MAP" in done.stdout and "96.33" in done.stdout, done.stdout

    # The team page lists the run with its score; so does the run's page.
    dana.goto("/team")
    row = dana.locator("table.runs tbody tr").filter(has_text="first try")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("MAP 96.33")
    click_and_load(dana, row.get_by_role("link"))
    expect(dana.locator("h1")).to_contain_text("first try")
    expect(dana.locator("table.scores td").first).to_have_text("96.33")
    screenshot(dana, "scored-run")
