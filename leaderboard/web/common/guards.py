"""The decorators that guard pages by role."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import abort
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
