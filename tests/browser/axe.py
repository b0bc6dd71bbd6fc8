"""Accessibility checks with axe-core (from npm, installed by ``make install-test`` into .axe/).

The pages' CSP allows scripts from the site only, which refuses axe.min.js in a script tag; it is
evaluated through the DevTools protocol instead, which the CSP does not govern, so the journey
tests check their pages under the real CSP.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.shared_data import REPO_ROOT

AXE_JS = REPO_ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts that fail a page; "minor" and "moderate" ones are reported by axe but tolerated.
FAILING = ("serious", "critical")


def axe_script() -> Path:
    """Return axe.min.js, or skip (fail under CI=true) when axe-core is not installed."""
    if not AXE_JS.is_file():
        reason = f"axe-core is not installed ({AXE_JS} missing; run `make install-test`)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return AXE_JS


def violations(page: Page) -> list[dict[str, Any]]:
    """Run axe-core on the page as it is and return its violations (WCAG 2 A and AA rules)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # The trailing expression keeps Playwright from calling what the script returns.
        page.evaluate(axe_script().read_text(encoding="utf-8") + "\n;0")
    found: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const result = await window.axe.run(document, {
                runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
                resultTypes: ['violations'],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary})),
            }));
        }"""
    )
    return found


def describe(found: list[dict[str, Any]]) -> str:
    """Return violations as readable lines: rule, impact, what it asks, and where."""
    out = []
    for v in found:
        out.append(f"- {v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"][:8]:
            summary = " ".join((node["summary"] or "").split())
            out.append(f"    at {node['target']}: {summary[:300]}")
        if len(v["nodes"]) > 8:
            out.append(f"    ... and {len(v['nodes']) - 8} more")
    return "\n".join(out)


def assert_accessible(page: Page, what: str = "") -> None:
    """Fail with a readable list when axe-core finds a serious or critical violation."""
    serious = [v for v in violations(page) if v["impact"] in FAILING]
    where = what or page.url
    assert not serious, f"axe-core violations on {where}:\n{describe(serious)}"
