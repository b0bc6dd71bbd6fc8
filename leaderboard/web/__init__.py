"""The Flask application factory."""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from leaderboard.config import REPO_ROOT, load_settings
from leaderboard.resources import build


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    """Create the application; ``overrides`` replace environment settings (tests use them)."""
    settings = load_settings(overrides)
    app = Flask(
        "leaderboard",
        root_path=str(REPO_ROOT / "leaderboard"),
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "leaderboard" / "web" / "static"),
        instance_path=str(settings.instance_dir.resolve()),
    )
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_upload_bytes,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_SECURE=settings.secure_cookies,
        WTF_CSRF_TIME_LIMIT=None,
        TESTING=bool((overrides or {}).get("testing", False)),
        WTF_CSRF_ENABLED=bool((overrides or {}).get("csrf", True)),
    )
    if settings.trusted_proxies > 0:
        # Only as many X-Forwarded-* entries as there are proxies of ours are believed; the
        # rest were written by the client.
        n = settings.trusted_proxies
        proxied = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)
        app.wsgi_app = proxied  # type: ignore[method-assign]
    resources = build(
        settings,
        clock=(overrides or {}).get("clock"),
        dispatcher=(overrides or {}).get("dispatcher"),
    )
    app.extensions["leaderboard"] = resources.as_extension()

    from leaderboard.web.account import notifications, tokens
    from leaderboard.web.account import routes as account
    from leaderboard.web.analysis import routes as analysis
    from leaderboard.web.api import routes as api
    from leaderboard.web.auth import routes as auth
    from leaderboard.web.common import multipart, pagecache
    from leaderboard.web.common.extensions import csrf, init_login
    from leaderboard.web.common.security import init_security
    from leaderboard.web.data import routes as data
    from leaderboard.web.errors import routes as errors
    from leaderboard.web.ops import routes as ops
    from leaderboard.web.organizer import accounts as organizer_accounts
    from leaderboard.web.organizer import messages as organizer_messages
    from leaderboard.web.organizer import routes as organizer
    from leaderboard.web.organizer import task_state as organizer_task_state
    from leaderboard.web.organizer import tasks as organizer_tasks
    from leaderboard.web.organizer import teams as organizer_teams
    from leaderboard.web.participant import routes as participant
    from leaderboard.web.public import routes as public
    from leaderboard.web.teams import routes as teams

    multipart.install()
    csrf.init_app(app)
    init_login(app)
    init_security(app)
    blueprints = (
        public.bp,
        auth.bp,
        participant.bp,
        teams.bp,
        tokens.bp,
        organizer.bp,
        organizer_teams.bp,
        organizer_tasks.bp,
        organizer_task_state.bp,
        organizer_messages.bp,
        data.bp,
        analysis.bp,
        account.bp,
        notifications.bp,
        organizer_accounts.bp,
        api.bp,
        errors.bp,
        ops.bp,
    )
    for bp in blueprints:
        app.register_blueprint(bp)
    ops.init_request_logs(app)
    pagecache.init_caches(app)
    from leaderboard.web.common.hidden_tasks import init_hidden_tasks

    init_hidden_tasks(app)
    csrf.exempt(api.bp)

    from leaderboard.web.common.filters import init_filters

    init_filters(app)
    from leaderboard.services.accounts.core import dummy_hash

    # Hashed now, so that no login (of an unknown e-mail) takes longer than another.
    dummy_hash()
    return app
