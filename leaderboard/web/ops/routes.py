"""Operations: the health check for load balancers and structured (JSON) request logs."""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import datetime

from flask import Blueprint, Flask, Response, g, jsonify, request
from flask.typing import ResponseReturnValue
from flask_login import current_user
from sqlalchemy import text

from leaderboard.redaction import RedactingFilter, redact
from leaderboard.services.operations.health import health
from leaderboard.web.common.context import db, now

bp = Blueprint("ops", __name__)
access_log = logging.getLogger("leaderboard.access")


@bp.route("/healthz")
def healthz() -> ResponseReturnValue:
    """Answer the health as JSON: 200 when the database answers, 503 otherwise.

    Public, so counts only: no task, phase, host or worker name. A worker unseen for five
    minutes makes it "degraded" with a warning, still 200: the load balancer keeps this host,
    which serves pages well while background work waits.
    """
    try:
        db().execute(text("SELECT 1"))
        report = health(db(), campaign_now=now())
    except Exception:  # any database failure means: take this host out of rotation
        return jsonify({"status": "unavailable", "database": "unreachable"}), 503
    warning = report.warning()
    return jsonify(
        {
            "status": "degraded" if report.stale else "ok",
            "database": "ok",
            "worker": {
                "last_seen": iso(report.last_seen) if report.last_seen else None,
                "stale": report.stale,
            },
            "waiting": report.waiting.counts(),
            "warnings": [warning] if warning else [],
        }
    )


def iso(at: datetime) -> str:
    """Return an instant as ISO 8601 in UTC with a Z, to the second."""
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def init_request_logs(app: Flask) -> None:
    """Log one JSON line per request: id, method, path (secrets redacted), status, duration, user."""
    # The development server (``flask run``) logs each request line itself.
    werkzeug_log = logging.getLogger("werkzeug")
    if not any(isinstance(f, RedactingFilter) for f in werkzeug_log.filters):
        werkzeug_log.addFilter(RedactingFilter())
    if not access_log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        access_log.addHandler(handler)
        access_log.setLevel(logging.INFO)
        access_log.propagate = False

    @app.before_request
    def _start() -> None:
        g.request_started = time.perf_counter()
        g.request_id = request.headers.get("X-Request-Id", "")[:64] or uuid.uuid4().hex

    @app.after_request
    def _log(resp: Response) -> Response:
        started = g.get("request_started")
        user = current_user.get_id() if current_user and current_user.is_authenticated else None
        entry = {
            "event": "request",
            "request_id": g.get("request_id"),
            "method": request.method,
            # Link tokens and invite codes are credentials: never written to a log.
            "path": redact(request.path),
            "status": resp.status_code,
            "ms": round((time.perf_counter() - started) * 1000, 1) if started else None,
            "user": user or (g.api_user.id if "api_user" in g else None),
            "remote": request.remote_addr,
            "bytes_in": request.content_length,
        }
        access_log.info(json.dumps(entry, separators=(",", ":")))
        resp.headers["X-Request-Id"] = str(g.get("request_id", ""))
        return resp
