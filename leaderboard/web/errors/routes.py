"""Error pages, JSON and plain-text errors: clear messages, the right 4xx status, no stack trace."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException
from werkzeug.formparser import MultiPartParser
from werkzeug.sansio.multipart import MultipartDecoder

from leaderboard.redaction import redact
from leaderboard.services.common.errors import DomainError, RunRejected

bp = Blueprint("errors", __name__)
log = logging.getLogger("leaderboard.web.errors.routes")


#: Suffixes of data routes (exports, charts, per-query numbers) whose errors are plain text:
#: a program reading a CSV, a chart or a table file must not be handed an HTML page.
TEXT_SUFFIXES = (".csv", ".md", ".tex", ".latex", ".svg", ".pdf", ".txt")


def _error_kind() -> str:
    """Return how an error on this route is answered: "json", "text" or "html"."""
    path = request.path
    if path.startswith("/api/") or path.endswith(".json"):
        return "json"
    if path.endswith(TEXT_SUFFIXES):
        return "text"
    if request.accept_mimetypes.best == "application/json":
        return "json"
    return "html"


def _respond(status: int, message: str, **extra: object) -> ResponseReturnValue:
    kind = _error_kind()
    if kind == "json":
        return jsonify({"error": message, **extra}), status
    if kind == "text":
        return Response(f"{message}\n", status=status, mimetype="text/plain")
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


def _megabytes(n: int) -> str:
    return f"{round(n / (1024 * 1024), 2):,g} MB"


def _form_limit_hit(exc: BaseException) -> str | None:
    """Name the multipart limit werkzeug enforced ("count" or "memory"), if it was one."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    # werkzeug raises the same bare 413 for every limit; where it raised it tells them apart.
    owner = tb.tb_frame.f_locals.get("self")
    where = tb.tb_frame.f_code.co_name
    if isinstance(owner, MultipartDecoder):
        return "count" if where == "next_event" else "memory"
    if isinstance(owner, MultiPartParser):
        return "memory"
    return None


@bp.app_errorhandler(413)
def too_large(exc: HTTPException) -> ResponseReturnValue:
    """Refuse a request over one of the size limits, naming the limit it exceeded."""
    limit = request.max_content_length
    length = request.content_length
    over = limit is not None and length is not None and length > limit
    cause = None if over else _form_limit_hit(exc)
    if cause == "count":
        return _respond(
            413,
            f"The form has more than {request.max_form_parts or 0:,} parts; "
            "send each file in its own field and only the fields the form asks for.",
        )
    if cause == "memory":
        return _respond(
            413,
            "A form field other than a file is larger than the limit of "
            f"{request.max_form_memory_size or 0:,} bytes; send large content as a file.",
        )
    if limit is None:
        return _respond(413, "The request is too large.")
    return _respond(413, f"The upload is larger than the limit of {_megabytes(limit)}.")


@bp.app_errorhandler(HTTPException)
def http_error(exc: HTTPException) -> ResponseReturnValue:
    """Render any other HTTP error with its description."""
    return _respond(exc.code or 500, exc.description or exc.name)


@bp.app_errorhandler(Exception)
def unexpected(exc: Exception) -> ResponseReturnValue:
    """Log an unexpected error and answer 500 without details."""
    log.exception("unhandled error on %s %s", request.method, redact(request.path))
    return _respond(500, "Something went wrong on our side; the error was logged.")
