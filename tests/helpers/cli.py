"""Run ``leaderboard`` commands through a Flask CLI runner."""

from __future__ import annotations

import json
from typing import Any

from flask.testing import FlaskCliRunner


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    """Run ``leaderboard ARGS`` and return the result."""
    return runner.invoke(args=["leaderboard", *args])


def json_of(runner: FlaskCliRunner, *args: str) -> Any:
    """Run ``leaderboard ARGS``, which must succeed, and return its standard output as JSON."""
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
