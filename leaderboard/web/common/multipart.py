"""Multipart bodies parsed by werkzeug without compiling two regular expressions per request.

Werkzeug's ``MultipartDecoder`` compiles two patterns around each request's boundary, and a
client picks a new random boundary for every request: about 1 ms of CPU per upload, a tenth
of an upload's own work in a deadline burst. ``BoundaryDecoder`` finds the same matches with
``bytes.find`` and a few byte comparisons; everything else is werkzeug's.
"""

from __future__ import annotations

from dataclasses import dataclass

import werkzeug.formparser
from werkzeug.sansio.multipart import MultipartDecoder

#: What ``[^\S\n\r]`` matches in a bytes pattern: white space other than line breaks.
_BLANKS = b" \t\f\v"
_BREAKS = b"\r\n"


@dataclass(frozen=True)
class BoundaryMatch:
    """The parts of a regular-expression match the decoder reads."""

    span: tuple[int, int]
    tail: bytes

    def start(self) -> int:
        """Return where the match starts."""
        return self.span[0]

    def end(self) -> int:
        """Return where the match ends."""
        return self.span[1]

    def group(self, index: int) -> bytes:
        """Return the text after the boundary (the pattern's one group)."""
        assert index == 1
        return self.tail


class BoundarySearch:
    """Search like ``LB?--boundary(--H*LB?|H*LB)`` (the preamble's) or ``LB--boundary(...)``.

    LB is a CRLF, LF or CR, H a blank other than a line break: werkzeug's two patterns, with
    the leftmost match a regular-expression search would return.
    """

    def __init__(self, boundary: bytes, *, break_optional: bool) -> None:
        self.marker = b"--" + boundary
        self.break_optional = break_optional

    def search(self, data: bytes | bytearray, pos: int = 0) -> BoundaryMatch | None:
        """Return the leftmost match starting at ``pos`` or later, or None."""
        found = data.find(self.marker, pos)
        while found != -1:
            match = self._match_at(data, pos, found)
            if match is not None:
                return match
            found = data.find(self.marker, found + 1)
        return None

    def _match_at(self, data: bytes | bytearray, pos: int, at: int) -> BoundaryMatch | None:
        """Return the match around the marker found at ``at``, or None if there is none.

        The boundary holds no line break (see BoundaryDecoder), so a match found for an
        earlier marker always starts before any match of a later one.
        """
        if at - 2 >= pos and data[at - 2 : at] == b"\r\n":
            start = at - 2
        elif at - 1 >= pos and data[at - 1] in _BREAKS:
            start = at - 1
        elif self.break_optional:
            start = at
        else:
            return None
        after = at + len(self.marker)
        end = after
        dashes = data[after : after + 2] == b"--"
        if dashes:
            end += 2
        while end < len(data) and data[end] in _BLANKS:
            end += 1
        if data[end : end + 2] == b"\r\n":
            end += 2
        elif end < len(data) and data[end] in _BREAKS:
            end += 1
        elif not dashes:
            return None  # without "--" the line break is required
        return BoundaryMatch((start, end), bytes(data[after:end]))


class BoundaryDecoder(MultipartDecoder):
    """Werkzeug's decoder with the boundary patterns replaced by BoundarySearch."""

    def __init__(
        self,
        boundary: bytes,
        max_form_memory_size: int | None = None,
        *,
        max_parts: int | None = None,
    ) -> None:
        if b"\r" in boundary or b"\n" in boundary:
            # Not a boundary any client sends; werkzeug's own patterns read it.
            super().__init__(boundary, max_form_memory_size, max_parts=max_parts)
            return
        # Set up with a fixed boundary, whose patterns Python's cache of compiled patterns
        # holds after the first request; then search for the real one without patterns.
        super().__init__(b"-", max_form_memory_size, max_parts=max_parts)
        self.boundary = boundary
        self.preamble_re = BoundarySearch(boundary, break_optional=True)  # type: ignore[assignment]
        self.boundary_re = BoundarySearch(boundary, break_optional=False)  # type: ignore[assignment]


def install() -> None:
    """Make werkzeug's form parser (which names its decoder class globally) use BoundaryDecoder."""
    werkzeug.formparser.MultipartDecoder = BoundaryDecoder  # type: ignore[misc]
