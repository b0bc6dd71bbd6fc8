"""Jinja filters: times always shown with their zone, issues with their line once."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flask import Flask

from leaderboard.clock import utc_and_local
from leaderboard.formats.issues import Issue, located
from leaderboard.tasks.definition import subtask_heading
from leaderboard.web.common.context import settings


def format_time(value: datetime | None) -> str:
    """Render a UTC time with its zone, plus the configured display zone when it differs."""
    if value is None:
        return ""
    return utc_and_local(
        value, settings().display_timezone, "%Y-%m-%d %H:%M:%S UTC", "%Y-%m-%d %H:%M %Z"
    )


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
