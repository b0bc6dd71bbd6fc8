"""Team pages for participants: create a team, the team page, invite links, requests, members."""

from __future__ import annotations

from collections.abc import Callable

from flask import (
    Blueprint,
    abort,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required
from sqlalchemy.orm import Session

from leaderboard.models import User
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.common import settings as site_settings
from leaderboard.services.common.errors import DomainError
from leaderboard.services.common.throttle import TooManyAttempts, claim_request
from leaderboard.services.results.parts import set_part
from leaderboard.services.runs.core import team_runs
from leaderboard.services.teams import members as teams
from leaderboard.states import RunStatus
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.changes import Done, confirmed_change
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import EXPIRED, ConfirmForm, TeamForm, confirmed
from leaderboard.web.common.ladder_view import run_ladder
from leaderboard.web.common.limits import counted
from leaderboard.web.common.present import score_lines

bp = Blueprint("teams", __name__)


def _user() -> User:
    return current_user._get_current_object()


def _back() -> ResponseReturnValue:
    return redirect(url_for("teams.team_page"))


def _name(member: User) -> str:
    return member.display_name or member.email


def _change(change: Callable[[Session], Done], said: Callable[[Done], str]) -> ResponseReturnValue:
    """Apply a confirmed change of the user's team, say what it did, back to the team page."""
    return confirmed_change(change, said, "teams.team_page")


@bp.route("/teams/new", methods=["GET", "POST"])
@login_required
def new_team() -> ResponseReturnValue:
    """Show the new-team form; create the team with the user as its captain."""
    user = _user()
    if user.is_organizer:
        abort(403, "Organizers cannot be team members.")
    if user.team_id is not None and request.method == "GET":
        flash("You are already in a team; leave it before creating another one.", "error")
        return _back()
    session = db()
    mode = site_settings.registration(session)
    form = TeamForm()
    status = 200
    if request.method == "POST":
        if not form.validate_on_submit():
            if form.csrf_token.errors:
                abort(400, EXPIRED)
            status = 400
        else:
            try:
                if user.team_id is None:
                    # Every name tried counts: uniqueness must not let anyone list teams quickly.
                    remote = request.remote_addr or ""
                    counted(lambda s, at: claim_request(s, "team", user.email, remote, at))
                with unit_of(session):
                    team = teams.create_own_team(
                        session, user, form.name.data or "", form.affiliation.data or ""
                    )
            except TooManyAttempts as exc:
                flash(
                    f"Too many team names tried; try again in {-(-exc.retry_after // 60)} minute(s).",
                    "error",
                )
                resp = make_response(render_template("teams/new.html", form=form, mode=mode), 429)
                resp.headers["Retry-After"] = str(exc.retry_after)
                return resp
            except DomainError as exc:
                flash(exc.message, "error")
                status = exc.status
            else:
                waiting = "" if team.approved else " It waits for an organizer's approval."
                flash(f"Team {team.name} created; you are its captain.{waiting}", "info")
                return _back()
    return render_template("teams/new.html", form=form, mode=mode), status


@bp.route("/team")
@login_required
def team_page() -> ResponseReturnValue:
    """Show the team: members, invite link, join requests, and its runs with their scores."""
    user = _user()
    if user.is_organizer:
        abort(403, "Organizers are not in a team; see the organizer's team list.")
    session = db()
    team = user.team
    if team is None:
        return render_template(
            "teams/none.html",
            requests=teams.own_pending_requests(session, user),
            mode=site_settings.registration(session),
            confirm=ConfirmForm(),
        )
    runs = team_runs(session, team)
    listed = []
    for r in runs:
        ladder = run_ladder(r)
        hidden = hiding_phase(session, r.eval_set, user) or ladder is not None
        listed.append((r, [] if hidden else score_lines(r, set_part(session, r.eval_set)), ladder))
    return render_template(
        "teams/team.html",
        team=team,
        user=user,
        members=teams.members_of(session, team),
        requests=teams.pending_requests(session, team) if user.is_captain else [],
        runs=listed,
        active_runs=sum(1 for r in runs if r.status == RunStatus.ACTIVE),
        max_size=site_settings.max_team_size(session),
        confirm=ConfirmForm(),
    )


@bp.route("/team/invite", methods=["POST"])
@login_required
def regenerate_invite() -> ResponseReturnValue:
    """Make a new invite link (captain); the old one stops working."""
    return _change(
        lambda session: teams.regenerate_invite(session, _user()),
        lambda _: "A new invite link was made; the old one no longer works.",
    )


@bp.route("/team/requests/<int:request_id>/accept", methods=["POST"])
@login_required
def accept_request(request_id: int) -> ResponseReturnValue:
    """Accept a pending join request (captain)."""
    confirmed()
    with unit_of(db()) as unit:
        try:
            member = teams.decide_request(unit.session, _user(), request_id, accept=True)
        except teams.JoinedMeanwhile:
            unit.commit()  # the request is closed, though the answer is refused
            raise
    flash(f"{_name(member)} joined the team.", "info")
    return _back()


@bp.route("/team/requests/<int:request_id>/decline", methods=["POST"])
@login_required
def decline_request(request_id: int) -> ResponseReturnValue:
    """Decline a pending join request (captain)."""
    return _change(
        lambda session: teams.decide_request(session, _user(), request_id, accept=False),
        lambda applicant: f"The request of {_name(applicant)} was declined.",
    )


@bp.route("/team/requests/<int:request_id>/withdraw", methods=["POST"])
@login_required
def withdraw_request(request_id: int) -> ResponseReturnValue:
    """Take back one's own pending join request."""
    return _change(
        lambda session: teams.withdraw_own_request(session, _user(), request_id),
        lambda _: "Your join request was withdrawn.",
    )


@bp.route("/team/members/<int:user_id>/captain", methods=["POST"])
@login_required
def hand_over(user_id: int) -> ResponseReturnValue:
    """Hand the captaincy to another member (captain)."""
    return _change(
        lambda session: teams.hand_over(session, _user(), user_id),
        lambda member: f"{_name(member)} is now the captain.",
    )


@bp.route("/team/members/<int:user_id>/remove", methods=["POST"])
@login_required
def remove_member(user_id: int) -> ResponseReturnValue:
    """Remove a member from the team (captain)."""
    return _change(
        lambda session: teams.remove_member(session, _user(), user_id),
        lambda member: f"{_name(member)} was removed from the team.",
    )


@bp.route("/team/leave", methods=["POST"])
@login_required
def leave() -> ResponseReturnValue:
    """Leave the team (a captain's captaincy passes to the longest-standing member)."""
    confirmed()
    with unit_of(db()):
        outcome = teams.leave_team(db(), _user())
    gone = (
        " The team had no runs and no other members, so it was deleted." if outcome.deleted else ""
    )
    if outcome.captain is not None:
        heir = outcome.captain
        gone += f" {_name(heir)} is now its captain."
    flash(f"You left team {outcome.team}.{gone}", "info")
    return _back()


@bp.route("/teams/join/<code>", methods=["GET", "POST"])
@login_required
def join(code: str) -> ResponseReturnValue:
    """Show the team of an invite link with a confirm button; join it or ask to."""
    session = db()
    team = teams.team_by_code(session, code)
    user = _user()
    if user.is_organizer:
        abort(403, "Organizers cannot be team members.")
    if request.method == "POST":
        confirmed()
        with unit_of(session):
            outcome = teams.join_by_code(session, user, code)
        if outcome.joined:
            flash(f"You joined team {outcome.team.name}.", "info")
        else:
            flash(f"Your request to join team {outcome.team.name} was sent to its captain.", "info")
        return _back()
    return render_template(
        "teams/join.html",
        team=team,
        code=code,
        user=user,
        members=teams.member_count(session, team.id),
        at_once=teams.joins_at_once(session),
        confirm=ConfirmForm(),
    )
