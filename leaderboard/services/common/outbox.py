"""The mail outbox: a row per mail, written with its cause, delivered once by a worker.

The queue carries only a row's id, so no broker holds a mail's text (links in mail hold
secrets); a mail whose message was lost (the broker was down at the commit) is sent again by
the sweep; a worker takes a row before sending it, so two deliveries of one id send once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from leaderboard.jobqueue import SEND_MAIL, enqueue
from leaderboard.models import OutboxMail
from leaderboard.services.common import mail
from leaderboard.states import MailStatus

#: Attempts after the first before a mail counts as failed (about two hours of backoff).
RETRIES = 8
#: Seconds before the first retry; doubled each time, up to BACKOFF_MAX.
BACKOFF = 15
BACKOFF_MAX = 900
#: A queued mail not taken this long after its id was handed on (or its retry was due) is lost.
LOST_AFTER = timedelta(minutes=5)
#: A mail taken this long ago and still not sent: its worker died while sending.
SENDING_LOST_AFTER = timedelta(minutes=15)
#: The longest reason for a failure kept (a transport's answer, never the mail's text).
ERROR_LENGTH = 500


def put(
    session: Session,
    message: EmailMessage,
    *,
    kind: str,
    now: datetime,
    deliver: bool = True,
    line_length: int = 78,
    queue: bool = True,
) -> OutboxMail:
    """Add a mail to the outbox in the session's transaction; its id is queued on commit.

    Not ``queue``: the caller sends it itself once committed (the sweep, if that fails).
    """
    row = OutboxMail(
        kind=kind,
        recipient=str(message["To"]),
        message=mail.serialize(message, line_length=line_length),
        deliver=deliver,
        status=MailStatus.QUEUED,
        attempts=0,
        last_error="",
        created_at=now,
        queued_at=now,
    )
    session.add(row)
    session.flush()
    if queue:
        enqueue(session, SEND_MAIL, row.id)
    return row


def backoff(attempts: int) -> int:
    """Return the seconds to wait before retrying a mail that failed ``attempts`` times."""
    base = min(BACKOFF_MAX, BACKOFF * 2 ** max(attempts - 1, 0))
    # Jitter, so that mails failing together do not come back together.
    return random.randint(base // 2, base) if base > 1 else base


@dataclass(frozen=True)
class Delivery:
    """What became of one delivery of a mail's id."""

    status: MailStatus | None
    #: Seconds until the next attempt, when the mail is queued again after a failure.
    retry_in: int | None = None


def take(session: Session, outbox_id: int, now: datetime) -> OutboxMail | None:
    """Mark a queued mail as being sent by this worker; None when another has it or it is done.

    The caller commits the claim before sending, so no transaction waits on the transport.
    """
    # One conditional UPDATE: of two workers given the same id, only one changes the row.
    taken = session.execute(
        update(OutboxMail)
        .where(OutboxMail.id == outbox_id, OutboxMail.status == MailStatus.QUEUED)
        .values(status=MailStatus.SENDING, attempts=OutboxMail.attempts + 1, queued_at=now)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        return None
    return session.get(OutboxMail, outbox_id, populate_existing=True)


def send(row: OutboxMail, transport: mail.Transport) -> str | None:
    """Send a taken mail (not one to drop) without touching the database; return why it failed."""
    if not row.deliver or row.message is None:
        return None
    try:
        mail.send(transport, mail.parse(row.message))
    except Exception as exc:  # retried like a refusal, never left "sending" for ever
        # A transport's answer is kept; of anything else only its kind (it may quote the mail).
        return str(exc) if isinstance(exc, mail.MailError) else type(exc).__name__
    return None


def record(row: OutboxMail, failure: str | None, now: datetime) -> Delivery:
    """Record on a taken mail's row what became of its sending (its session's owner commits)."""
    if not row.deliver or row.message is None:
        return _finish(row, MailStatus.DROPPED, now)
    if failure is None:
        return _finish(row, MailStatus.SENT, now)
    row.last_error = failure[:ERROR_LENGTH]
    if row.attempts > RETRIES:
        return _finish(row, MailStatus.FAILED, now)
    wait = backoff(row.attempts)
    row.status = MailStatus.QUEUED
    row.queued_at = now + timedelta(seconds=wait)
    return Delivery(MailStatus.QUEUED, wait)


def _finish(row: OutboxMail, status: MailStatus, now: datetime) -> Delivery:
    # A done mail keeps no text: a failed one too, since its link may still be valid.
    row.status = status
    row.message = None
    if status == MailStatus.SENT:
        row.sent_at = now
    return Delivery(status)


def resend_lost(session: Session, now: datetime) -> list[int]:
    """Queue again the mails whose message seems lost or whose worker died; return their ids."""
    lost = (
        (OutboxMail.status == MailStatus.QUEUED)
        & (OutboxMail.queued_at.is_(None) | (OutboxMail.queued_at < now - LOST_AFTER))
    ) | (
        (OutboxMail.status == MailStatus.SENDING)
        & (OutboxMail.queued_at < now - SENDING_LOST_AFTER)
    )
    ids = list(session.scalars(select(OutboxMail.id).where(lost).order_by(OutboxMail.id)))
    if ids:
        session.execute(
            update(OutboxMail)
            .where(OutboxMail.id.in_(ids), lost)
            .values(status=MailStatus.QUEUED, queued_at=now)
            .execution_options(synchronize_session=False)
        )
        for outbox_id in ids:
            enqueue(session, SEND_MAIL, outbox_id)
    return ids


def last_error(session: Session, outbox_id: int) -> str:
    """Return why a mail's last attempt failed ("" when none did)."""
    return session.scalar(select(OutboxMail.last_error).where(OutboxMail.id == outbox_id)) or ""


def queued_mail_count(session: Session) -> int:
    """Return how many mails wait to be sent (queued, or taken and not sent yet)."""
    undelivered = OutboxMail.status.in_([MailStatus.QUEUED, MailStatus.SENDING])
    return session.scalar(select(func.count()).where(undelivered)) or 0
