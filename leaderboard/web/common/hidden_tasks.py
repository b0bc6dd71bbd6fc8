"""A hidden task's pages answer 404 to everyone but organizers, whatever route names it."""

from __future__ import annotations

from flask import Flask, request
from flask_login import current_user

from leaderboard.models import User
from leaderboard.services.tasks.hiding import refuse_hidden
from leaderboard.web.common.context import db


def refuse_hidden_task(user: User | None) -> None:
    """Raise NotFound when the request's route names a hidden task and ``user`` is no organizer."""
    slug = (request.view_args or {}).get("task")
    if isinstance(slug, str):
        refuse_hidden(db(), slug, user)


def init_hidden_tasks(app: Flask) -> None:
    """Check every route with a ``<task>`` before its view runs (the API, once its token is read)."""

    @app.before_request
    def _hidden_task() -> None:
        # The API's user comes from its bearer token, read by the API's own decorator.
        if request.blueprint == "api":
            return
        refuse_hidden_task(current_user if current_user.is_authenticated else None)
