"""The request's mail builder: account and organizer pages put their mail in the outbox."""

from __future__ import annotations

from leaderboard.services.common import settings as site
from leaderboard.services.common.mail import Transport
from leaderboard.services.signup.notices import Outbox, link_base
from leaderboard.web.common.context import db, now, settings


def outbox() -> Outbox:
    """Return the mail builder of this request (its mail is queued for the workers).

    Raise NoBaseUrl (503) when no base URL is configured: links never start with the
    request's Host header, which the client chooses.
    """
    config = settings()
    return Outbox(
        transport=Transport.parse(config.mail_url),
        sender=config.mail_from,
        secret=config.secret_key,
        base_url=link_base(config),
        site_name=site.get(db(), "site_name"),
        now=now(),
        session=db(),
    )
