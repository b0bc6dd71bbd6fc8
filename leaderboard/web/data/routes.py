"""Task data downloads for participants: the terms to accept first, then the file, streamed."""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required
from markupsafe import Markup

from leaderboard.models import User
from leaderboard.services.notify.audience import note_download
from leaderboard.services.tasks.catalog import resolve
from leaderboard.services.tasks.data import accept_terms, download
from leaderboard.services.tasks.pages import markdown_html
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db, now, store
from leaderboard.web.common.downloads import send_stored
from leaderboard.web.common.forms import TermsForm, confirmed

bp = Blueprint("data", __name__)


def _user() -> User:
    return current_user._get_current_object()


@bp.route("/tasks/<task>/<subtask>/data/<int:file_id>")
@login_required
def download_file(task: str, subtask: str, file_id: int) -> ResponseReturnValue:
    """Send a data file, or first the task's terms with a form to accept them."""
    target = resolve(db(), task, subtask)
    offer = download(db(), target.subtask, file_id, _user(), now())
    if offer.terms:
        # Sanitized by render_markdown (an allow-list): safe to insert as HTML.
        terms_html = Markup(markdown_html(offer.terms))
        return render_template(
            "public/terms.html", target=target, offer=offer, form=TermsForm(), terms_html=terms_html
        )
    with unit_of(db()) as unit:
        note_download(unit.session, _user(), target.task, now())
    return send_stored(store(), offer.file.storage_key, offer.file.filename, etag=offer.file.sha256)


@bp.route("/tasks/<task>/<subtask>/data/<int:file_id>", methods=["POST"])
@login_required
def accept(task: str, subtask: str, file_id: int) -> ResponseReturnValue:
    """Record that the user accepts the task's terms, then go on to the download."""
    confirmed(TermsForm())
    target = resolve(db(), task, subtask)
    # Checks the file and the user's right to it first: accepting gives access to nothing else.
    download(db(), target.subtask, file_id, _user(), now())
    with unit_of(db()) as unit:
        accept_terms(unit.session, _user(), target.task, now())
    return redirect(url_for("data.download_file", task=task, subtask=subtask, file_id=file_id))
