"""Site settings: ``leaderboard settings`` shows, checks, stores and audits them."""

from __future__ import annotations

from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import AuditEvent
from tests.helpers.cli import invoke


def test_defaults_are_shown(runner: FlaskCliRunner) -> None:
    result = invoke(runner, "settings")
    assert result.exit_code == 0
    assert "registration = open" in result.output
    assert "max_team_size = 10" in result.output


def test_set_and_read_back(runner: FlaskCliRunner, session: Session) -> None:
    assert invoke(runner, "settings", "registration", "Approval").exit_code == 0
    assert invoke(runner, "settings", "registration").output.strip() == "registration = approval"
    assert invoke(runner, "settings", "max_team_size", "3").exit_code == 0
    assert invoke(runner, "settings", "max_team_size").output.strip() == "max_team_size = 3"
    events = session.scalars(select(AuditEvent).where(AuditEvent.action == "set-setting")).all()
    assert [(e.details["name"], e.details["old"], e.details["new"]) for e in events] == [
        ("registration", "open", "approval"),
        ("max_team_size", "10", "3"),
    ]


def test_bad_values_are_refused_and_change_nothing(runner: FlaskCliRunner) -> None:
    mode = invoke(runner, "settings", "registration", "sometimes")
    assert mode.exit_code == 1 and "open, approval, invite, closed" in mode.output
    size = invoke(runner, "settings", "max_team_size", "0")
    assert size.exit_code == 1 and "between 1 and 1000" in size.output
    word = invoke(runner, "settings", "max_team_size", "ten")
    assert word.exit_code == 1 and "'ten'" in word.output
    unknown = invoke(runner, "settings", "colour", "blue")
    assert unknown.exit_code == 1 and "Unknown setting 'colour'" in unknown.output
    shown = invoke(runner, "settings").output
    assert "registration = open" in shown and "max_team_size = 10" in shown
