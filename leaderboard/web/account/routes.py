"""Self-service accounts: sign-up, verification, resend, forgotten password, reset, account."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from flask import Blueprint, flash, make_response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required
from sqlalchemy.orm import Session

from leaderboard.models import User
from leaderboard.services.accounts.links import read_token, read_unexpired
from leaderboard.services.accounts.passwords import (
    change_password,
    reset_password,
    reset_target,
    update_profile,
    user_for_reset,
)
from leaderboard.services.common import settings as site
from leaderboard.services.common.errors import DomainError
from leaderboard.services.common.throttle import TooManyAttempts, claim_request
from leaderboard.services.signup.core import (
    SignUp,
    pending_verification,
    registration_refusal,
    resend_target,
    sign_up,
    stand_in,
    team_for_invite,
    verification_user,
    verify,
)
from leaderboard.services.signup.notices import Outbox, link_base
from leaderboard.unit_of_work import unit_of
from leaderboard.web.account.forms import (
    EmailForm,
    NewPasswordForm,
    PasswordChangeForm,
    ProfileForm,
    SignupForm,
)
from leaderboard.web.account.notifications import preferences_form
from leaderboard.web.common.context import db, now, settings
from leaderboard.web.common.extensions import start_session
from leaderboard.web.common.forms import ConfirmForm
from leaderboard.web.common.limits import counted
from leaderboard.web.common.outbox import outbox

bp = Blueprint("account", __name__)


def _too_many(exc: TooManyAttempts, template: str, **context: Any) -> ResponseReturnValue:
    minutes = -(-exc.retry_after // 60)
    flash(f"Too many requests; try again in {minutes} minute(s).", "error")
    resp = make_response(render_template(template, **context), 429)
    resp.headers["Retry-After"] = str(exc.retry_after)
    return resp


def _claimed(action: str, email: str) -> None:
    """Count a mailing request by address and account; raise TooManyAttempts when over."""
    remote = request.remote_addr or "unknown"
    counted(lambda s, at: claim_request(s, action, email, remote, at))


def _check_mail(email: str, what: str) -> ResponseReturnValue:
    # One page for known and unknown addresses alike: only the echoed address differs.
    return render_template("account/check_mail.html", email=email.strip(), what=what)


def _status(method: str) -> int:
    return 400 if method == "POST" else 200


# ---------------------------------------------------------------------------------- sign-up


def _invitation() -> tuple[str, DomainError | None]:
    """Return the address of the organizer's invitation in the link, or the link's fault."""
    token = request.args.get("invitation", "")
    if not token:
        return "", None
    try:
        payload = read_token(settings().secret_key, "invite", token, now())
    except DomainError as exc:
        return "", exc
    email = payload.get("e")
    return (email, None) if isinstance(email, str) else ("", None)


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> ResponseReturnValue:
    """Show the sign-up form; create an unverified account and mail its verification link."""
    if current_user.is_authenticated:
        return redirect(url_for("public.home"))
    link_base(settings())  # no base URL: refused (503) before anything is entered or stored
    session = db()
    invite_code = request.args.get("invite", "").strip()[:64]
    if invite_code and team_for_invite(session, invite_code) is None:
        invite_code = ""  # not a team's code: the refusal below (invite mode) or no team to join
    invited_email, bad_invitation = _invitation()
    terms = site.get(session, "terms")
    form = SignupForm()
    if request.method == "GET" and invited_email:
        form.email.data = invited_email
    page = {"form": form, "terms": terms, "invited_email": invited_email, "refusal": None}
    if bad_invitation is not None:
        page["refusal"] = f"{bad_invitation.message} Ask the organizers for a new invitation."
        return render_template("account/signup.html", **page), bad_invitation.status
    refusal = registration_refusal(session, invite_code, invited_email)
    if refusal is not None:
        page["refusal"] = refusal
        return render_template("account/signup.html", **page), (
            403 if request.method == "POST" else 200
        )
    if not form.validate_on_submit():
        return render_template("account/signup.html", **page), _status(request.method)
    if terms and not form.accept_terms.data:
        form.accept_terms.errors = ["Accept the terms to sign up."]
        return render_template("account/signup.html", **page), 400
    email = form.email.data or ""
    try:
        _claimed("signup", email)
    except TooManyAttempts as exc:
        return _too_many(exc, "account/signup.html", **page)
    entered = SignUp(
        email=email,
        display_name=form.display_name.data or "",
        password=form.password.data or "",
        affiliation=form.affiliation.data or "",
        accepted_terms=bool(form.accept_terms.data),
        invite_code=invite_code,
        invited_email=invited_email,
    )
    try:
        outcome = sign_up(session, entered, now())
    except DomainError as exc:
        page["error"] = exc.message
        return render_template("account/signup.html", **page), exc.status
    # One mail is built and signed whatever the address, and dropped for a disabled account.
    box = outbox()
    # The sign-up commits with its mail.
    with unit_of(session):
        if outcome.mail == "verify":
            box.verification(outcome.user, invite_code)
        elif outcome.mail == "pending":
            box.pending(outcome.user)
        else:
            box.already_registered(outcome.user, deliver=outcome.deliver)
    return _check_mail(email, "signup")


# ----------------------------------------------------------------------------- verification


@bp.route("/verify/<token>", methods=["GET", "POST"])
def verify_page(token: str) -> ResponseReturnValue:
    """Show a verification link's confirm button; verify the address when it is pressed."""
    session = db()
    try:
        payload = read_unexpired(settings().secret_key, "verify", token)
        user = verification_user(session, payload)
        pending = pending_verification(session, payload, now())
    except DomainError as exc:
        return render_template("account/verify.html", error=exc.message), exc.status
    code = payload.get("j") if isinstance(payload.get("j"), str) else ""
    after = f"/teams/join/{quote(code, safe='')}" if code else None
    login_link = url_for("auth.login", next=after) if after else url_for("auth.login")
    if pending is None:
        return render_template(
            "account/verify.html", already=True, email=user.email, login_link=login_link
        )
    if request.method == "POST":
        # The global CSRF check ran already; the confirm button carries the token.
        with unit_of(session):
            verify(session, payload, now())
        flash("Your e-mail address is confirmed. Log in to continue.", "info")
        return redirect(login_link)
    return render_template("account/verify.html", email=user.email, form=ConfirmForm())


