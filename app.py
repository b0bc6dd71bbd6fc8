"""Development entry point: ``flask --app app run``."""

from leaderboard.web import create_app

app = create_app()
