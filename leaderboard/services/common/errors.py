"""Domain errors, each with the HTTP status the web layer answers with."""

from __future__ import annotations

from leaderboard.formats.issues import Issue


class DomainError(Exception):
    """A refusal with a message safe to show to the user who caused it."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    """The thing asked for does not exist (or the caller may not know it exists)."""

    status = 404


class Forbidden(DomainError):
    """The caller may not do this."""

    status = 403


class Conflict(DomainError):
    """The request clashes with the state: slot rules, deadlines, quotas, concurrent uploads."""

    status = 409


class InvalidInput(DomainError):
    """A request's parameters are wrong (not the uploaded file)."""

    status = 400


class RunRejected(DomainError):
    """An uploaded run failed validation; ``issues`` lists every error, ``warnings`` the rest."""

    status = 422

    def __init__(
        self, message: str, issues: list[Issue], warnings: list[Issue] | None = None
    ) -> None:
        super().__init__(message)
        self.issues = issues
        self.warnings = warnings or []
