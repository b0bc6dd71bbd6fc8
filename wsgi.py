"""Production entry point: ``gunicorn wsgi:app``."""

from leaderboard.web import create_app

app = create_app()
