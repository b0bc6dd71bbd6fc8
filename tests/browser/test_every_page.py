"""Every page of the journeys on a 390 px phone: no sideways scrolling, no serious axe-core finding."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import FAILING, assert_accessible, axe_script, describe, violations
from tests.browser.conftest import (
    ORGANIZE_A,
    POST_EVALUATION,
    TASK_A,
    LiveServer,
    click_and_load,
    log_in,
    upload_run,
)
from tests.helpers.browser_forms import EXAMPLE as CLASSIFICATION
from tests.helpers.browser_forms import bundle, choose
from tests.runs import oracle_run
from tests.shared_data import REPO_ROOT

PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery"
ORG_PASSWORD = "organizer password"
#: The live server's secret key (tests/browser/conftest.py serve), which signs mail links.
SECRET = "browser-test-secret"
TASK_PAGE_EXAMPLE = REPO_ROOT / "docs" / "examples" / "task-page" / "task.toml"
EXAMPLE_TASK = "/tasks/example-task-page"
ORGANIZE_EXAMPLE = "/organizer/tasks/example-task-page/A"


@contextmanager
def phone(chromium: Browser, server: LiveServer, clock: datetime | None = None) -> Iterator[Page]:
    """Open a page in a fresh 390x844 context (axe-core is injected under the site's CSP).

    With ``clock`` the browser's time stands still there (the server's, for countdowns).
    """
    context = chromium.new_context(base_url=server.url, viewport=PHONE)
    context.set_default_timeout(20_000)
    if clock is not None:
        context.clock.set_fixed_time(clock)
    try:
        yield context.new_page()
    finally:
        context.close()


def too_wide(page: Page) -> list[str]:
    """Return the outermost elements reaching past the window's right edge (what to fix)."""
    found: list[str] = page.evaluate(
        """() => {
            const out = [];
            const walk = (el) => {
                for (const child of el.children) {
                    const box = child.getBoundingClientRect();
                    if (box.right > window.innerWidth + 1) {
                        out.push(child.tagName.toLowerCase() + (child.id ? '#' + child.id : '') +
                                 (child.className && typeof child.className === 'string' ? '.' + child.className.trim().split(/\\s+/).join('.') : '') +
                                 ' (' + Math.round(box.right) + 'px)');
                    } else {
                        walk(child);
                    }
                }
            };
            walk(document.body);
            return out.slice(0, 8);
        }"""
    )
    return found


def sideways(page: Page) -> int:
    """Return by how many pixels the page is wider than the window (0: no sideways scroll)."""
    width: int = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    return max(0, width)


def checker(problems: list[str], screenshot: Callable[..., Path]) -> Callable[[Page, str], None]:
    """Return ``check(page, name)``: screenshot the page, note sideways scrolling and axe findings."""

    def check(page: Page, name: str) -> None:
        expect(page.locator("main")).to_be_visible()
        # Measured before the full-page screenshot, which resizes the view while it shoots.
        over = sideways(page)
        wide = too_wide(page) if over else []
        shot = screenshot(page, name)
        if over:
            problems.append(
                f"{name} ({page.url}) scrolls sideways by {over}px ({', '.join(wide)}); "
                f"see {shot.name}"
            )
        serious = [v for v in violations(page) if v["impact"] in FAILING]
        if serious:
            problems.append(f"{name} ({page.url}):\n{describe(serious)}")

    return check


