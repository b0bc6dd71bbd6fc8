"""Organizer pages for accounts and the site: users (disable, enable, resend, invite), settings."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user

from leaderboard.services.common import settings as site
from leaderboard.services.common.errors import DomainError
from leaderboard.services.common.mail import NoBaseUrl
from leaderboard.services.signup.admin import (
    invitable,
    list_users,
    set_active,
    unverified_for_resend,
    user_by_id,
)
from leaderboard.unit_of_work import unit_of
from leaderboard.web.account.forms import EmailForm, SiteSettingsForm
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import ConfirmForm
from leaderboard.web.common.guards import organizer_post, organizer_required
from leaderboard.web.common.outbox import outbox

bp = Blueprint("organizer_accounts", __name__, url_prefix="/organizer")

USER_ACTIONS = ("disable", "enable", "resend")
#: The settings this page sets, in the order shown.
SETTINGS = ("registration", "max_team_size", "site_name", "terms")


def _actor() -> str:
    return str(current_user.email)


def _users_page(invite: EmailForm | None = None, status: int = 200) -> ResponseReturnValue:
    return render_template(
        "organizer/users.html",
        users=list_users(db()),
        invite=invite or EmailForm(),
        form=ConfirmForm(),
    ), status


@bp.route("/users")
@organizer_required
def users() -> ResponseReturnValue:
    """List every account with its team, verification and state, and invite people."""
    return _users_page()


@organizer_post(bp, "/users/<int:user_id>/<action>")
def user_action(user_id: int, action: str) -> ResponseReturnValue:
    """Disable or enable an account, or resend its verification link (audited)."""
    if action not in USER_ACTIONS:
        abort(404)
    session = db()
    user = user_by_id(session, user_id)
    email = user.email
    try:
        if action == "resend":
            box = outbox()  # no base URL: refused before anything is recorded
            with unit_of(session):
                target = unverified_for_resend(session, email, actor=_actor())
                box.verification(target)
            flash(f"Verification link to {email} queued: a worker sends it.", "info")
        elif action == "enable":
            with unit_of(session):
                set_active(session, user, True, actor=_actor())
            flash(f"{email} enabled (its API tokens stay revoked).", "info")
        else:
            with unit_of(session):
                set_active(session, user, False, actor=_actor())
            flash(
                f"{email} disabled: every session of it ended and every API token was revoked.",
                "info",
            )
    except NoBaseUrl as exc:
        flash(exc.message, "error")
        return _users_page(status=exc.status)
    except DomainError as exc:
        flash(exc.message, "error")
    return redirect(url_for("organizer_accounts.users"))


@organizer_post(bp, "/users/invite")
def invite() -> ResponseReturnValue:
    """Mail a signed sign-up link for one address (audited)."""
    form = EmailForm()
    if not form.validate_on_submit():
        return _users_page(form, 400)
    try:
        box = outbox()  # no base URL: refused before anything is recorded
        with unit_of(db()):
            email = invitable(db(), form.email.data or "", actor=_actor())
            box.invitation(email, _actor())
    except DomainError as exc:
        flash(exc.message, "error")
        return _users_page(form, exc.status)
    flash(f"Invitation to {email} queued: a worker sends it.", "info")
    return redirect(url_for("organizer_accounts.users"))


@bp.route("/settings", methods=["GET", "POST"])
@organizer_required
def site_settings() -> ResponseReturnValue:
    """Show and set the site settings (audited)."""
    session = db()
    current = site.all_settings(session)
    posted = request.method == "POST"
    form = SiteSettingsForm() if posted else SiteSettingsForm(data=current)
    page = {"form": form, "specs": site.SPECS, "current": current, "names": SETTINGS}
    if not posted:
        return render_template("organizer/settings.html", **page)
    if not form.validate_on_submit():
        return render_template("organizer/settings.html", **page), 400
    values = {name: str(getattr(form, name).data or "") for name in SETTINGS}
    try:
        with unit_of(session):
            changed = site.set_values(session, values, actor=_actor())
    except DomainError as exc:
        page["error"] = exc.message
        return render_template("organizer/settings.html", **page), exc.status
    flash(f"Saved: {', '.join(changed)}." if changed else "Nothing changed.", "info")
    return redirect(url_for("organizer_accounts.site_settings"))
