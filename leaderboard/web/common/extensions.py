"""Flask extensions: CSRF protection, the login manager and the life of a log-in session."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask, session
from flask_login import LoginManager, login_user, logout_user
from flask_wtf import CSRFProtect

from leaderboard.models import User
from leaderboard.services.accounts.core import end_sessions
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now, settings

csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Please log in to continue."
# Flask-Login's "strong" mode binds a session to X-Forwarded-For, which any client sets, so it
# protected nothing; the generation and the log-in time below end sessions instead.
login_manager.session_protection = None

#: Session keys: the user's session generation and the log-in time (by the server clock).
GENERATION = "_generation"
LOGIN_AT = "_login_at"
_LOGIN_KEYS = ("_user_id", "_fresh", "_id", GENERATION, LOGIN_AT)


def session_lifetime() -> timedelta:
    """Return how long a log-in lasts."""
    return timedelta(hours=settings().session_hours)


@login_manager.user_loader
def _load_user(user_id: str) -> User | None:
    # Every way in (session or remember cookie) comes here: a session must carry the user's
    # current generation and a log-in time within the lifetime; a remember cookie carries
    # neither, so it never logs anyone in.
    generation = session.get(GENERATION)
    login_at = session.get(LOGIN_AT)
    user = None
    if isinstance(generation, int) and isinstance(login_at, int | float):
        age = now().timestamp() - login_at
        if age < session_lifetime().total_seconds():
            try:
                user = db().get(User, int(user_id))
            except ValueError:
                user = None
    if (
        user is None
        or not user.is_active
        or user.verified_at is None
        or user.session_generation != generation
    ):
        _forget_login()
        return None
    return user


def _forget_login() -> None:
    """Drop a refused log-in from the session (and any remember cookie with it)."""
    for key in _LOGIN_KEYS:
        session.pop(key, None)
    session["_remember"] = "clear"


def start_session(user: User) -> None:
    """Log a user in: a new session holding the user's generation and the time of log-in."""
    # A fresh session, so nothing from before the log-in carries over into it.
    session.clear()
    login_user(user)
    session.permanent = True
    session[GENERATION] = user.session_generation
    session[LOGIN_AT] = int(now().timestamp())


def end_session(user: User) -> None:
    """Log out: end every session of the user, here and in any other browser or copied cookie."""
    with unit_of(db()):
        end_sessions(db(), user.id)
    logout_user()
    _forget_login()


def init_login(app: Flask) -> None:
    """Attach the login manager; cookies last as long as a log-in."""
    hours = app.extensions["leaderboard"]["settings"].session_hours
    app.config.update(
        PERMANENT_SESSION_LIFETIME=timedelta(hours=hours),
        # A log-in lasts a fixed time from the log-in, so the cookie need not be re-sent.
        SESSION_REFRESH_EACH_REQUEST=False,
        REMEMBER_COOKIE_DURATION=timedelta(hours=hours),
    )
    login_manager.init_app(app)
