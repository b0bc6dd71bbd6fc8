"""Jinja filters: times always shown with their zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from flask import Flask

from leaderboard.web.context import settings


def format_time(value: datetime | None) -> str:
    """Render a UTC time with its zone, plus the configured display zone when it differs."""
    if value is None:
        return ""
    utc = value.strftime("%Y-%m-%d %H:%M:%S UTC")
    tz = settings().display_timezone
    if tz in ("UTC", "Etc/UTC"):
        return utc
    local = value.astimezone(ZoneInfo(tz))
    return f"{utc} ({local.strftime('%Y-%m-%d %H:%M %Z')})"


def init_filters(app: Flask) -> None:
    """Register the template filters."""
    app.jinja_env.filters["utc"] = format_time
