"""The one check of text users type: names, profile fields, run names and descriptions."""

from __future__ import annotations

from leaderboard.services.common.errors import InvalidInput

#: Line breaks and tabs, which a multi-line field (a run's description) may hold.
LAYOUT = frozenset("\n\t\r")
#: The Unicode line and paragraph separators, which mail headers and splitlines read as breaks.
SEPARATORS = frozenset("\u2028\u2029")


def breaks_a_line(char: str) -> bool:
    """Return whether a character is a control (C0, DEL, C1) or a line/paragraph separator."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or char in SEPARATORS


def header_safe(value: str, what: str, *, allowed: frozenset[str] = frozenset()) -> str:
    """Return ``value``; refuse it with a control or line-separator character, naming the field."""
    # Such a character in a name later breaks the mail header it reaches (a 500 when sending):
    # refused where it is typed, with the field and the character named.
    for index, char in enumerate(value, 1):
        if breaks_a_line(char) and char not in allowed:
            raise InvalidInput(
                f"The {what} must not contain control characters or line separators "
                f"(U+{ord(char):04X} at character {index})."
            )
    return value


def header_text(value: str) -> str:
    """Return ``value`` with every control or line-separator character replaced by a space."""
    return "".join(" " if breaks_a_line(c) else c for c in value)


def clean_text(
    value: str, what: str, *, required: bool = False, limit: int = 255, multiline: bool = False
) -> str:
    """Return ``value`` stripped; refuse it empty if required, over ``limit`` or with controls.

    Controls are C0, DEL, C1 and the line and paragraph separators; a ``multiline`` field
    keeps line breaks and tabs. Messages name the field as ``what`` ("The run name is longer
    than 200 characters.").
    """
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"The {what} must not be empty.")
    if len(value) > limit:
        raise InvalidInput(f"The {what} is longer than {limit} characters.")
    return header_safe(value, what, allowed=LAYOUT if multiline else frozenset())