def test_every_page_fits_a_phone_and_passes_axe(
    chromium: Browser, live_server: LiveServer, screenshot: Callable[..., Path]
) -> None:
    axe_script()  # skip (or fail under CI=true) before anything when axe-core is missing
    live_server.set_clock(POST_EVALUATION)
    live_server.add_organizer("org@example.org", ORG_PASSWORD)
    live_server.add_participant("Aurora Borealis Research Group", "alice@example.org", PASSWORD)
    live_server.cli("add-baselines", "semeval2016-task3", "A")
    # A frozen dev set: the organizer's page shows its supersede form.
    live_server.cli("freeze", "semeval2016-task3", "A", "--set", "dev")
    problems: list[str] = []
    check = checker(problems, screenshot)

    with phone(chromium, live_server) as anon:
        for name, path in (
            ("home", "/"),
            ("task", "/tasks/semeval2016-task3"),
            ("results", TASK_A),
            ("login", "/login"),
            ("signup", "/signup"),
            ("not-found", "/tasks/no-such-task"),
        ):
            anon.goto(path)
            check(anon, name)
        # Keyboard focus is visible: the skip link first, then each control with an outline.
        anon.goto("/login")
        anon.keyboard.press("Tab")
        expect(anon.locator(".skip-link")).to_be_focused()
        expect(anon.locator(".skip-link")).to_be_in_viewport()
        for _ in range(12):
            anon.keyboard.press("Tab")
            if anon.evaluate("() => document.activeElement.id === 'email'"):
                break
        outline = anon.evaluate(
            "() => { const s = getComputedStyle(document.activeElement);"
            " return [document.activeElement.id, s.outlineStyle, parseFloat(s.outlineWidth)]; }"
        )
        assert outline[0] == "email" and outline[1] != "none" and outline[2] >= 2, outline

    with phone(chromium, live_server) as alice:
        log_in(alice, "alice@example.org", PASSWORD)
        for name, path in (
            ("account", "/account"),
            ("team", "/team"),
            ("tokens", "/account/tokens"),
        ):
            alice.goto(path)
            check(alice, name)
        alice.goto(TASK_A + "/submit")
        check(alice, "upload-form")
        upload_run(alice, oracle_run(), name="an-oracle-run-with-a-rather-long-name-to-wrap")
        expect(alice).to_have_url(re.compile(r"/runs/\d+(\?new=1)?$"))
        check(alice, "verdict")
        alice.goto(TASK_A)
        check(alice, "results-as-member")

    with phone(chromium, live_server) as org:
        log_in(org, "org@example.org", ORG_PASSWORD)
        for name, path in (
            ("dashboard", "/organizer/"),
            ("organizer-task", "/tasks/semeval2016-task3"),
            ("organizer-subtask", ORGANIZE_A),
            ("audit", "/organizer/audit"),
            ("users", "/organizer/users"),
            ("teams", "/organizer/teams/"),
            ("settings", "/organizer/settings"),
            ("analysis", ORGANIZE_A + "/analysis"),
            ("phase", ORGANIZE_A + "/phase?name=post-evaluation&zone=Europe/Paris"),
        ):
            org.goto(path)
            check(org, name)
        # The phase page's script shows the UTC instant of the local time typed in.
        org.locator("#end").fill("2016-07-01T18:30")
        expect(org.locator("#end-utc")).to_have_text("= 2016-07-01 16:30 UTC")
        expect(org.locator("time.reader-local .reader-time").first).to_contain_text("your time")

    assert not problems, "\n".join(problems)


def focus_ring(page: Page) -> list[object]:
    """Return the focused element's outline style and whether it is at least 2 px wide."""
    ring: list[object] = page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [s.outlineStyle, parseFloat(s.outlineWidth) >= 2]; }"
    )
    return ring


def unsubscribe_link(server: LiveServer, email: str, kind: str) -> str:
    """Return the path of a mail's unsubscribe link, signed as the server signs it."""
    from sqlalchemy import create_engine, select

    from leaderboard.models import User
    from leaderboard.services.notify.core import unsubscribe_token

    engine = create_engine(server.database_url)
    try:
        with engine.connect() as connection:
            user_id = connection.scalar(select(User.id).where(User.email == email))
    finally:
        engine.dispose()
    assert user_id is not None
    return f"/unsubscribe/{unsubscribe_token(SECRET, user_id, kind)}"


