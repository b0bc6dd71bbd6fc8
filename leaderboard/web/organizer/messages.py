"""The organizers' messages to a task's participants: write, preview the recipients, send."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user
from flask_wtf import FlaskForm
from markupsafe import Markup
from wtforms import HiddenField, SelectField, StringField, TextAreaField

from leaderboard.services.common.errors import DomainError
from leaderboard.services.notify.messages import AUDIENCES, Message, prepare, send_message
from leaderboard.services.tasks.catalog import list_tasks
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now
from leaderboard.web.common.forms import EXPIRED, options
from leaderboard.web.common.guards import organizer_required

bp = Blueprint("organizer_messages", __name__, url_prefix="/organizer/messages")


class MessageForm(FlaskForm):
    """A message: task, audience (and subtask), subject and Markdown body."""

    # No task is chosen for the organizer: a message to the wrong task's teams cannot be undone.
    task = SelectField("Task", validate_choice=False, default="")
    audience = SelectField(
        "Audience", choices=options(AUDIENCES.items()), validate_choice=False, default="members"
    )
    # One of the chosen task's subtasks (the page lists each task's); the service checks it.
    subtask = StringField("Subtask (for the primary-run audiences)")
    subject = StringField("Subject")
    body = TextAreaField("Message (Markdown)")
    confirm = HiddenField()


def _message(form: MessageForm) -> Message:
    return Message(
        task=form.task.data or "",
        audience=form.audience.data or "",
        subtask=form.subtask.data or "",
        subject=form.subject.data or "",
        body=form.body.data or "",
    )


@bp.route("/new", methods=["GET", "POST"])
@organizer_required
def new_message() -> ResponseReturnValue:
    """Show the message form; POST previews it (recipient count), POST with confirm sends it."""
    session = db()
    form = MessageForm()
    tasks = list_tasks(session, with_hidden=True)
    form.task.choices = options(
        [("", "Choose a task"), *((t.slug, f"{t.slug}: {t.title}") for t in tasks)]
    )
    page: dict[str, Any] = {"form": form, "preview": None, "error": None, "tasks": tasks}
    if request.method == "GET":
        return render_template("organizer/message.html", **page)
    if not form.validate_on_submit():
        page["error"] = EXPIRED
        return render_template("organizer/message.html", **page), 400
    message = _message(form)
    try:
        if form.confirm.data == "send":
            with unit_of(session):
                count = send_message(session, message, actor=str(current_user.email), now=now())
            flash(f"The message was queued for {count} recipient(s).", "info")
            return redirect(url_for("organizer.dashboard"))
        ready = prepare(session, message)
    except DomainError as exc:
        page["error"] = exc.message
        return render_template("organizer/message.html", **page), exc.status
    page["preview"] = {
        "count": len(ready.recipients),
        "html": Markup(ready.html),  # sanitized by render_markdown's allow-list
        "audience": AUDIENCES[message.audience],
        "subtask": ready.subtask.slug if ready.subtask else "",
    }
    return render_template("organizer/message.html", **page)
