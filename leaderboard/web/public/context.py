"""Which table a results request asks for, and whether its reader may see the scores.

The public results pages and the analysis charts of a set share them.
"""

from __future__ import annotations

from flask import request

from leaderboard.formats.issues import quoted
from leaderboard.models import FrozenTable
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.common.errors import Forbidden, InvalidInput
from leaderboard.services.tasks.catalog import resolve
from leaderboard.targets import Target
from leaderboard.web.common.context import db, viewer

VIEWS = ("official", "live")


def chosen_view(snapshot: FrozenTable | None) -> str:
    """Return the requested view: the official table once frozen, else the live one."""
    view = request.args.get("view") or ("official" if snapshot is not None else "live")
    if view not in VIEWS:
        raise InvalidInput(f"Unknown view {quoted(view)}; use official or live.")
    return view


def ensure_visible(target: Target) -> None:
    """Refuse a hidden set's scores to everyone but organizers, saying when they come."""
    phase = hiding_phase(db(), target.eval_set, viewer())
    if phase is not None:
        raise Forbidden(
            f"The results of phase {phase.name} are hidden until the organizers release them."
        )


def asked_target(task: str, subtask: str) -> Target:
    """Return the set a results request asks for (``?set=``, else the subtask's default)."""
    return resolve(db(), task, subtask, request.args.get("set") or None)


def visible_target(task: str, subtask: str) -> Target:
    """Return the set asked for, refusing its scores to a reader who may not see them yet."""
    target = asked_target(task, subtask)
    ensure_visible(target)
    return target
