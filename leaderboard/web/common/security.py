"""Security headers and per-request cleanup."""

from __future__ import annotations

from flask import Flask, Response

from leaderboard.web.common.context import close_db

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def init_security(app: Flask) -> None:
    """Add security headers to every response and close sessions after each request."""

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        return resp

    app.teardown_appcontext(close_db)
