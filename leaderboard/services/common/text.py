"""The one check of text users type: names, profile fields, run names and descriptions."""

from __future__ import annotations

from leaderboard.services.common.errors import InvalidInput

#: Line breaks and tabs, which a multi-line field (a run's description) may hold.
LAYOUT = frozenset("\n\t\r")


def clean_text(
    value: str, what: str, *, required: bool = False, limit: int = 255, multiline: bool = False
) -> str:
    """Return ``value`` stripped; refuse it empty if required, over ``limit`` or with controls.

    Control characters are C0 and DEL; a ``multiline`` field keeps line breaks and tabs.
    Messages name the field as ``what`` ("The run name is longer than 200 characters.").
    """
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"The {what} must not be empty.")
    if len(value) > limit:
        raise InvalidInput(f"The {what} is longer than {limit} characters.")
    allowed = LAYOUT if multiline else frozenset()
    if any((ord(c) < 32 and c not in allowed) or ord(c) == 127 for c in value):
        raise InvalidInput(f"The {what} must not contain control characters.")
    return value
