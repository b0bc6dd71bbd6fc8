"""The organizer's hide, show and delete buttons of a task."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user

from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.tasks.deletion import delete_task
from leaderboard.services.tasks.hiding import set_hidden
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now
from leaderboard.web.common.forms import confirmed
from leaderboard.web.common.guards import organizer_post

bp = Blueprint("organizer_task_state", __name__, url_prefix="/organizer/tasks")


def _hide_or_show(task: str, hidden: bool) -> ResponseReturnValue:
    confirmed()
    with unit_of(db()) as unit:
        changed = set_hidden(unit.session, task, hidden, actor=str(current_user.email), now=now())
    if hidden:
        said = (
            f"Task {task} is hidden: only organizers see it; uploads are refused; nothing "
            "was deleted."
        )
    else:
        said = f"Task {task} is shown again to everyone."
    flash(
        said if changed else f"Task {task} was already {'hidden' if hidden else 'shown'}.", "info"
    )
    return redirect(url_for("public.task_page", task=task))


@organizer_post(bp, "/<task>/hide")
def hide_task(task: str) -> ResponseReturnValue:
    """Hide a task from everyone but the organizers (404); nothing is deleted."""
    return _hide_or_show(task, True)


@organizer_post(bp, "/<task>/show")
def show_task(task: str) -> ResponseReturnValue:
    """Show a hidden task to everyone again."""
    return _hide_or_show(task, False)


@organizer_post(bp, "/<task>/delete")
def delete_task_view(task: str) -> ResponseReturnValue:
    """Delete a task without runs, once its name is typed as the confirmation."""
    confirmed()
    typed = request.form.get("confirm", "").strip()
    if typed != task:
        raise InvalidInput(
            f"Type the task's name {task} in the field 'confirm' to delete it "
            f"(got {typed!r}); nothing was deleted."
        )
    with unit_of(db()) as unit:
        delete_task(unit.session, task, actor=str(current_user.email), now=now())
    flash(f"Task {task} was deleted; `leaderboard init` will not install it again.", "info")
    return redirect(url_for("organizer.dashboard"))
