"""Log in and out."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, make_response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required

from leaderboard.services.accounts.core import authenticate
from leaderboard.services.common.throttle import TooManyAttempts, attempt_succeeded, claim_attempt
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db
from leaderboard.web.common.extensions import end_session, start_session
from leaderboard.web.common.forms import LoginForm
from leaderboard.web.common.limits import counted

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Return a local redirect target only; anything else goes home."""
    if not target:
        return url_for("public.home")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("public.home")
    return target


@bp.route("/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    """Show the login form and log a user in."""
    if current_user.is_authenticated:
        return redirect(url_for("public.home"))
    form = LoginForm()
    if form.validate_on_submit():
        email = form.email.data or ""
        remote = request.remote_addr or "unknown"
        try:
            # Counted and committed before the password is checked, so parallel guesses cannot
            # slip past and a wrong one stays counted.
            attempt = counted(lambda s, at: claim_attempt(s, email, remote, at))
        except TooManyAttempts as exc:
            minutes = -(-exc.retry_after // 60)
            flash(f"Too many failed log-ins; try again in {minutes} minute(s).", "error")
            resp = make_response(render_template("auth/login.html", form=form), 429)
            resp.headers["Retry-After"] = str(exc.retry_after)
            return resp
        with unit_of(db()):
            user = authenticate(db(), email, form.password.data or "")
            if user is not None:
                # The right password gives the attempt's slots back, verified address or not.
                attempt_succeeded(db(), attempt)
        if user is not None and user.verified_at is None:
            # The right password, but the address is unconfirmed: no session, a resend offer.
            flash("Your e-mail address is not verified yet; open the link we mailed you.", "error")
            return render_template("auth/login.html", form=form, unverified=user.email), 403
        if user is not None:
            start_session(user)
            return redirect(_safe_next(request.args.get("next")))
        flash("Wrong e-mail address or password.", "error")
        return render_template("auth/login.html", form=form), 401
    status = 400 if request.method == "POST" else 200
    return render_template("auth/login.html", form=form), status


@bp.route("/logout", methods=["POST"])
@login_required
def logout() -> ResponseReturnValue:
    """Log the current user out, ending every session of theirs."""
    end_session(current_user)
    return redirect(url_for("public.home"))
