"""Participant pages: upload a run and one run's verdict (the team page is in ``teams``)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required

from leaderboard.models import User
from leaderboard.services.campaign.phases import (
    current_phase,
    may_withdraw,
    phases_of,
    remaining_quota,
)
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.common.errors import DomainError, RunRejected
from leaderboard.services.results.parts import set_part
from leaderboard.services.runs.core import (
    prepare_run,
    visible_run,
    withdraw_run,
)
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import Role, RunKind
from leaderboard.unit_of_work import retried, unit_of
from leaderboard.web.common.context import db, now, settings, store
from leaderboard.web.common.downloads import send_run
from leaderboard.web.common.forms import ConfirmForm, UploadForm, options
from leaderboard.web.common.hidden_notice import seen_hidden
from leaderboard.web.common.ladder_view import ladder_hides, run_ladder
from leaderboard.web.common.live_results import live_rank_texts
from leaderboard.web.common.present import run_notes, score_lines
from leaderboard.web.common.uploads import form_submission, upload_fields

bp = Blueprint("participant", __name__)
#: The answer to an account without a team (a new sign-up) on a team's pages.
NO_TEAM = (
    "Your account is not in a team yet: create one at /teams/new, or open the invite link "
    "a team's captain gave you."
)


def _user() -> User:
    return current_user._get_current_object()


@bp.route("/tasks/<task>/<subtask>/submit", methods=["GET", "POST"])
@login_required
def submit(task: str, subtask: str) -> ResponseReturnValue:
    """Show the upload form; validate, score and store an uploaded run."""
    user = _user()
    target = resolve(db(), task, subtask, request.values.get("eval_set") or None)
    if user.role != Role.PARTICIPANT:
        abort(403, "Only members of a team can upload runs.")
    if user.team is None:
        abort(403, NO_TEAM)
    form = UploadForm()
    form.eval_set.choices = options([(s.slug, s.title) for s in target.subtask.eval_sets])
    form.slot.choices = options([(s, s) for s in target.definition.runs.slots])
    if request.method == "GET":
        form.eval_set.data = target.eval_set.slug
    phase = current_phase(db(), target.subtask, now(), target.eval_set)
    context = {
        "form": form,
        "target": target,
        "phases": phases_of(db(), target.subtask),
        "phase": phase,
        "quota": remaining_quota(db(), phase, user.team, now()),
        "now": now(),
        "upload_fields": upload_fields(target),
        "upload_hint": target.family.upload_hint(target.context()),
        "issues": None,
        "warnings": None,
        "error": None,
    }
    if request.method == "POST":
        if not form.validate_on_submit():
            return render_template("participant/submit.html", **context), 400
        try:
            sub = form_submission(target, form)
            run = retried(db(), prepare_run(db(), store(), settings(), sub, user=user, now=now()))
        except RunRejected as exc:
            context.update(error=exc.message, issues=exc.issues, warnings=exc.warnings)
            return render_template("participant/submit.html", **context), 422
        except DomainError as exc:
            context.update(error=exc.message)
            return render_template("participant/submit.html", **context), exc.status
        return redirect(url_for("participant.run_page", run_id=run.id, new=1))
    return render_template("participant/submit.html", **context)


@bp.route("/runs/<int:run_id>")
@login_required
def run_page(run_id: int) -> ResponseReturnValue:
    """Show one of the team's runs: status, warnings and scores."""
    user = _user()
    run = visible_run(db(), user, run_id)
    hidden = hiding_phase(db(), run.eval_set, user)
    rank = None
    if hidden is None and run.is_active and run.kind == RunKind.RUN:
        subtask = run.subtask
        target = resolve(db(), subtask.task.slug, subtask.slug, run.eval_set.slug)
        rank = live_rank_texts(target).get(run.id)
    ladder = run_ladder(run)
    kept = hidden is not None or ladder_hides(ladder, user)
    return render_template(
        "participant/run.html",
        run=run,
        rank=rank,
        ladder=ladder,
        scores=[] if kept else score_lines(run, set_part(db(), run.eval_set)),
        part=set_part(db(), run.eval_set),
        notes=run_notes(run),
        hidden=hidden,
        seen_hidden=seen_hidden(run.eval_set),
        new=bool(request.args.get("new")),
        withdraw_form=(
            ConfirmForm() if not user.is_organizer and may_withdraw(db(), run, now()) else None
        ),
    )


@bp.route("/runs/<int:run_id>/withdraw", methods=["POST"])
@login_required
def withdraw(run_id: int) -> ResponseReturnValue:
    """Withdraw one of the team's active runs before the deadline; its slot becomes empty."""
    form = ConfirmForm()
    if not form.validate_on_submit():
        abort(400, "The form was missing its security token; reload the page and try again.")
    with unit_of(db()):
        run = withdraw_run(db(), _user(), run_id, now(), settings().display_timezone)
    flash(f"Run {run.id} was withdrawn: its slot is empty and it is no longer ranked.", "info")
    if request.form.get("back") == "results":
        # Back to the subtask page whose table the button was in (a URL of ours, never given).
        subtask = run.subtask
        return redirect(
            url_for(
                "public.results",
                task=subtask.task.slug,
                subtask=subtask.slug,
                set=run.eval_set.slug,
            )
        )
    return redirect(url_for("participant.run_page", run_id=run.id))


@bp.route("/runs/<int:run_id>/file")
@login_required
def run_file(run_id: int) -> ResponseReturnValue:
    """Send one of the team's runs back as uploaded; a multi-file run as a zip of its files."""
    return send_run(store(), visible_run(db(), _user(), run_id))
