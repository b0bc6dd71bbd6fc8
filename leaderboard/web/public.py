"""Public pages: the task list and the results tables (official and live) with their downloads."""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request
from flask.typing import ResponseReturnValue
from flask_login import current_user
from markupsafe import Markup

from leaderboard.models import FrozenTable, User
from leaderboard.services.catalog import Target, definition_of, list_tasks, resolve
from leaderboard.services.errors import Forbidden, InvalidInput
from leaderboard.services.freeze import frozen_of
from leaderboard.services.tables import live_table
from leaderboard.services.visibility import hiding_phase
from leaderboard.tables import exports
from leaderboard.web.context import db, store

bp = Blueprint("public", __name__)

DOWNLOADS = {
    "csv": ("text/csv; charset=utf-8", exports.to_csv),
    "json": ("application/json", exports.to_json),
    "md": ("text/markdown; charset=utf-8", exports.to_markdown),
    "tex": ("application/x-tex; charset=utf-8", exports.to_latex),
}
VIEWS = ("official", "live")


def viewer() -> User | None:
    """Return the logged-in user, if any."""
    return current_user._get_current_object() if current_user.is_authenticated else None


def chosen_view(snapshot: FrozenTable | None) -> str:
    """Return the requested view: the official table once frozen, else the live one."""
    view = request.args.get("view") or ("official" if snapshot is not None else "live")
    if view not in VIEWS:
        raise InvalidInput(f"Unknown view {view!r}; use official or live.")
    return view


def ensure_visible(target: Target) -> None:
    """Refuse a hidden set's scores to everyone but organizers, saying when they come."""
    phase = hiding_phase(db(), target.eval_set, viewer())
    if phase is not None:
        raise Forbidden(
            f"The results of phase {phase.name} are hidden until the organizers release them."
        )


@bp.route("/")
def home() -> ResponseReturnValue:
    """List the hosted tasks and their subtasks."""
    tasks = list_tasks(db())
    return render_template("public/home.html", tasks=[(t, definition_of(t)) for t in tasks])


@bp.route("/tasks/<task>")
def task_page(task: str) -> ResponseReturnValue:
    """Describe a task and link its subtasks' tables."""
    t = next((x for x in list_tasks(db()) if x.slug == task), None)
    if t is None:
        abort(404)
    return render_template("public/task.html", task=t, definition=definition_of(t))


@bp.route("/tasks/<task>/<subtask>")
def results(task: str, subtask: str) -> ResponseReturnValue:
    """Show the official (frozen) or live results table of a subtask's evaluation set."""
    target = resolve(db(), task, subtask, request.args.get("set") or None)
    snapshot = frozen_of(db(), target)
    view = chosen_view(snapshot)
    hidden = hiding_phase(db(), target.eval_set, viewer())
    context: dict[str, object] = {
        "target": target,
        "snapshot": snapshot,
        "view": view,
        "hidden": hidden,
        "table": None,
        "frozen_html": None,
    }
    if hidden is None:
        if view == "official" and snapshot is not None:
            # Rendered (and escaped) by our own template at freeze time; shown byte for byte.
            context["frozen_html"] = Markup(snapshot.renders["html"])
        else:
            context["table"] = live_table(db(), store(), target)
    return render_template("public/results.html", **context)


@bp.route("/tasks/<task>/<subtask>/results.<ext>")
def download(task: str, subtask: str, ext: str) -> ResponseReturnValue:
    """Download the official or live table as CSV, JSON, Markdown or LaTeX."""
    if ext not in DOWNLOADS:
        abort(404)
    target = resolve(db(), task, subtask, request.args.get("set") or None)
    ensure_visible(target)
    snapshot = frozen_of(db(), target)
    view = chosen_view(snapshot)
    mime, render = DOWNLOADS[ext]
    if view == "official":
        if snapshot is None:
            raise InvalidInput(
                "This table has not been frozen yet; download the live view (?view=live)."
            )
        body = snapshot.renders[ext]
    else:
        body = render(live_table(db(), store(), target))
    name = f"{task}-{subtask}-{target.eval_set.slug}-{view}.{ext}"
    return Response(
        body, mimetype=mime, headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )
