"""An organizer messages the captains through the two-step form; one click in the mail unsubscribes.

The server is gunicorn with a mail worker sending to a real SMTP server on loopback (aiosmtpd):
the test reads the delivered mails, POSTs to their List-Unsubscribe link as a mail client does
(RFC 8058: no cookie, no CSRF token), and finds the kind turned off on the account page.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import POST_EVALUATION, click_and_load, log_in, serve
from tests.live import LiveServer
from tests.runs import constant_run, oracle_run
from tests.smtp import MailServer, smtp_server

T3 = "semeval2016-task3"
PASSWORD = "correct horse battery"
ORGANIZER = "org@example.org"
CAPTAINS = ("alice@example.org", "bob@example.org")
MEMBER = "amy@example.org"


@pytest.fixture
def mail() -> Iterator[MailServer]:
    """Run the SMTP server the site sends its mail to."""
    with smtp_server() as server:
        yield server


@pytest.fixture
def live_server(
    chromium: Browser, tmp_path: Path, template_instance: Path, mail: MailServer
) -> Iterator[LiveServer]:
    """Serve a fresh instance whose mail goes to the loopback SMTP server."""
    with serve(
        template_instance,
        tmp_path,
        mail_worker=True,
        LEADERBOARD_MAIL_URL=f"smtp://{mail.host}:{mail.port}",
        LEADERBOARD_MAIL_FROM="leaderboard@example.org",
    ) as server:
        yield server


def test_an_organizer_messages_the_captains_and_one_click_unsubscribes(
    live_server: LiveServer,
    mail: MailServer,
    open_page: Callable[[], Page],
    screenshot: Callable[..., Path],
    tmp_path: Path,
) -> None:
    live_server.set_clock(POST_EVALUATION)
    live_server.add_organizer(ORGANIZER, "organizer password")
    live_server.add_participant("Aurora", CAPTAINS[0], PASSWORD)
    live_server.cli("create-user", MEMBER, "--role", "participant", "--team", "Aurora",
                    "--password", PASSWORD)  # fmt: skip
    live_server.add_participant("Borealis", CAPTAINS[1], PASSWORD)
    for team, run in (("Aurora", oracle_run()), ("Borealis", constant_run())):
        path = tmp_path / f"{team}.txt"
        path.write_bytes(run)
        live_server.cli("import-runs", T3, "A", "--team", team, "--slot", "primary", str(path))

    org = open_page()
    log_in(org, ORGANIZER, "organizer password")
    org.goto("/organizer/")
    click_and_load(org, org.locator("#message-link"))
    assert_accessible(org, "the message form")
    org.select_option("#task", T3)
    org.select_option("#audience", "captains")
    org.fill("#subject", "Test data released")
    org.fill("#body", "The **test data** is out: see the task page.")
    click_and_load(org, org.locator("#preview-message"))
    expect(org.locator("#recipient-count")).to_have_text("2")
    expect(org.locator("#message-preview strong", has_text="test data")).to_be_visible()
    screenshot(org, "preview")
    assert_accessible(org, "the message preview")
    click_and_load(org, org.locator("#send-message"))
    expect(org.locator("body")).to_contain_text("queued for 2 recipient(s)")
    screenshot(org, "sent")
    assert_accessible(org, "the page after sending")

    messages = {email: mail.inbox.wait_for(email)[0] for email in CAPTAINS}
    assert mail.inbox.to(MEMBER) == []  # a member who is no captain gets none
    message = messages[CAPTAINS[0]]
    assert "Test data released" in str(message["Subject"])
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    header = str(message["List-Unsubscribe"])
    assert header.startswith(f"<{live_server.url}/unsubscribe/") and header.endswith(">")
    link = header[1:-1]

    # Opened in a browser, the link shows what it turns off, with a button (no log-in needed).
    visitor = open_page()
    visitor.goto(link)
    expect(visitor.locator("main")).to_contain_text(CAPTAINS[0])
    expect(visitor.locator("main form button")).to_be_visible()
    screenshot(visitor, "unsubscribe-page")
    assert_accessible(visitor, "the unsubscribe page")

    # The mail client's one click: a POST with the RFC 8058 body, no cookie, no CSRF token.
    request = urllib.request.Request(link, data=b"List-Unsubscribe=One-Click", method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200

    alice = open_page()
    log_in(alice, CAPTAINS[0], PASSWORD)
    alice.goto("/account")
    form = alice.locator("form#notifications")
    expect(form.locator("input[name=notify_organizer_messages]")).not_to_be_checked()
    expect(form.locator("input[name=notify_deadline]")).to_be_checked()
    screenshot(alice, "account-unsubscribed")
    assert_accessible(alice, "the account page")
