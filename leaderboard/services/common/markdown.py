"""Render Markdown that organizers write (task pages, messages) as safe HTML."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from leaderboard.services.common.urls import absolute_url

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: The elements CommonMark produces; anything else is removed with its markup kept as text.
TAGS = frozenset(
    {
        "a", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
        "img", "li", "ol", "p", "pre", "strong", "ul", "table", "thead", "tbody", "tr",
        "th", "td",
    }
)  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}
#: Links and images may point only here: no javascript:, data: or file: URLs.
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener"


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # Raw HTML in the source is escaped, not passed through; tables as GitHub writes them.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render_markdown(text: str, base: str = "") -> str:
    """Return ``text`` as CommonMark HTML, cleaned by an allow-list sanitizer.

    With ``base`` (a mail's), every link and image URL is made absolute against it.
    """
    import nh3

    def absolute(_tag: str, attribute: str, value: str) -> str:
        return absolute_url(base, value) if attribute in ("href", "src") else value

    html = _parser().render(text)
    return nh3.clean(
        html,
        tags=set(TAGS),
        attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
        attribute_filter=absolute if base else None,
    )
