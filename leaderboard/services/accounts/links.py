"""Signed, expiring links for mail: verification, password reset and invitations."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from leaderboard.services.common.errors import DomainError

#: How long each kind of link stays valid.
LIFETIMES = {
    "verify": timedelta(days=7),
    "reset": timedelta(hours=1),
    "invite": timedelta(days=14),
}


class BadLink(DomainError):
    """A link was altered, is for something else, or names nothing."""

    status = 400


class ExpiredLink(DomainError):
    """A link was genuine but its time is over."""

    status = 410


def _serializer(secret: str, purpose: str) -> URLSafeSerializer:
    # A salt per purpose: a reset link cannot pass for a verification link.
    return URLSafeSerializer(secret, salt=f"leaderboard.{purpose}")


def make_token(secret: str, purpose: str, payload: dict[str, Any], now: datetime) -> str:
    """Sign ``payload`` for ``purpose``, stamped with the server clock's time."""
    return str(_serializer(secret, purpose).dumps({**payload, "iat": int(now.timestamp())}))


def read_token(secret: str, purpose: str, token: str, now: datetime) -> dict[str, Any]:
    """Return a link's payload; raise BadLink (altered) or ExpiredLink (too old)."""
    payload = read_unexpired(secret, purpose, token)
    check_age(purpose, payload, now)
    return payload


def read_unexpired(secret: str, purpose: str, token: str) -> dict[str, Any]:
    """Return a genuine link's payload without looking at its age; raise BadLink otherwise."""
    try:
        payload = _serializer(secret, purpose).loads(token[:4000])
    except BadSignature:
        raise BadLink("This link is not valid: it was changed or cut short.") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("iat"), int):
        raise BadLink("This link is not valid.")
    return payload


def check_age(purpose: str, payload: dict[str, Any], now: datetime) -> None:
    """Raise ExpiredLink when a link is older than its purpose allows (or from the future)."""
    age = now.timestamp() - payload["iat"]
    lifetime = LIFETIMES[purpose]
    # A little slack for clocks of several workers; a link from far ahead is not accepted.
    if age > lifetime.total_seconds() or age < -300:
        hours = lifetime.total_seconds() / 3600
        span = f"{int(hours // 24)} days" if hours >= 48 else f"{hours:g} hour(s)"
        raise ExpiredLink(f"This link has expired (links of this kind last {span}).")


def fingerprint(password_hash: str | None) -> str:
    """Return a short digest of a password hash: any password change invalidates reset links."""
    return hashlib.sha256((password_hash or "").encode()).hexdigest()[:20]


def check_link(
    purpose: str, payload: dict[str, Any], password_hash: str | None, now: datetime, changed: str
) -> None:
    """Raise BadLink saying ``changed`` when the password changed since the link, or ExpiredLink."""
    if payload.get("h") != fingerprint(password_hash):
        raise BadLink(changed)
    check_age(purpose, payload, now)


def absolute(base: str, path: str) -> str:
    """Join the site's base URL and a path."""
    return base.rstrip("/") + path
