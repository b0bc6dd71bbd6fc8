"""Run ``leaderboard`` commands through a Flask CLI runner."""

from __future__ import annotations

from flask.testing import FlaskCliRunner


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    """Run ``leaderboard ARGS`` and return the result."""
    return runner.invoke(args=["leaderboard", *args])
