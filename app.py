"""Development entry point: ``flask --app app run``, and ``flask --app app leaderboard …``."""

from leaderboard.cli import register
from leaderboard.web import create_app

app = register(create_app())
