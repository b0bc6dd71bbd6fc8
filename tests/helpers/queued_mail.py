"""Read the notification mail a test app queued."""

from __future__ import annotations

from email.message import EmailMessage

from flask import Flask

from leaderboard.services.common import mail


def queued(app: Flask, clear: bool = True) -> list[EmailMessage]:
    """Return the notification mails queued so far (and forget them)."""
    dispatcher = app.extensions["leaderboard"]["dispatcher"]
    mails = [mail.parse(text) for text in dispatcher.mails]
    if clear:
        dispatcher.sent.clear()
        dispatcher.mails.clear()
    return mails


def recipients(app: Flask) -> list[str]:
    """Return the addresses of the mails queued so far, sorted (and forget them)."""
    return sorted(str(m["To"]) for m in queued(app))
