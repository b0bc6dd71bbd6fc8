"""Id and tag patterns: compiled once, and matched without a regex when they are a simple class."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

#: Any non-empty id without white space. Fields split on white space always match it, so
#: readers skip the check entirely for this pattern.
ANY_ID = r"\S+"
_SIMPLE_CLASS = re.compile(r"\[([^\]\\^]+)\]\{(\d+)(?:,(\d+))?\}")


@functools.lru_cache(maxsize=64)
def compiled(pattern: str) -> re.Pattern[bytes]:
    """Return the pattern compiled for bytes."""
    return re.compile(pattern.encode())


@functools.lru_cache(maxsize=64)
def simple_class(pattern: str) -> tuple[bytes, int, int] | None:
    """Return (allowed bytes, min length, max length) for a ``[class]{n[,m]}`` pattern."""
    match = _SIMPLE_CLASS.fullmatch(pattern)
    if match is None or not pattern.isascii():
        return None
    body, low, high = match.group(1), int(match.group(2)), match.group(3)
    allowed = bytearray()
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            allowed.extend(range(ord(body[i]), ord(body[i + 2]) + 1))
            i += 3
        else:
            allowed.append(ord(body[i]))
            i += 1
    return bytes(allowed), low, int(high) if high is not None else low


def all_full_match(items: Sequence[bytes], pattern: str) -> bool:
    """Return whether every field fully matches the pattern (a translate() fast path if simple).

    The items are fields split on white space: non-empty, without white space.
    """
    if pattern == ANY_ID:
        return True
    simple = simple_class(pattern)
    if simple is None:
        return all(map(compiled(pattern).fullmatch, items))
    allowed, low, high = simple
    lengths = list(map(len, items))
    return (
        not b"".join(items).translate(None, allowed)
        and low <= min(lengths)
        and max(lengths) <= high
    )
