"""The JSON API: bearer-token uploads, run status and tables."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, g, jsonify, request
from flask.typing import ResponseReturnValue
from sqlalchemy.exc import SQLAlchemyError

from leaderboard.formats.issues import quoted
from leaderboard.models import Run, User
from leaderboard.services.accounts.core import note_at_once, user_for_token
from leaderboard.services.campaign.overview import tasks_overview
from leaderboard.services.campaign.phases import remaining_quota
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.common.errors import Forbidden, InvalidInput, RunRejected
from leaderboard.services.freeze.core import frozen_of
from leaderboard.services.notify.notices import run_refused
from leaderboard.services.results.anonymity import audience_for
from leaderboard.services.results.boards import board_of
from leaderboard.services.results.parts import chosen_part, default_part, set_part
from leaderboard.services.results.tables import live_table
from leaderboard.services.runs.core import (
    Submission,
    prepare_run,
    team_runs,
    visible_run,
    withdraw_run,
)
from leaderboard.services.tasks.catalog import (
    measures_by_subtask,
    resolve,
    upload_fields_by_subtask,
)
from leaderboard.states import Role
from leaderboard.tables.exports import table_to_dict
from leaderboard.unit_of_work import retried, unit_of
from leaderboard.web.api.openapi import openapi_document
from leaderboard.web.common.context import commit_token_note, db, now, settings, store
from leaderboard.web.common.downloads import send_run
from leaderboard.web.common.hidden_tasks import refuse_hidden_task
from leaderboard.web.common.ladder_view import ladder_hides, run_ladder
from leaderboard.web.common.present import run_json
from leaderboard.web.common.uploads import collect_upload

bp = Blueprint("api", __name__, url_prefix="/api")
log = logging.getLogger("leaderboard.notify")


def token_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Authenticate the request by its ``Authorization: Bearer`` token only (never cookies)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        user = user_for_token(db(), token.strip(), now()) if scheme.lower() == "bearer" else None
        if user is None:
            resp = jsonify(
                {"error": "A valid API token is required (Authorization: Bearer <token>)."}
            )
            resp.headers["WWW-Authenticate"] = 'Bearer realm="leaderboard"'
            return resp, 401
        if note_at_once(db()):
            commit_token_note(db())
        g.api_user = user
        refuse_hidden_task(user)
        return view(*args, **kwargs)

    return wrapped


def _user() -> User:
    return g.api_user


@bp.route("/openapi.json")
def openapi() -> ResponseReturnValue:
    """Return the OpenAPI document of this API."""
    return jsonify(openapi_document(upload_fields_by_subtask(db()), measures_by_subtask(db())))


@bp.route("/v1/tasks/<task>/<subtask>/runs", methods=["POST"])
@token_required
def upload(task: str, subtask: str) -> ResponseReturnValue:
    """Upload a run (multipart): validate, score and store it, or list every problem."""
    user = _user()
    if user.role != Role.PARTICIPANT:
        raise Forbidden(
            "Uploads through the API are for team members; organizers import with the CLI."
        )
    target = resolve(db(), task, subtask, request.form.get("set") or None)
    upload = collect_upload(target)
    slot = request.form.get("slot", "")
    if not slot:
        raise InvalidInput(
            f"The field 'slot' is required: one of {', '.join(target.definition.runs.slots)}."
        )
    sub = Submission(
        target=target,
        slot=slot,
        upload=upload,
        name=request.form.get("name", ""),
        description=request.form.get("description", ""),
        via="api",
    )
    # Asked before the upload, inside its transaction: asking after the commit would open
    # another transaction (three more round trips) on every upload.
    hidden = hiding_phase(db(), target.eval_set, user)
    part = default_part(db(), target)
    on_ladder = board_of(db(), target).kind == "ladder"
    try:
        run = retried(db(), prepare_run(db(), store(), settings(), sub, user=user, now=now()))
    except RunRejected as exc:
        # The uploader gets the verdict by mail too (a script's log is easily missed).
        _mail_verdict(user, target.task.slug, target.subtask.slug, exc)
        raise
    ladder = run_ladder(run) if on_ladder else None
    shown = hidden is None and not ladder_hides(ladder, user)
    body = run_json(run, show_scores=shown, part=part, ladder=ladder)
    phase = run.phase
    body["phase"] = phase.name if phase is not None else None
    body["quota_remaining"] = remaining_quota(db(), phase, run.team, now()) if run.team else None
    return jsonify(body), 201


def _mail_verdict(user: User, task: str, subtask: str, exc: RunRejected) -> None:
    """Queue and commit a refused run's verdict mail; a failure is logged, not raised.

    The refusal's answer must not change over its mail.
    """
    try:
        with unit_of(db()):
            run_refused(db(), user, task, subtask, exc.message, exc.issues)
    except SQLAlchemyError:
        log.exception("the verdict mail of a refused run to user %s was not queued", user.id)


@bp.route("/v1/runs/<int:run_id>")
@token_required
def get_run(run_id: int) -> ResponseReturnValue:
    """Return one of the caller's own runs."""
    user = _user()
    run = visible_run(db(), user, run_id)
    return jsonify(_run_body(run, user))


