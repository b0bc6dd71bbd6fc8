"""BoundarySearch finds exactly the matches of werkzeug's two boundary patterns."""

from __future__ import annotations

import random
import re

import pytest
from werkzeug.sansio.multipart import LINE_BREAK

from leaderboard.web.common.multipart import BoundaryDecoder, BoundarySearch


def patterns(boundary: bytes) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """Return werkzeug's preamble and boundary patterns for ``boundary``."""
    tail = rb"(--[^\S\n\r]*%s?|[^\S\n\r]*%s)" % (LINE_BREAK, LINE_BREAK)
    escaped = re.escape(boundary)
    return (
        re.compile(rb"%s?--%s" % (LINE_BREAK, escaped) + tail, re.MULTILINE),
        re.compile(rb"%s--%s" % (LINE_BREAK, escaped) + tail, re.MULTILINE),
    )


def same(found: object, expected: re.Match[bytes] | None) -> None:
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (found.start(), found.end(), bytes(found.group(1))) == (  # type: ignore[attr-defined]
        expected.start(),
        expected.end(),
        bytes(expected.group(1)),
    )


@pytest.mark.parametrize("boundary", [b"b", b"-", b"--x", b"a1b2", b"x-", b"----WebKitForm1"])
def test_the_search_agrees_with_the_patterns_on_random_buffers(boundary: bytes) -> None:
    rng = random.Random(boundary)
    preamble, between = patterns(boundary)
    ours = (
        BoundarySearch(boundary, break_optional=True),
        BoundarySearch(boundary, break_optional=False),
    )
    pieces = [
        b"\r",
        b"\n",
        b"\r\n",
        b"-",
        b"--",
        b" ",
        b"\t",
        b"\f",
        b"x",
        boundary,
        b"--" + boundary,
    ]
    for _ in range(4000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        buffer = bytearray(data) if rng.random() < 0.5 else data
        pos = rng.randint(0, len(data))
        for search, pattern in zip(ours, (preamble, between), strict=True):
            same(search.search(buffer, pos), pattern.search(buffer, pos))
            same(search.search(buffer), pattern.search(buffer))


def test_a_boundary_with_a_line_break_keeps_the_patterns() -> None:
    decoder = BoundaryDecoder(b"a\nb")
    assert isinstance(decoder.boundary_re, re.Pattern)
    assert isinstance(BoundaryDecoder(b"ab").boundary_re, BoundarySearch)
