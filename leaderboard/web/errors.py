"""Error pages and JSON errors: clear messages, the right 4xx status, never a stack trace."""

from __future__ import annotations

import logging

from flask import Blueprint, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from leaderboard.services.errors import DomainError, RunRejected

bp = Blueprint("errors", __name__)
log = logging.getLogger(__name__)


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def _respond(status: int, message: str, **extra: object) -> ResponseReturnValue:
    if _wants_json():
        return jsonify({"error": message, **extra}), status
    return render_template("errors/error.html", status=status, message=message, **extra), status


@bp.app_errorhandler(DomainError)
def domain_error(exc: DomainError) -> ResponseReturnValue:
    """Answer a domain refusal with its status and message."""
    if isinstance(exc, RunRejected):
        return _respond(
            exc.status,
            exc.message,
            issues=[i.as_dict() for i in exc.issues],
            warnings=[w.as_dict() for w in exc.warnings],
        )
    return _respond(exc.status, exc.message)


@bp.app_errorhandler(CSRFError)
def csrf_error(exc: CSRFError) -> ResponseReturnValue:
    """Refuse a form post without a valid CSRF token."""
    return _respond(
        400, "The form was missing its security token or it expired; reload the page and try again."
    )


@bp.app_errorhandler(413)
def too_large(exc: HTTPException) -> ResponseReturnValue:
    """Refuse an upload over the size limit."""
    from leaderboard.web.context import settings

    mb = settings().max_upload_bytes / (1024 * 1024)
    return _respond(413, f"The upload is larger than the limit of {mb:,.0f} MB.")


@bp.app_errorhandler(HTTPException)
def http_error(exc: HTTPException) -> ResponseReturnValue:
    """Render any other HTTP error with its description."""
    return _respond(exc.code or 500, exc.description or exc.name)


@bp.app_errorhandler(Exception)
def unexpected(exc: Exception) -> ResponseReturnValue:
    """Log an unexpected error and answer 500 without details."""
    log.exception("unhandled error on %s %s", request.method, request.path)
    return _respond(500, "Something went wrong on our side; the error was logged.")
