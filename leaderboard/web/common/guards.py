"""The decorators that guard pages by role."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, abort
from flask_login import current_user, login_required


def organizer_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Allow only logged-in organizers."""

    @wraps(view)
    @login_required
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not current_user.is_organizer:
            abort(403, "This page is for organizers.")
        return view(*args, **kwargs)

    return wrapped


def organizer_post(bp: Blueprint, rule: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Route POSTs to ``rule`` of ``bp`` to the decorated view, for logged-in organizers only."""

    def register(view: Callable[..., Any]) -> Callable[..., Any]:
        return bp.route(rule, methods=["POST"])(organizer_required(view))

    return register
