"""Public pages: the task list and the results tables with their downloads."""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request
from flask.typing import ResponseReturnValue

from leaderboard.services.catalog import definition_of, list_tasks, resolve
from leaderboard.services.tables import live_table
from leaderboard.tables import exports
from leaderboard.web.context import db, store

bp = Blueprint("public", __name__)

DOWNLOADS = {
    "csv": ("text/csv; charset=utf-8", exports.to_csv),
    "json": ("application/json", exports.to_json),
    "md": ("text/markdown; charset=utf-8", exports.to_markdown),
    "tex": ("application/x-tex; charset=utf-8", exports.to_latex),
}


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
    """Show the live results table of a subtask's evaluation set."""
    target = resolve(db(), task, subtask, request.args.get("set") or None)
    table = live_table(db(), store(), target)
    return render_template("public/results.html", target=target, table=table)


@bp.route("/tasks/<task>/<subtask>/results.<ext>")
def download(task: str, subtask: str, ext: str) -> ResponseReturnValue:
    """Download the results table as CSV, JSON, Markdown or LaTeX."""
    if ext not in DOWNLOADS:
        abort(404)
    target = resolve(db(), task, subtask, request.args.get("set") or None)
    mime, render = DOWNLOADS[ext]
    body = render(live_table(db(), store(), target))
    name = f"{task}-{subtask}-{target.eval_set.slug}.{ext}"
    return Response(
        body, mimetype=mime, headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )
