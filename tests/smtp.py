"""A real SMTP server on loopback (aiosmtpd) that collects the mail it receives."""

from __future__ import annotations

import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests import dispatch

LINK = re.compile(r"https?://\S+")


@dataclass
class Inbox:
    """The messages the server received, in order."""

    messages: list[EmailMessage] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        """Keep a received message (aiosmtpd's handler hook)."""
        parsed = message_from_bytes(envelope.original_content, policy=policy.default)
        with self.lock:
            self.messages.append(parsed)  # type: ignore[arg-type]
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        """Return the messages sent to ``address``."""
        with self.lock:
            return [m for m in self.messages if m["To"] == address]

    def wait_for(self, address: str, count: int = 1, timeout: float = 10.0) -> list[EmailMessage]:
        """Wait until ``count`` messages to ``address`` arrived; return them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.to(address)
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"expected {count} mail(s) to {address}, got {len(self.to(address))}")


def body_of(message: EmailMessage) -> str:
    """Return a plain-text message's body."""
    part = message.get_body(("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def link_in(message: EmailMessage) -> str:
    """Return the (only) link in a message's body."""
    links = LINK.findall(body_of(message))
    assert len(links) == 1, links
    return links[0]


class _Auth:
    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user.encode(), password.encode()

    def __call__(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            self.user,
            self.password,
        )
        return AuthResult(success=ok)


@dataclass
class MailServer:
    """A running server: where it listens and what it received."""

    host: str
    port: int
    inbox: Inbox


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def smtp_server(
    *,
    tls: ssl.SSLContext | None = None,
    starttls: ssl.SSLContext | None = None,
    auth: tuple[str, str] | None = None,
) -> Iterator[MailServer]:
    """Run an SMTP server on a free loopback port: plain, STARTTLS-only or implicit TLS (SMTPS)."""
    inbox = Inbox()
    kwargs: dict[str, Any] = {}
    if starttls is not None:
        kwargs.update(tls_context=starttls, require_starttls=True)
    if auth is not None:  # over TLS only (aiosmtpd's default, and the sane one)
        kwargs.update(authenticator=_Auth(*auth), auth_required=True)
    controller = Controller(
        inbox, hostname="127.0.0.1", port=_free_port(), ssl_context=tls, **kwargs
    )
    controller.start()
    try:
        yield MailServer("127.0.0.1", controller.port, inbox)
    finally:
        # Mail still on its way finishes first: a server stopped under a client leaves sockets.
        dispatch.flush()
        controller.stop()


@dataclass
class Certificates:
    """A test CA's bundle (for the client) and a server context with a certificate it signed."""

    cafile: Path
    server: ssl.SSLContext


def certificates(directory: Path) -> Certificates:
    """Make a throwaway CA and a certificate for 127.0.0.1 (trustme)."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(server)
    cafile = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(cafile))
    return Certificates(cafile, server)
