"""Organizer pages: overview, baseline generation and the audit log."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required
from sqlalchemy import select

from leaderboard.models import AuditEvent, Team
from leaderboard.services.baselines import add_baselines
from leaderboard.services.catalog import list_tasks, resolve
from leaderboard.services.errors import DomainError
from leaderboard.web.context import db, settings, store
from leaderboard.web.forms import ConfirmForm

bp = Blueprint("organizer", __name__, url_prefix="/organizer")


def organizer_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Allow only logged-in organizers."""

    @wraps(view)
    @login_required
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not current_user.is_organizer:
            abort(403, "This page is for organizers.")
        return view(*args, **kwargs)

    return wrapped


@bp.route("/")
@organizer_required
def dashboard() -> ResponseReturnValue:
    """Show tasks, teams and the latest audit events."""
    session = db()
    teams = session.scalars(select(Team).order_by(Team.name)).all()
    events = session.scalars(select(AuditEvent).order_by(AuditEvent.id.desc()).limit(100)).all()
    return render_template(
        "organizer/dashboard.html",
        tasks=list_tasks(session),
        teams=teams,
        events=events,
        form=ConfirmForm(),
    )


@bp.route("/tasks/<task>/<subtask>/<eval_set>/baselines", methods=["POST"])
@organizer_required
def baselines(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Generate and store the baselines of one set."""
    form = ConfirmForm()
    if not form.validate_on_submit():
        abort(400, "The form expired; reload the page and try again.")
    target = resolve(db(), task, subtask, eval_set)
    try:
        runs = add_baselines(db(), store(), settings(), target, actor=current_user.email)
    except DomainError as exc:
        flash(exc.message, "error")
    else:
        flash(f"{len(runs)} baselines added to {task} {subtask} ({eval_set}).", "info")
    return redirect(url_for("organizer.dashboard"))