def _mail_link(
    kind: str,
    template: str,
    form: EmailForm,
    find: Callable[[Session, str], User | None],
    send: Callable[[Outbox, User, bool], None],
) -> ResponseReturnValue:
    """Mail a link to the account an address names, if any; the same answer for any address.

    An address without such an account gets the same work done: a mail to a stand-in account
    is built and signed, then dropped instead of sent.
    """
    link_base(settings())
    if not form.validate_on_submit():
        return render_template(template, form=form), _status(request.method)
    email = form.email.data or ""
    try:
        _claimed(kind, email)
    except TooManyAttempts as exc:
        return _too_many(exc, template, form=form)
    user = find(db(), email)
    with unit_of(db()):
        send(outbox(), user or stand_in(email), user is not None)
    return _check_mail(email, kind)


@bp.route("/verify/resend", methods=["GET", "POST"])
def resend() -> ResponseReturnValue:
    """Mail a new verification link to an unverified account (the same answer for any address)."""
    form = EmailForm()
    if request.method == "GET" and request.args.get("email"):
        form.email.data = request.args.get("email", "")[:320]
    return _mail_link(
        "resend",
        "account/resend.html",
        form,
        resend_target,
        lambda box, user, deliver: box.verification(user, deliver=deliver),
    )


# --------------------------------------------------------------------------------- password


@bp.route("/password/forgot", methods=["GET", "POST"])
def forgot() -> ResponseReturnValue:
    """Mail a password-reset link to an account (the same answer for any address)."""
    return _mail_link(
        "reset",
        "account/forgot.html",
        EmailForm(),
        reset_target,
        lambda box, user, deliver: box.reset(user, deliver=deliver),
    )


@bp.route("/password/reset/<token>", methods=["GET", "POST"])
def reset(token: str) -> ResponseReturnValue:
    """Set a new password through a reset link; every session and API token of it ends."""
    session = db()
    try:
        payload = read_unexpired(settings().secret_key, "reset", token)
        user = user_for_reset(session, payload, now())
    except DomainError as exc:
        return render_template("account/reset.html", error=exc.message), exc.status
    form = NewPasswordForm()
    if not form.validate_on_submit():
        return render_template("account/reset.html", form=form, email=user.email), _status(
            request.method
        )
    try:
        with unit_of(session):
            reset_password(session, payload, form.password.data or "", now())
    except DomainError as exc:
        return render_template(
            "account/reset.html", form=form, email=user.email, form_error=exc.message
        ), exc.status
    flash(
        "Your new password is set; every earlier log-in has ended and every API token of the "
        "account was revoked. Log in with it.",
        "info",
    )
    return redirect(url_for("auth.login"))


# ------------------------------------------------------------------------------ the account


@bp.route("/account", methods=["GET", "POST"])
@login_required
def account_page() -> ResponseReturnValue:
    """Show and change the display name, affiliation and password."""
    user = current_user._get_current_object()
    changing_password = request.method == "POST" and (
        "current_password" in request.form or "password" in request.form
    )
    profile = ProfileForm(obj=None if request.method == "POST" else user)
    password = PasswordChangeForm()
    page: dict[str, Any] = {
        "user": user,
        "profile": profile,
        "password_form": password,
        "notify_form": preferences_form(),
    }
    if request.method == "GET":
        return render_template("account/account.html", **page)
    form = password if changing_password else profile
    if not form.validate_on_submit():
        return render_template("account/account.html", **page), 400
    try:
        with unit_of(db()):
            if changing_password:
                change_password(
                    db(), user, password.current_password.data or "", password.password.data or ""
                )
            else:
                update_profile(
                    db(), user, profile.display_name.data or "", profile.affiliation.data or ""
                )
    except DomainError as exc:
        page["error"] = exc.message
        return render_template("account/account.html", **page), exc.status
    if changing_password:
        # Every other session ended with the new generation; this one carries on with it.
        start_session(user)
        flash(
            "Password changed; you were logged out everywhere else and every API token of "
            "yours was revoked (make new ones under API tokens).",
            "info",
        )
    else:
        flash("Profile saved.", "info")
    return redirect(url_for("account.account_page"))
