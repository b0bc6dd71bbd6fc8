"""The user's API tokens in the browser: list, create (shown once) and revoke."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required

from leaderboard.models import User
from leaderboard.services.accounts.core import create_own_token, revoke_own_token, tokens_of
from leaderboard.services.common.errors import DomainError
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import ConfirmForm, TokenForm

bp = Blueprint("tokens", __name__)


def _user() -> User:
    return current_user._get_current_object()


def _page(form: TokenForm, new_token: str | None = None, status: int = 200) -> ResponseReturnValue:
    return (
        render_template(
            "participant/tokens.html",
            form=form,
            revoke_form=ConfirmForm(),
            tokens=tokens_of(db(), _user()),
            new_token=new_token,
        ),
        status,
    )


@bp.route("/account/tokens", methods=["GET", "POST"])
@login_required
def tokens_page() -> ResponseReturnValue:
    """List the user's tokens; create a named one, shown once on the answer."""
    form = TokenForm()
    if not form.is_submitted():
        return _page(form)
    if not form.validate():
        return _page(form, status=400)
    try:
        with unit_of(db()) as unit:
            token = create_own_token(unit.session, _user(), form.name.data or "")
    except DomainError as exc:
        form.name.errors = [*form.name.errors, exc.message]
        return _page(form, status=exc.status)
    fresh = TokenForm(formdata=None)
    return _page(fresh, new_token=token)


@bp.route("/account/tokens/<int:token_id>/revoke", methods=["POST"])
@login_required
def revoke(token_id: int) -> ResponseReturnValue:
    """Revoke one of the user's tokens; another user's token answers 404."""
    form = ConfirmForm()
    if not form.validate_on_submit():
        return _page(TokenForm(formdata=None), status=400)
    with unit_of(db()) as unit:
        row = revoke_own_token(unit.session, _user(), token_id)
    flash(f"Token {row.prefix}… was revoked.", "info")
    return redirect(url_for("tokens.tokens_page"))
