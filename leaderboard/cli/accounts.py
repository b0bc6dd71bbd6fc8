"""Accounts: teams, users, passwords and API tokens."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import click

from leaderboard.cli import common
from leaderboard.cli.common import with_appcontext
from leaderboard.services.common.errors import DomainError
from leaderboard.states import Role

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

#: The roles' values (click would offer an enum's member names); no service is loaded to parse.
ROLES = tuple(role.value for role in Role)


@click.command("create-team")
@click.argument("name")
@with_appcontext
def create_team_cmd(name: str) -> None:
    """Create a team."""
    from leaderboard.services.accounts import core as accounts

    common.report_change(
        lambda s: f"Created team {accounts.create_team(s, name, actor=common.actor()).name!r}."
    )


@click.command("create-user")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--team", help="The participant's team.")
@click.option("--password", help="Password (default: a random one, printed once).")
@with_appcontext
def create_user_cmd(email: str, role: str, team: str | None, password: str | None) -> None:
    """Create an organizer or a participant account."""
    from leaderboard.services.accounts import core as accounts

    generated = password is None
    chosen = password or secrets.token_urlsafe(12)

    def create(s: Session) -> str:
        user = accounts.create_user(
            s, email, role=role, team=team, password=chosen, actor=common.actor()
        )
        return f"Created {user.role} {user.email}" + (f" in team {team!r}." if team else ".")

    common.report_change(create)
    if generated:
        click.echo(f"Password: {chosen}")


@common.change_command("set-password", click.argument("email"), click.password_option())
def set_password_cmd(s: Session, email: str, password: str) -> str:
    """Set a user's password (every session of the user ends, every API token is revoked)."""
    from leaderboard.services.accounts import core as accounts

    accounts.set_password(s, email, password, actor=common.actor())
    return "Password set; every session of the user has ended and every API token was revoked."


@common.change_command("disable-user", click.argument("email"))
def disable_user_cmd(s: Session, email: str) -> str:
    """Disable an account: it cannot log in, its sessions end and its API tokens are revoked."""
    from leaderboard.services.accounts import core as accounts

    accounts.disable_user(s, email, actor=common.actor())
    return (
        f"Disabled {email.strip().lower()}; every session of the user has ended and every "
        "API token was revoked."
    )


@common.change_command("enable-user", click.argument("email"))
def enable_user_cmd(s: Session, email: str) -> str:
    """Let a disabled account log in again (its old sessions stay ended)."""
    from leaderboard.services.accounts import core as accounts

    accounts.enable_user(s, email, actor=common.actor())
    return f"Enabled {email.strip().lower()}."


@common.change_command(
    "token",
    click.argument("email"),
    click.option("--revoke", is_flag=True, help="Revoke every token of this user instead."),
    click.option("--name", default="", help="A name for the token (shown on /account/tokens)."),
)
def token_cmd(s: Session, email: str, revoke: bool, name: str) -> str:
    """Print a new API token for a user (or revoke all of the user's tokens)."""
    from leaderboard.services.accounts import core as accounts

    if revoke:
        return f"Revoked {accounts.revoke_tokens(s, email, actor=common.actor())} token(s)."
    return accounts.issue_token(s, email, name=name, actor=common.actor())


@click.command("settings")
@click.argument("name", required=False)
@click.argument("value", required=False)
@with_appcontext
def settings_cmd(name: str | None, value: str | None) -> None:
    """Show the site settings, or set NAME to VALUE (registration, max_team_size, ...)."""
    from leaderboard.services.common import settings

    if value is None:
        with common.session() as session:
            try:
                values = settings.all_settings(session)
                if name is not None:
                    values = {name: settings.get(session, name)}
            except DomainError as exc:
                common.fail(exc.message)
        for key, current in values.items():
            click.echo(f"{key} = {current}")
        return
    chosen = name or ""
    common.report_change(
        lambda s: f"{chosen} = {settings.set_value(s, chosen, value, actor=common.actor())}"
    )


COMMANDS = (
    settings_cmd,
    create_team_cmd,
    create_user_cmd,
    set_password_cmd,
    disable_user_cmd,
    enable_user_cmd,
    token_cmd,
)
