"""Validation issues shared by every run format."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]

#: How many errors a verdict lists before it summarises the rest.
MAX_LISTED_ERRORS = 25
#: How many characters of offending text a message may quote.
MAX_QUOTED = 80
#: How many errors a validator keeps in memory; beyond them, errors are only counted.
MAX_KEPT_ERRORS = 1_000


@dataclass(frozen=True)
class Issue:
    """One problem found in an uploaded file; ``line`` is 1-based, None for file-level issues."""

    line: int | None
    message: str
    severity: Severity = "error"

    @property
    def detail(self) -> str:
        """Return the message without a leading "Line N:" that repeats ``line``."""
        return located(self.line, self.message)[1]

    @property
    def text(self) -> str:
        """Return the issue as printed: "line N: message", its line named once."""
        label, rest = located(self.line, self.message)
        return f"{label}: {rest}" if label else rest

    def as_dict(self) -> dict[str, object]:
        """Return the API form ``{"line": n, "message": ...}`` (the message without "Line N:")."""
        return {"line": self.line, "message": self.detail}


def located(line: int | None, message: str) -> tuple[str, str]:
    """Split an issue into its label ("line N", or "" to print none) and its message.

    Validators often start a message with "Line N: "; that prefix is dropped so no surface
    prints the line twice. A message naming its line otherwise ("Line 5 is empty.",
    "headlines line 3 is empty") is kept whole, unlabelled.
    """
    if line is None:
        return "", message
    number = f"(?:{line}|{line:,})"
    prefix = re.match(rf"\s*line {number}:\s*", message, re.IGNORECASE)
    if prefix:
        return f"line {line}", message[prefix.end() :]
    if re.match(rf"\s*(?:\S+ )?line {number}(?!\d|,\d)", message, re.IGNORECASE):
        return "", message
    return f"line {line}", message


def quote(text: str) -> str:
    """Return ``text`` cut to the quotable length, with an ellipsis when cut."""
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


class IssueLog:
    """The errors of one validation: the first ``keep`` kept in order, the rest only counted."""

    def __init__(self, keep: int = MAX_KEPT_ERRORS) -> None:
        self.kept: list[Issue] = []
        self.dropped = 0
        self.keep = keep

    def append(self, issue: Issue) -> None:
        """Keep ``issue`` while there is room, else count it."""
        if len(self.kept) < self.keep:
            self.kept.append(issue)
        else:
            self.dropped += 1

    def __len__(self) -> int:
        """Return how many errors were found, kept or not."""
        return len(self.kept) + self.dropped


def summarise(
    errors: list[Issue], limit: int = MAX_LISTED_ERRORS, *, unlisted: int = 0
) -> list[Issue]:
    """Return at most ``limit`` errors, plus one closing "… and N more errors" line.

    ``unlisted`` counts errors found but not kept in ``errors``; they join the closing count.
    """
    if len(errors) <= limit and not unlisted:
        return list(errors)
    listed = min(limit, len(errors))
    rest = len(errors) - listed + unlisted
    noun = "error" if rest == 1 else "errors"
    return [*errors[:listed], Issue(None, f"… and {rest:,} more {noun}.")]


def quoted(value: object) -> str:
    """Return ``value`` as repr shows it (strings quoted), cut to the quotable length."""
    if not isinstance(value, str):
        return quote(repr(value))
    text = value
    literal = repr(text[:MAX_QUOTED])
    if len(text) <= MAX_QUOTED and len(literal) <= MAX_QUOTED + 2:
        return literal
    # Escapes make the repr longer than the text: drop whole characters, never half an escape.
    cut = text[: MAX_QUOTED - 1]
    literal = repr(cut)
    while len(literal) > MAX_QUOTED + 1:
        cut = cut[:-1]
        literal = repr(cut)
    return literal[:-1] + "…" + literal[-1]
