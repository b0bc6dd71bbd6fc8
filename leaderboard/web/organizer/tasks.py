"""The organizer's task uploads: a new task, or a new definition of one, previewed then confirmed."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user

from leaderboard.services.tasks.catalog import resolve
from leaderboard.services.upload import core as uploads
from leaderboard.services.upload.core import TaskRefused, UploadedFile
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now, settings, store
from leaderboard.web.common.forms import ConfirmForm, confirmed
from leaderboard.web.common.guards import organizer_post, organizer_required

bp = Blueprint("organizer_tasks", __name__, url_prefix="/organizer/tasks")

#: The signed session's key for the staged upload awaiting confirmation.
STAGED = "staged_task"
#: The signed session's key for the name its staged uploads are kept under (one at a time).
OWNER = "staged_owner"
#: The preview form's field naming the staged upload it shows.
UPLOAD_FIELD = "upload"


def _actor() -> str:
    return str(current_user.email)


def _file(name: str) -> UploadedFile | None:
    f = request.files.get(name)
    if f is None or not f.filename:
        return None
    return UploadedFile(f.filename, f.stream.read())


def _files() -> list[UploadedFile]:
    return [
        UploadedFile(f.filename, f.stream.read())
        for f in request.files.getlist("files")
        if f.filename
    ]


def _render(status: int = 200, **context: Any) -> ResponseReturnValue:
    context.setdefault("form", ConfirmForm())
    context.setdefault("edit", None)
    return render_template("organizer/task_upload.html", **context), status


def _stage(edit: tuple[str, str] | None) -> ResponseReturnValue:
    """Stage and check the request's upload; show the preview or every problem found."""
    confirmed()
    # A new upload replaces any earlier one still awaiting confirmation.
    _forget()
    token = ""
    try:
        token = uploads.stage_upload(
            settings(),
            owner=_owner(),
            bundle=_file("bundle"),
            definition=_file("definition"),
            files=_files(),
        )
        definition = uploads.check_staged(settings(), token)
        if edit is None:
            uploads.refuse_existing(db(), definition)
            changes = None
        else:
            changes = uploads.edit_changes(db(), store(), edit[0], definition)
    except TaskRefused as exc:
        if token:
            uploads.discard(settings(), token)
        return _render(exc.status, problems=exc.problems, edit=edit)
    session[STAGED] = {"token": token, "edit": "/".join(edit) if edit else ""}
    return _render(preview=uploads.preview_of(definition, changes), edit=edit, upload=token)


def _owner() -> str:
    """Return the name this session's staged uploads are kept under, made on first use."""
    owner = session.get(OWNER)
    if not isinstance(owner, str) or not owner:
        owner = session[OWNER] = uploads.new_owner()
    return owner


def _staged_token(edit: tuple[str, str] | None) -> str:
    """Return the token of the upload the submitted preview showed; refuse a stale preview.

    Only the session's current upload may be confirmed, and only from a preview of it.
    """
    staged = session.get(STAGED) or {}
    if not staged.get("token") or staged.get("edit", "") != ("/".join(edit) if edit else ""):
        abort(409, "No uploaded task awaits confirmation here; upload it again.")
    if request.form.get(UPLOAD_FIELD, "") != staged["token"]:
        abort(409, "This preview is no longer current; upload again.")
    return str(staged["token"])


def _forget() -> None:
    """Drop the session's staged upload, and its files."""
    staged = session.pop(STAGED, None) or {}
    if staged.get("token"):
        uploads.discard(settings(), str(staged["token"]))


@bp.route("/new", methods=["GET", "POST"])
@organizer_required
def new_task() -> ResponseReturnValue:
    """Upload a task definition with its files (or one zip of them) and preview the task."""
    if request.method == "GET":
        return _render()
    return _stage(None)


@organizer_post(bp, "/new/confirm")
def confirm_new() -> ResponseReturnValue:
    """Host the previewed task, as ``leaderboard add-task`` does."""
    confirmed()
    token = _staged_token(None)
    try:
        with unit_of(db()):
            task = uploads.create_task(db(), store(), settings(), token, actor=_actor())
    except TaskRefused as exc:
        _forget()
        return _render(exc.status, problems=exc.problems)
    session.pop(STAGED, None)
    first = task.subtasks[0].slug
    flash(f"Task {task.slug} added. Its subtasks take no upload until a phase opens them.", "info")
    return redirect(url_for("organizer.subtask_page", task=task.slug, subtask=first))


def _cancel(edit: tuple[str, str] | None) -> ResponseReturnValue:
    """Drop the session's staged upload and go back to the upload form."""
    confirmed()
    _forget()
    flash("The upload was cancelled; nothing was stored.", "info")
    if edit is None:
        return redirect(url_for("organizer_tasks.new_task"))
    return redirect(url_for("organizer_tasks.edit_definition", task=edit[0], subtask=edit[1]))


@organizer_post(bp, "/new/cancel")
def cancel_new() -> ResponseReturnValue:
    """Cancel the previewed new task: its staged files are removed."""
    return _cancel(None)


@bp.route("/<task>/<subtask>/definition", methods=["GET", "POST"])
@organizer_required
def edit_definition(task: str, subtask: str) -> ResponseReturnValue:
    """Upload a new definition (with its files) of a hosted task and preview the change."""
    resolve(db(), task, subtask)
    if request.method == "GET":
        return _render(edit=(task, subtask))
    return _stage((task, subtask))


@organizer_post(bp, "/<task>/<subtask>/definition/confirm")
def confirm_edit(task: str, subtask: str) -> ResponseReturnValue:
    """Apply the previewed definition: new reference file versions, re-scoring queued."""
    confirmed()
    resolve(db(), task, subtask)
    token = _staged_token((task, subtask))
    try:
        with unit_of(db()):
            _task, jobs = uploads.edit_task(
                db(), store(), settings(), token, task, actor=_actor(), now=now()
            )
    except TaskRefused as exc:
        _forget()
        return _render(exc.status, problems=exc.problems, edit=(task, subtask))
    session.pop(STAGED, None)
    queued = ", ".join(f"{st} ({es}): job {job}" for st, es, job in jobs)
    flash(
        f"Definition of {task} updated"
        + (f"; re-scoring queued for {queued} (`leaderboard worker` runs it)." if jobs else "."),
        "info",
    )
    return redirect(url_for("organizer.subtask_page", task=task, subtask=subtask))


@organizer_post(bp, "/<task>/<subtask>/definition/cancel")
def cancel_edit(task: str, subtask: str) -> ResponseReturnValue:
    """Cancel the previewed definition: its staged files are removed."""
    resolve(db(), task, subtask)
    return _cancel((task, subtask))
