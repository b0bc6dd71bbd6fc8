"""Real-browser tests: Playwright driving Debian's Chromium against a live gunicorn server."""
