"""Organizers' Markdown renders as CommonMark and keeps nothing a browser would run."""

from __future__ import annotations

import re

import pytest

from leaderboard.services.common.markdown import render_markdown


def test_commonmark_structure() -> None:
    html = render_markdown("# Title\n\n*one* **two** `code`\n\n- a\n- b\n")
    assert "<h1>Title</h1>" in html
    assert "<em>one</em> <strong>two</strong> <code>code</code>" in html
    assert "<ul>\n<li>a</li>\n<li>b</li>\n</ul>" in html


def test_tables_render() -> None:
    html = render_markdown("|a|b|\n|-|-|\n|1|2|\n")
    assert "<table>" in html and "<td>1</td>" in html


def test_links_get_rel_and_keep_https() -> None:
    html = render_markdown("[site](https://example.org/x)")
    assert '<a href="https://example.org/x" rel="nofollow noopener">site</a>' in html


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src=https://e.org></iframe>",
        "<style>body{}</style>",
        '<a href="https://e.org" onclick="alert(1)">x</a>',
    ],
)
def test_raw_html_is_text(source: str) -> None:
    html = render_markdown(source)
    # Only the paragraph is an element; the source is shown as text.
    assert re.findall(r"<(\w+)", html) == ["p"]
    assert "&lt;" in html


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "![i](data:image/png;base64,AAAA)",
        "[x](data:text/html,<script>alert(1)</script>)",
        "<javascript:alert(1)>",
        "[x](vbscript:msgbox)",
    ],
)
def test_dangerous_urls_are_dropped(source: str) -> None:
    html = render_markdown(source).lower()
    assert 'href="javascript' not in html and 'src="data' not in html
    assert 'href="data' not in html and 'href="vbscript' not in html
