"""Production entry point: ``gunicorn wsgi:app`` (and ``flask leaderboard …``, found here first)."""

from leaderboard.cli import register
from leaderboard.web import create_app

app = register(create_app())