def _run_body(run: Run, user: User) -> dict[str, Any]:
    """Return a run as ``user`` may see it: no score while hidden, verdicts on a Ladder board."""
    ladder = run_ladder(run)
    shown = hiding_phase(db(), run.eval_set, user) is None and not ladder_hides(ladder, user)
    return run_json(run, show_scores=shown, part=set_part(db(), run.eval_set), ladder=ladder)


@bp.route("/v1/tasks/<task>/<subtask>/table")
@token_required
def table(task: str, subtask: str) -> ResponseReturnValue:
    """Return the results table as the caller may see it."""
    target = resolve(db(), task, subtask, request.args.get("set") or None)
    phase = hiding_phase(db(), target.eval_set, _user())
    if phase is not None:
        raise Forbidden(
            f"The results of phase {phase.name} are hidden until the organizers release them."
        )
    user = _user()
    part = chosen_part(db(), target, request.args.get("part"), organizer=user.is_organizer)
    snapshot = frozen_of(db(), target)
    view = request.args.get("view") or ("official" if snapshot is not None else "live")
    if view == "official" and snapshot is not None:
        return jsonify(snapshot.table)
    if view not in ("official", "live"):
        raise InvalidInput(f"Unknown view {quoted(view)}; use official or live.")
    return jsonify(table_to_dict(live_table(db(), store(), target, audience_for(user), part=part)))


@bp.route("/v1/tasks")
@token_required
def tasks() -> ResponseReturnValue:
    """List tasks, subtasks, sets and phases with deadlines, and the team's remaining quotas."""
    user = _user()
    return jsonify({"tasks": tasks_overview(db(), user.team, now())})


@bp.route("/v1/team/runs")
@token_required
def my_team_runs() -> ResponseReturnValue:
    """List the caller's team's runs, newest first; scores only where the caller may see them."""
    user = _user()
    if user.team is None:
        return jsonify({"runs": []})
    return jsonify({"runs": [_run_body(run, user) for run in team_runs(db(), user.team)]})


@bp.route("/v1/runs/<int:run_id>/file")
@token_required
def run_file(run_id: int) -> ResponseReturnValue:
    """Send a run's file back as uploaded; a multi-file run as a zip of its files."""
    return send_run(store(), visible_run(db(), _user(), run_id))


@bp.route("/v1/runs/<int:run_id>/withdraw", methods=["POST"])
@token_required
def withdraw(run_id: int) -> ResponseReturnValue:
    """Withdraw one of the team's active runs before the deadline: its slot becomes empty."""
    user = _user()
    with unit_of(db()):
        run = withdraw_run(db(), user, run_id, now(), settings().display_timezone)
    return jsonify(_run_body(run, user))