def test_the_campaign_pages_fit_a_phone_and_pass_axe(
    chromium: Browser, live_server: LiveServer, screenshot: Callable[..., Path]
) -> None:
    """The task page's tabs, the subtask page with its countdown and the team's runs, the
    organizer's task upload, definition, message, audit and phase pages, the unsubscribe page."""
    axe_script()
    live_server.set_clock(POST_EVALUATION)
    clock = datetime.fromisoformat(POST_EVALUATION)
    live_server.add_organizer("org@example.org", ORG_PASSWORD)
    live_server.add_participant("Aurora Borealis Research Group", "alice@example.org", PASSWORD)
    live_server.cli("add-task", str(TASK_PAGE_EXAMPLE))
    # Open now, with its deadline 7 days 6 hours ahead of the server's (and the browser's) clock.
    live_server.cli("phase", "example-task-page", "A", "test", "--start", "2016-02-01T00:00:00Z",
                    "--end", "2016-02-12T18:00:00Z")  # fmt: skip
    problems: list[str] = []
    check = checker(problems, screenshot)

    with phone(chromium, live_server, clock) as anon:
        anon.goto(EXAMPLE_TASK)
        expect(anon.get_by_role("tab")).to_have_count(4)
        check(anon, "task-tabs")
        # The tabs take the keyboard focus, and show it.
        for _ in range(15):
            anon.keyboard.press("Tab")
            if anon.evaluate("() => document.activeElement.getAttribute('role') === 'tab'"):
                break
        expect(anon.get_by_role("tab", name="Overview")).to_be_focused()
        assert focus_ring(anon) == ["solid", True], "no visible focus on the tab"
        anon.get_by_role("tab", name="Evaluation").click()
        expect(anon.locator("#tab-evaluation")).to_be_visible()
        check(anon, "task-tab-evaluation")
        anon.goto(EXAMPLE_TASK + "/A")
        expect(anon.locator("#countdown")).to_have_text("7 days 6 hours left")
        expect(anon.locator("#uploads-open")).to_have_text("open")
        check(anon, "subtask-countdown")
        anon.goto(unsubscribe_link(live_server, "alice@example.org", "deadline"))
        expect(anon.locator("main form button")).to_be_visible()
        check(anon, "unsubscribe")
        click_and_load(anon, anon.locator("main form button"))
        expect(anon.locator("#unsubscribed")).to_be_visible()
        check(anon, "unsubscribed")
        anon.goto("/unsubscribe/not-a-token")
        check(anon, "unsubscribe-bad-link")

    with phone(chromium, live_server, clock) as alice:
        log_in(alice, "alice@example.org", PASSWORD)
        alice.goto(EXAMPLE_TASK + "/A")
        click_and_load(alice, alice.locator("#upload-link"))
        alice.get_by_label("Run name").fill("gold-copy-with-a-rather-long-name-to-wrap-on-a-phone")
        alice.locator('input[type="file"]').first.set_input_files(
            {"name": "run.tsv", "mimeType": "text/plain",
             "buffer": (TASK_PAGE_EXAMPLE.parent / "gold.tsv").read_bytes()}
        )  # fmt: skip
        click_and_load(alice, alice.get_by_role("button", name="Upload and score"))
        expect(alice.locator("#run-rank")).to_have_text("1")
        check(alice, "verdict-rank")
        alice.goto(EXAMPLE_TASK + "/A")
        expect(alice.locator("#our-submissions tbody tr")).to_have_count(1)
        expect(alice.locator("#countdown")).to_have_text("7 days 6 hours left")
        # No worker draws here: the page says the chart is being drawn, never a broken image.
        expect(alice.locator("#progress-drawing")).to_be_attached()
        check(alice, "subtask-as-member")
        alice.goto("/account")
        expect(alice.locator("form#notifications")).to_be_visible()
        check(alice, "account-notifications")

    with phone(chromium, live_server, clock) as org:
        log_in(org, "org@example.org", ORG_PASSWORD)
        org.goto("/organizer/tasks/new")
        check(org, "task-new")
        gold = (CLASSIFICATION / "gold.tsv").read_bytes()
        choose(org, bundle(gold.replace(b"tw-002\tneutral", b"tw-002\tbogus")))
        expect(org.locator("#problems li")).to_have_count(1)
        check(org, "task-new-problems")
        choose(org, bundle(gold))
        expect(org.locator("#task-preview")).to_be_visible()
        check(org, "task-new-preview")
        org.goto(ORGANIZE_EXAMPLE + "/definition")
        check(org, "task-definition")
        org.goto("/organizer/messages/new")
        check(org, "message-new")
        org.select_option("#task", "example-task-page")
        org.select_option("#audience", "members")
        org.fill("#subject", "The deadline is near")
        org.fill("#body", "Read the **terms** and the [task page](https://example.org/task).")
        click_and_load(org, org.locator("#preview-message"))
        expect(org.locator("#recipient-count")).to_have_text("1")
        check(org, "message-preview")
        org.goto("/organizer/audit?actor=cli&action=create-phase")
        expect(org.locator("main")).to_contain_text("created phase test of example-task-page A")
        check(org, "audit-filtered")
        org.goto(ORGANIZE_EXAMPLE + "/phase?name=test&zone=America/New_York")
        expect(org.locator("#end")).to_have_value("2016-02-12T13:00")
        # Back from the zone field (a date-time input has a stop for each of its parts).
        org.locator("#zone").focus()
        org.keyboard.press("Shift+Tab")
        expect(org.locator("#release_clear")).to_be_focused()
        assert focus_ring(org) == ["solid", True], "no visible focus on the checkbox"
        check(org, "phase-new-york")

    assert not problems, "\n".join(problems)


def test_axe_fails_a_page_with_serious_violations(chromium: Browser) -> None:
    axe_script()
    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.set_content(
            '<!doctype html><html lang="en"><head><title>x</title></head><body><main>'
            '<input type="text" name="q"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
            '<p style="color:#aaa">faint</p></main></body></html>'
        )
        found = {v["id"]: v["impact"] for v in violations(page)}
        assert found["label"] == "critical" and found["image-alt"] == "critical"
        assert found["color-contrast"] == "serious"
        with pytest.raises(
            AssertionError, match=r"- label \(critical\): Form elements must have labels"
        ):
            assert_accessible(page, "the bad page")
    finally:
        context.close()


def test_axe_runs_under_a_strict_csp(chromium: Browser) -> None:
    axe_script()
    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.route(
            "http://csp.test/",
            lambda route: route.fulfill(
                status=200,
                headers={"Content-Security-Policy": "default-src 'self'; script-src 'self'"},
                content_type="text/html",
                body='<!doctype html><html lang="en"><head><title>x</title></head><body>'
                '<main><h1>x</h1><input type="text" name="q"></main></body></html>',
            ),
        )
        page.goto("http://csp.test/")
        # The site's own pages refuse inline scripts: a script tag cannot bring axe-core in.
        with pytest.raises(Exception, match="Content Security Policy"):
            page.add_script_tag(content="window.injected = 1;")
        assert "label" in {v["id"] for v in violations(page)}
    finally:
        context.close()
