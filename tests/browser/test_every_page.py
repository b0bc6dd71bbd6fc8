"""Every page of the journeys on a 390 px phone: no sideways scrolling, no serious axe-core finding."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import FAILING, assert_accessible, axe_script, describe, violations
from tests.browser.conftest import (
    ORGANIZE_A,
    POST_EVALUATION,
    TASK_A,
    LiveServer,
    log_in,
    upload_run,
)
from tests.runs import oracle_run

PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery"
ORG_PASSWORD = "organizer password"


@contextmanager
def phone(chromium: Browser, server: LiveServer) -> Iterator[Page]:
    """Open a page in a fresh 390x844 context; the CSP is bypassed so that axe-core can be injected."""
    context = chromium.new_context(base_url=server.url, viewport=PHONE, bypass_csp=True)
    context.set_default_timeout(20_000)
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


def test_every_page_fits_a_phone_and_passes_axe(
    chromium: Browser, live_server: LiveServer, screenshot: Callable[..., Path]
) -> None:
    axe_script()  # skip (or fail under CI=true) before anything when axe-core is missing
    live_server.set_clock(POST_EVALUATION)
    live_server.add_organizer("org@example.org", ORG_PASSWORD)
    live_server.add_participant("Aurora Borealis Research Group", "alice@example.org", PASSWORD)
    live_server.cli("add-baselines", "semeval2016-task3", "A")
    problems: list[str] = []

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
