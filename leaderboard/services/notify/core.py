"""Queue a notification mail to a user, unless they turned its kind off; unsubscribe links."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from leaderboard.config import SESSION_SETTINGS, Settings
from leaderboard.db import get_row
from leaderboard.models import NotificationOptOut, User, utcnow
from leaderboard.services.accounts.links import BadLink, make_token, read_unexpired
from leaderboard.services.common import mail, outbox
from leaderboard.services.common import settings as site
from leaderboard.services.common.errors import NotFound

log = logging.getLogger("leaderboard.notify")

JOIN_REQUESTS = "join_requests"
RESULTS_RELEASED = "results_released"
DEADLINE = "deadline"
REJECTED_API = "rejected_api"
ORGANIZER_MESSAGES = "organizer_messages"

#: Every kind of notification, with what the account page and the mail's footer call it.
KINDS: dict[str, str] = {
    JOIN_REQUESTS: "join requests to your team and decisions on your own requests",
    RESULTS_RELEASED: "results released for a subtask your team submitted to",
    DEADLINE: "a deadline 24 hours ahead while your team has no ranked run in it",
    REJECTED_API: "runs refused when uploaded through the API",
    ORGANIZER_MESSAGES: "messages from the organizers",
}
_PURPOSE = "unsubscribe"
#: Unsubscribe tokens carry a fixed time: the same link for a user and kind every time.
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def turned_off(session: Session, user_id: int) -> set[str]:
    """Return the kinds of mail a user turned off."""
    return set(
        session.scalars(
            select(NotificationOptOut.kind).where(NotificationOptOut.user_id == user_id)
        )
    )


def opted_out_users(session: Session, kind: str) -> set[int]:
    """Return the ids of the users who turned ``kind`` off."""
    return set(
        session.scalars(select(NotificationOptOut.user_id).where(NotificationOptOut.kind == kind))
    )


def _set_off(session: Session, user_id: int, kinds: Iterable[str]) -> None:
    for kind in kinds:
        session.add(NotificationOptOut(user_id=user_id, kind=kind))


def set_preferences(session: Session, user: User, wanted: dict[str, bool]) -> None:
    """Store which kinds of mail the user wants (kinds not named keep their setting)."""
    unknown = set(wanted) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown notification kinds {sorted(unknown)}")
    off = turned_off(session, user.id)
    now_off = {k for k, on in wanted.items() if not on}
    now_on = {k for k, on in wanted.items() if on}
    session.execute(
        delete(NotificationOptOut).where(
            NotificationOptOut.user_id == user.id, NotificationOptOut.kind.in_(now_on)
        )
    )
    _set_off(session, user.id, now_off - off)


def unsubscribe_token(secret: str, user_id: int, kind: str) -> str:
    """Return the signed token of a link that turns ``kind`` off for a user (it does not expire)."""
    return make_token(secret, _PURPOSE, {"u": user_id, "k": kind}, _EPOCH)


def unsubscribe_target(session: Session, secret: str, token: str) -> tuple[User, str]:
    """Return the user and kind an unsubscribe token names; raise BadLink or NotFound."""
    payload = read_unexpired(secret, _PURPOSE, token)
    user_id, kind = payload.get("u"), payload.get("k")
    if not isinstance(user_id, int) or kind not in KINDS:
        raise BadLink("This unsubscribe link is not valid.")
    user = get_row(session, User, user_id)
    if user is None:
        raise NotFound("This unsubscribe link names no account (it may have been deleted).")
    return user, str(kind)


def unsubscribe(session: Session, secret: str, token: str) -> tuple[User, str]:
    """Turn off the kind of mail an unsubscribe token names (again: nothing changes)."""
    user, kind = unsubscribe_target(session, secret, token)
    if kind not in turned_off(session, user.id):
        _set_off(session, user.id, [kind])
    return user, kind


def _wants(user: User, off: set[int]) -> bool:
    """Return whether a mail may go to the user: active, verified, not among ``off``."""
    return user.is_active and user.verified_at is not None and user.id not in off


def reachable(session: Session, users: Iterable[User], kind: str) -> list[User]:
    """Return the users a mail of ``kind`` would reach: active, verified, not opted out."""
    off = opted_out_users(session, kind)
    seen: set[int] = set()
    found = []
    for user in users:
        if user.id in seen or not _wants(user, off):
            continue
        seen.add(user.id)
        found.append(user)
    return found


def notify_all(
    session: Session,
    users: Iterable[User],
    kind: str,
    subject: str,
    body: str,
    *,
    html: str | None = None,
) -> int:
    """Queue one mail of ``kind`` to each user who wants it; return how many were queued."""
    off = opted_out_users(session, kind)
    return sum(notify(session, u, kind, subject, body, html=html, skip=off) for u in users)


def _settings(session: Session) -> Settings | None:
    found = session.info.get(SESSION_SETTINGS)
    return found if isinstance(found, Settings) else None


def can_mail_links(session: Session) -> bool:
    """Return whether notifications can be sent: the server knows its base URL."""
    settings = _settings(session)
    return settings is not None and bool(link_base_of(settings))


def link_base_of(settings: Settings) -> str:
    """Return the start of links in mail (base URL, else site URL), or "" without either."""
    return settings.base_url or settings.site_url.strip().rstrip("/")


def notify(
    session: Session,
    user: User,
    kind: str,
    subject: str,
    body: str,
    *,
    html: str | None = None,
    skip: set[int] | None = None,
) -> bool:
    """Put a notification mail to a user in the outbox (queued on commit); False when not.

    Not sent: the user turned ``kind`` off (``skip`` holds the ids of those who did, when the
    caller looked them up for many at once), is disabled or unverified, or the server has no
    base URL to build the unsubscribe link from.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown notification kind {kind!r}")
    if not _wants(user, skip if skip is not None else opted_out_users(session, kind)):
        return False
    settings = _settings(session)
    base = link_base_of(settings) if settings is not None else ""
    if settings is None or not base:
        log.warning("no LEADERBOARD_BASE_URL: %s notification to user %s not sent", kind, user.id)
        return False
    link = f"{base}/unsubscribe/{unsubscribe_token(settings.secret_key, user.id, kind)}"
    site_name = site.get(session, "site_name")
    text = (
        f"{body.rstrip()}\n\n-- \n"
        f"You get this mail from {site_name} for {KINDS[kind]}. "
        f"To stop mails of this kind, open this link (or change it on your account page):\n"
        f"{link}\n"
    )
    try:
        message = mail.compose(settings.mail_from, user.email, f"[{site_name}] {subject}", text)
    except mail.MailError as exc:
        log.error("notification to user %s not sent: %s", user.id, exc)
        return False
    # RFC 8058: one click (a POST of this body to the link) unsubscribes, with no log-in.
    message["List-Unsubscribe"] = f"<{link}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    if html is not None:
        footer = (
            f"<hr><p>You get this mail from {escape(site_name)} for {escape(KINDS[kind])}. "
            f'<a href="{escape(link)}">Stop mails of this kind</a>.</p>'
        )
        message.add_alternative(f"{html}\n{footer}\n", subtype="html")
    outbox.put(session, message, kind=kind, now=utcnow(), line_length=998)
    return True
