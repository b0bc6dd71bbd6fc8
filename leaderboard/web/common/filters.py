"""Jinja filters: times always shown with their zone, issues with their line once."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import Flask

from leaderboard.clock import in_zone
from leaderboard.formats.issues import Issue, located
from leaderboard.tasks.definition import subtask_heading
from leaderboard.web.common.context import settings


def format_time(value: datetime | None) -> str:
    """Render a UTC time with its zone, plus the configured display zone when it differs."""
    if value is None:
        return ""
    utc = value.strftime("%Y-%m-%d %H:%M:%S UTC")
    tz = settings().display_timezone
    if tz in ("UTC", "Etc/UTC"):
        return utc
    local = in_zone(value, ZoneInfo(tz))
    if local is None:
        return utc
    return f"{utc} ({local.strftime('%Y-%m-%d %H:%M %Z')})"


def issue_parts(issue: Issue | Mapping[str, Any]) -> tuple[str, str]:
    """Return an issue's line label and message (an Issue, or its API form), the line once."""
    if isinstance(issue, Issue):
        return located(issue.line, issue.message)
    return located(issue.get("line"), str(issue.get("message", "")))


def init_filters(app: Flask) -> None:
    """Register the template filters."""
    app.jinja_env.filters["utc"] = format_time
    app.jinja_env.filters["issue_parts"] = issue_parts
    app.jinja_env.globals["subtask_heading"] = subtask_heading
