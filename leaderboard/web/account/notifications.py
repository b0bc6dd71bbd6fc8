"""Notification settings on the account page, and the one-click unsubscribe links of mails."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required

from leaderboard.services.common.errors import DomainError
from leaderboard.services.notify.core import (
    KINDS,
    set_preferences,
    turned_off,
    unsubscribe,
    unsubscribe_target,
)
from leaderboard.unit_of_work import unit_of
from leaderboard.web.account.forms import NotificationsForm
from leaderboard.web.common.context import db, settings
from leaderboard.web.common.extensions import csrf
from leaderboard.web.common.forms import confirmed

bp = Blueprint("notifications", __name__)


def preferences_form() -> NotificationsForm:
    """Return the account page's notification form, ticked as the user's settings stand."""
    form = NotificationsForm()
    off = turned_off(db(), current_user.id)
    for kind in KINDS:
        getattr(form, f"notify_{kind}").data = kind not in off
    return form


@bp.route("/account/notifications", methods=["POST"])
@login_required
def save() -> ResponseReturnValue:
    """Store which kinds of notification mail the user wants."""
    form = NotificationsForm()
    confirmed(form)
    wanted = {kind: bool(getattr(form, f"notify_{kind}").data) for kind in KINDS}
    with unit_of(db()) as unit:
        set_preferences(unit.session, current_user._get_current_object(), wanted)
    flash("Notification settings saved.", "info")
    return redirect(url_for("account.account_page"))


# Mail clients POST the one-click unsubscribe (RFC 8058) with no CSRF token: the signed token
# in the path is what authorizes it, so only this view is exempt.
@bp.route("/unsubscribe/<token>", methods=["GET", "POST"])
@csrf.exempt
def unsubscribe_page(token: str) -> ResponseReturnValue:
    """Show a button that turns a kind of mail off; POST (one click, no log-in) turns it off."""
    session = db()
    secret = settings().secret_key
    try:
        if request.method == "POST":
            with unit_of(session):
                user, kind = unsubscribe(session, secret, token)
            done = True
        else:
            user, kind = unsubscribe_target(session, secret, token)
            done = False
    except DomainError as exc:
        return render_template("account/unsubscribe.html", error=exc.message), exc.status
    return render_template(
        "account/unsubscribe.html", email=user.email, what=KINDS[kind], done=done
    )
