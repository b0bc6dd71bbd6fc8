"""The JSON API: bearer-token uploads, run status and tables."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, g, jsonify, request
from flask.typing import ResponseReturnValue

from leaderboard.formats.issues import shown
from leaderboard.models import User
from leaderboard.services.accounts import user_for_token
from leaderboard.services.anonymity import audience_for
from leaderboard.services.catalog import measures_by_subtask, resolve, upload_fields_by_subtask
from leaderboard.services.errors import DomainError, Forbidden, InvalidInput
from leaderboard.services.freeze import frozen_of
from leaderboard.services.phases import remaining_quota
from leaderboard.services.runs import Submission, submit_run, visible_run
from leaderboard.services.tables import live_table
from leaderboard.services.visibility import hiding_phase
from leaderboard.tables.exports import table_to_dict
from leaderboard.web.context import db, now, settings, store
from leaderboard.web.openapi import openapi_document
from leaderboard.web.present import run_json
from leaderboard.web.uploads import collect_upload

bp = Blueprint("api", __name__, url_prefix="/api")


class Unauthorized(DomainError):
    """No valid bearer token."""

    status = 401


def token_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Authenticate the request by its ``Authorization: Bearer`` token only (never cookies)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        user = user_for_token(db(), token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            resp = jsonify(
                {"error": "A valid API token is required (Authorization: Bearer <token>)."}
            )
            resp.headers["WWW-Authenticate"] = 'Bearer realm="leaderboard"'
            return resp, 401
        g.api_user = user
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
    if user.role != "participant":
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
    run = submit_run(db(), store(), settings(), sub, user=user, now=now())
    body = run_json(run, show_scores=hidden is None)
    phase = run.phase
    body["phase"] = phase.name if phase is not None else None
    body["quota_remaining"] = remaining_quota(db(), phase, run.team, now()) if run.team else None
    return jsonify(body), 201


@bp.route("/v1/runs/<int:run_id>")
@token_required
def get_run(run_id: int) -> ResponseReturnValue:
    """Return one of the caller's own runs."""
    run = visible_run(db(), _user(), run_id)
    return jsonify(run_json(run, show_scores=hiding_phase(db(), run.eval_set, _user()) is None))


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
    snapshot = frozen_of(db(), target)
    view = request.args.get("view") or ("official" if snapshot is not None else "live")
    if view == "official" and snapshot is not None:
        return jsonify(snapshot.table)
    if view not in ("official", "live"):
        raise InvalidInput(f"Unknown view {shown(view)}; use official or live.")
    return jsonify(table_to_dict(live_table(db(), store(), target, audience_for(_user()))))
