"""Make the links of a mail absolute: a mail is read far from the site, so a path leads nowhere."""

from __future__ import annotations

import re

#: A URL that names its scheme (https:, mailto:) is absolute already.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: An inline Markdown link or image destination: ``](dest`` or ``](<dest>``.
_INLINE = re.compile(r"(\]\(\s*<?)([^\s)>]+)")
#: A Markdown link reference definition: ``[name]: dest`` at the start of a line.
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*<?)(\S+?)(>?(?:[ \t]|$))", re.MULTILINE)


def absolute_url(base: str, url: str) -> str:
    """Return ``url`` as the site at ``base`` would resolve it (a path joined to the base URL)."""
    url = url.strip()
    if not base or not url or _SCHEME.match(url):
        return url
    base = base.rstrip("/")
    if url.startswith("//"):
        # Protocol-relative: the site's own scheme.
        return base.split(":", 1)[0] + ":" + url
    return base + (url if url.startswith("/") else "/" + url)


def absolute_markdown(text: str, base: str) -> str:
    """Return Markdown whose link and image destinations are absolute against ``base``."""
    if not base:
        return text
    text = _INLINE.sub(lambda m: m.group(1) + absolute_url(base, m.group(2)), text)
    return _REFERENCE.sub(lambda m: m.group(1) + absolute_url(base, m.group(2)) + m.group(3), text)
