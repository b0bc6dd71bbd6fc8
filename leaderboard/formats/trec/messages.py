"""Message text shared by the TREC readers, and the bounded error collection."""

from __future__ import annotations

from leaderboard.formats.issues import Issue, quote
from leaderboard.formats.trec.columns import INTEGER, grade_value
from leaderboard.formats.trec.records import GRADE_MAX, GRADE_MIN, PRINTABLE_TAB, TrecSettings

#: Errors collected before validation stops reading (bounds memory on hostile files).
MAX_COLLECTED_ERRORS = 10_000


class TooManyErrors(Exception):
    """Raised when a validator has collected MAX_COLLECTED_ERRORS errors."""


def decoded(raw: bytes) -> str:
    """Decode bytes for a message, escaping what is not UTF-8."""
    return raw.decode("utf-8", "backslashreplace")


def short_id(docid: bytes) -> str:
    """Return an id cut to 8 characters and an ellipsis, as the duplicate message shows it."""
    text = decoded(docid)
    return text if len(text) <= 12 else text[:8] + "…"


def plural(count: int, one: str, many: str) -> str:
    """Return "1 thing" or "1,234 things"."""
    return f"{count:,} {one if count == 1 else many}"


def unknown_query_message(line: int, query: bytes, settings: TrecSettings) -> str:
    """Return the unknown-query message, with the settings' hint where it applies."""
    text = decoded(query)
    which = f"a {settings.topic_set} topic" if settings.topic_set else "a topic of this set"
    message = f"Line {line}: unknown query id '{quote(text)}' (not {which})."
    if settings.topic_hint and text.startswith(settings.topic_hint_prefix):
        message += " " + settings.topic_hint
    return message


def grade_error(line: int, grade: bytes, settings: TrecSettings) -> str | None:
    """Return the message for a grade that is not an integer in the settings' range, if any."""
    low, high = settings.min_grade, settings.max_grade
    if INTEGER.fullmatch(grade):
        value = grade_value(grade)
        if (low is None or value >= low) and (high is None or value <= high):
            if GRADE_MIN <= value <= GRADE_MAX:
                return None
            return (
                f"Line {line}: grade '{quote(decoded(grade))}' is out of range; grades are"
                f" 32-bit integers ({GRADE_MIN:,} to {GRADE_MAX:,})."
            )
    if low is not None and high is not None:
        rule = f"an integer from {low} to {high}"
    elif low is not None:
        rule = f"an integer of at least {low}"
    elif high is not None:
        rule = f"an integer of at most {high}"
    else:
        rule = "an integer"
    return f"Line {line}: grade '{quote(decoded(grade))}' must be {rule}."


def char_error(line: int, content: bytes) -> str | None:
    """Return the message for the first byte that is not printable ASCII or TAB, if any."""
    if not content.translate(None, PRINTABLE_TAB):
        return None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(content[: exc.start].decode("utf-8")) + 1
        return f"Line {line}: not valid UTF-8 (byte 0x{content[exc.start]:02X} at column {column})."
    for column, char in enumerate(text, 1):
        if char != "\t" and not " " <= char <= "~":
            hint = "; separate fields with spaces or TABs" if char.isspace() else ""
            return f"Line {line}: unexpected character U+{ord(char):04X} at column {column}{hint}."
    return None  # pragma: no cover - translate() found a byte that decoding did not


def by_line(errors: list[Issue]) -> list[Issue]:
    """Return errors ordered by line (stable), file-level errors last."""
    return sorted(errors, key=lambda e: (e.line is None, e.line or 0))
