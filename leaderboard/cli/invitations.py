"""Account mail from the command line: invitations and verification links."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from leaderboard.cli import common
from leaderboard.services.common.errors import DomainError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from leaderboard.services.signup.notices import Outbox


def _outbox(session: Session) -> Outbox:
    """Return a mail builder that sends at once, with links from the configured base URL."""
    from leaderboard.services.common import settings as site
    from leaderboard.services.common.mail import NoBaseUrl, Transport
    from leaderboard.services.signup.notices import Outbox, link_base

    config = common.settings()
    try:
        base = link_base(config)
    except NoBaseUrl as exc:
        common.fail(exc.message)
    return Outbox(
        transport=Transport.parse(config.mail_url),
        sender=config.mail_from,
        secret=config.secret_key,
        base_url=base,
        site_name=site.get(session, "site_name"),
        now=common.now(),
        session=session,
        background=False,
    )


def _send_now(session: Session, box: Outbox) -> None:
    """Commit the mails with their cause, then send them; raise MailError when one must wait."""
    from leaderboard.services.common import outbox
    from leaderboard.services.common.mail import MailError
    from leaderboard.states import MailStatus
    from leaderboard.unit_of_work import unit_of
    from leaderboard.worker.jobs import deliver_mail

    unit_of(session).commit()
    while box.unsent:
        outbox_id = box.unsent.pop(0)
        done = deliver_mail(session, outbox_id, box.transport, box.now)
        if done.status == MailStatus.QUEUED:
            reason = outbox.last_error(session, outbox_id)
            raise MailError(f"{reason} (the mail stays in the outbox: a worker tries again later)")


def _mail(send: Callable[[Session], str]) -> None:
    from leaderboard.services.common.mail import MailError

    with common.session() as session:
        try:
            report = send(session)
        except (DomainError, MailError) as exc:
            common.fail(exc.message if isinstance(exc, DomainError) else str(exc))
    click.echo(report)


@common.change_command("invite", click.argument("email"), run=_mail)
def invite_cmd(session: Session, email: str) -> str:
    """Mail EMAIL a signed sign-up link (works in every registration mode but closed)."""
    from leaderboard.services.signup.admin import invitable

    box = _outbox(session)
    address = invitable(session, email, actor=common.actor())
    box.invitation(address, "The organizers")
    _send_now(session, box)
    return f"Invitation sent to {address}."


@common.change_command("resend-verification", click.argument("email"), run=_mail)
def resend_verification_cmd(session: Session, email: str) -> str:
    """Mail an unverified account a new verification link."""
    from leaderboard.services.signup.admin import unverified_for_resend

    box = _outbox(session)
    user = unverified_for_resend(session, email, actor=common.actor())
    box.verification(user)
    _send_now(session, box)
    return f"Verification link sent to {user.email}."


COMMANDS = (invite_cmd, resend_verification_cmd)
