"""Flask extensions: CSRF protection and the login manager."""

from __future__ import annotations

from flask import Flask
from flask_login import LoginManager
from flask_wtf import CSRFProtect

from leaderboard.models import User
from leaderboard.web.context import db

csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Please log in to continue."
login_manager.session_protection = "strong"


@login_manager.user_loader
def _load_user(user_id: str) -> User | None:
    try:
        user = db().get(User, int(user_id))
    except ValueError:
        return None
    return user if user is not None and user.is_active else None


def init_login(app: Flask) -> None:
    """Attach the login manager."""
    login_manager.init_app(app)
