"""Validation issues shared by every run format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]

#: How many errors a verdict lists before it summarises the rest.
MAX_LISTED_ERRORS = 25
#: How many characters of offending text a message may quote.
MAX_QUOTED = 80


@dataclass(frozen=True)
class Issue:
    """One problem found in an uploaded file; ``line`` is 1-based, None for file-level issues."""

    line: int | None
    message: str
    severity: Severity = "error"

    def as_dict(self) -> dict[str, object]:
        """Return the API form ``{"line": n, "message": ...}``."""
        return {"line": self.line, "message": self.message}


def quote(text: str) -> str:
    """Return ``text`` cut to the quotable length, with an ellipsis when cut."""
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


def summarise(errors: list[Issue], limit: int = MAX_LISTED_ERRORS) -> list[Issue]:
    """Return at most ``limit`` errors, plus one closing "… and N more errors" line."""
    if len(errors) <= limit:
        return list(errors)
    rest = len(errors) - limit
    noun = "error" if rest == 1 else "errors"
    return [*errors[:limit], Issue(None, f"… and {rest:,} more {noun}.")]
