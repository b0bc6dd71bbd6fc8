"""Apply one confirmed change from a POST button, say what it did and go back."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import flash, redirect, url_for
from flask.typing import ResponseReturnValue
from sqlalchemy.orm import Session

from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import confirmed

Done = TypeVar("Done")


def confirmed_change(
    change: Callable[[Session], Done], said: Callable[[Done], str], back: str
) -> ResponseReturnValue:
    """Check the button's form, commit ``change`` as one unit, flash ``said(done)``, go to ``back``.

    A refused change (a domain error) rolls back and reaches the error handler, which says why.
    """
    confirmed()
    with unit_of(db()) as unit:
        done = change(unit.session)
    flash(said(done), "info")
    return redirect(url_for(back))
