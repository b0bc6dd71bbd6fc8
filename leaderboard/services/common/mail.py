"""Send plain-text mail through SMTP (plain, STARTTLS or SMTPS) or to standard error."""

from __future__ import annotations

import logging
import re
import smtplib
import ssl
import sys
import threading
from dataclasses import dataclass
from email import message_from_string, policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import parse_qs, unquote, urlsplit

from leaderboard.services.common.errors import DomainError
from leaderboard.services.common.text import header_text

log = logging.getLogger("leaderboard.mail")

#: Seconds an SMTP connection may take before a mail counts as failed.
TIMEOUT = 15.0

#: One address: a local part without quoting or separators, and a dotted domain.
_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(\.[\w-]+)+")
#: One console mail at a time, so that two threads' mails do not interleave.
_console_lock = threading.Lock()


NO_BASE_URL = (
    "This server has no base URL configured, so it cannot mail links: the organizer must set "
    "LEADERBOARD_BASE_URL to the site's public address (e.g. https://lb.example.org) and "
    "restart it. Nothing was sent."
)


class NoBaseUrl(DomainError):
    """Links in mail need a configured base URL, and none is set."""

    status = 503


class MailError(Exception):
    """A mail could not be sent; the message says why."""


@dataclass(frozen=True)
class Transport:
    """Where mail goes, read from ``LEADERBOARD_MAIL_URL``."""

    kind: str  # "console", "smtp", "smtps" or "null" (built, then dropped)
    host: str = ""
    port: int = 0
    username: str = ""
    password: str = ""
    starttls: bool = False
    #: A CA bundle to trust for the server's certificate (a private CA); empty: the system's.
    cafile: str = ""

    @classmethod
    def parse(cls, url: str) -> Transport:
        """Read ``console``, ``smtp://user:pass@host:port[?starttls=1]`` or ``smtps://…``."""
        if url.strip() in ("", "console"):
            return cls("console")
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in ("smtp", "smtps") or not parts.hostname:
            raise MailError("LEADERBOARD_MAIL_URL must be console, smtp://HOST[:PORT] or smtps://…")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        starttls = query.get("starttls", "0").lower() in ("1", "true", "yes", "on")
        try:
            port = parts.port
        except ValueError:
            raise MailError("LEADERBOARD_MAIL_URL has a port that is not a number.") from None
        default_port = 465 if scheme == "smtps" else (587 if starttls else 25)
        return cls(
            kind=scheme,
            host=parts.hostname,
            port=port or default_port,
            username=unquote(parts.username or ""),
            password=unquote(parts.password or ""),
            starttls=starttls and scheme == "smtp",
            cafile=query.get("cafile", ""),
        )

    def tls_context(self) -> ssl.SSLContext:
        """Return a verifying TLS context (trusting ``cafile`` where one is given)."""
        return ssl.create_default_context(cafile=self.cafile or None)


def is_plain_address(address: str) -> bool:
    """Return whether ``address`` is one plain e-mail address (nothing a header reads as more)."""
    return _ADDRESS.fullmatch(address) is not None and ".." not in address


def compose(sender: str, to: str, subject: str, body: str) -> EmailMessage:
    """Build a plain-text message to one plain address."""
    if not is_plain_address(to):
        raise MailError(f"{to!r} is not a plain e-mail address; nothing was sent.")
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    # A name stored before the entry checks could hold a line break; it must not stop the mail.
    message["Subject"] = header_text(subject)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    message.set_content(body)
    return message


def send(transport: Transport, message: EmailMessage) -> None:
    """Deliver a message now; raise MailError when it cannot be sent."""
    if transport.kind == "null":
        return
    if transport.kind == "console":
        write_to_console(message)
        return
    try:
        if transport.kind == "smtps":
            with smtplib.SMTP_SSL(
                transport.host, transport.port, timeout=TIMEOUT, context=transport.tls_context()
            ) as smtp:
                _deliver(smtp, transport, message)
        else:
            with smtplib.SMTP(transport.host, transport.port, timeout=TIMEOUT) as smtp:
                if transport.starttls:
                    smtp.starttls(context=transport.tls_context())
                _deliver(smtp, transport, message)
    except (OSError, smtplib.SMTPException) as exc:
        raise MailError(
            f"could not send mail via {transport.host}:{transport.port}: {exc}"
        ) from exc


def console_text(message: EmailMessage) -> str:
    """Return a message as the console transport shows it: headers, then the decoded body."""
    # Decoded, so that a long link reads whole (on the wire it is quoted-printable).
    headers = "".join(f"{k}: {v}\n" for k, v in message.items())
    # A mail with an HTML alternative shows its plain-text part.
    part = message.get_body(("plain",)) if message.is_multipart() else message
    body = str(part.get_content()) if part is not None else ""
    if not body.endswith("\n"):
        body += "\n"
    return (
        "----- mail (console transport: set LEADERBOARD_MAIL_URL to send it) -----\n"
        f"{headers}\n{body}----- end of mail -----\n"
    )


def write_to_console(message: EmailMessage) -> None:
    """Write a whole message to standard error at once, flushed, for whoever runs the server."""
    # Straight to the stream, not through a logger: under gunicorn or the command line no
    # handler would show an info line, and a fresh install must show its mail.
    text = console_text(message)
    with _console_lock:
        sys.stderr.write(text)
        sys.stderr.flush()


def _deliver(smtp: smtplib.SMTP, transport: Transport, message: EmailMessage) -> None:
    if transport.username:
        smtp.login(transport.username, transport.password)
    # The one recipient, not whatever the headers could be read as.
    smtp.send_message(message, to_addrs=[str(message["To"])])


def serialize(message: EmailMessage, *, line_length: int = 78) -> str:
    """Return a message as text for the queue (``parse`` reads it back).

    A header holding a long link (List-Unsubscribe) needs a longer ``line_length`` (at most
    998): folded at 78, the link would be encoded, which mail clients do not read.
    """
    return message.as_string(policy=policy.SMTP.clone(max_line_length=line_length))


def parse(text: str) -> EmailMessage:
    """Read back a message that ``serialize`` wrote."""
    # Headers as written: refolded at 78, a long List-Unsubscribe link would get encoded.
    message = message_from_string(text, policy=policy.default.clone(refold_source="none"))
    if not isinstance(message, EmailMessage):  # the default policy always builds one
        raise MailError("a queued mail could not be read back")
    return message
