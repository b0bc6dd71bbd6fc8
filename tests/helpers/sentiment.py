"""The classification example hosted as ``example-sentiment``: files, run URL, analyses."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from leaderboard.services.jobs import analyses
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.unit_of_work import opened
from tests.helpers.jobs import sessions

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SENTIMENT = EXAMPLES / "classification"
PATH = "/api/v1/tasks/example-sentiment/A/runs"


def queue(app: Flask, request: Request) -> int:
    """Ask for an analysis of the example's subtask A as the organizer; return the job's id."""
    with opened(sessions(app)) as unit:
        target = resolve(unit.session, "example-sentiment", "A")
        return analyses.request_analysis(unit.session, target, request, actor="org@example.org").id
