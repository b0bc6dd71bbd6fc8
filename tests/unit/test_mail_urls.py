"""A mail's links made absolute against the site's base URL (it may live under a path)."""

from __future__ import annotations

import pytest

from leaderboard.services.common.markdown import render_markdown
from leaderboard.services.common.urls import absolute_markdown, absolute_url

BASE = "https://lb.example.org/shared-task"


@pytest.mark.parametrize(
    ("url", "absolute"),
    [
        ("/tasks/t3/A", f"{BASE}/tasks/t3/A"),
        ("team", f"{BASE}/team"),
        ("#rules", f"{BASE}/#rules"),
        ("//cdn.example.org/x.png", "https://cdn.example.org/x.png"),
        ("https://elsewhere.example.com/a", "https://elsewhere.example.com/a"),
        ("mailto:org@example.org", "mailto:org@example.org"),
    ],
)
def test_a_url_is_resolved_as_the_site_would(url: str, absolute: str) -> None:
    assert absolute_url(f"{BASE}/", url) == absolute


def test_markdown_links_images_and_references_become_absolute() -> None:
    text = '[a](/x) ![b](y.png "t") [c](<other page>) [d][r] [e](https://e.org/)\n\n[r]: /ref\n'
    assert absolute_markdown(text, BASE) == (
        f'[a]({BASE}/x) ![b]({BASE}/y.png "t") [c](<{BASE}/other page>) [d][r] '
        f"[e](https://e.org/)\n\n[r]: {BASE}/ref\n"
    )
    assert absolute_markdown(text, "") == text


def test_rendered_html_has_absolute_links_only_with_a_base() -> None:
    html = render_markdown("[a](/x) ![b](/y.png)", BASE)
    assert f'href="{BASE}/x"' in html and f'src="{BASE}/y.png"' in html
    assert 'href="/x"' in render_markdown("[a](/x)")
