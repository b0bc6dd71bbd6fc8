"""Links in notification mail: a page of the site, as an absolute URL built from its base URL."""

from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.config import SESSION_SETTINGS, Settings
from leaderboard.services.common.urls import absolute_url
from leaderboard.services.notify.core import link_base_of


def mail_base(session: Session) -> str:
    """Return the base URL links in mail start with ("" when the server has none)."""
    settings = session.info.get(SESSION_SETTINGS)
    return link_base_of(settings) if isinstance(settings, Settings) else ""


def site_link(session: Session, path: str) -> str:
    """Return the absolute URL of a page of the site, for a mail (a path only without a base).

    Without a base URL no notification is sent at all, so the bare path is never mailed.
    """
    return absolute_url(mail_base(session), path)
