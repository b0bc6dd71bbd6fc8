"""Fixtures of the web tests: the loopback SMTP server the account tests mail through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import dispatch
from tests.smtp import MailServer, smtp_server


@pytest.fixture
def server() -> Iterator[MailServer]:
    """Run an SMTP server on loopback; mail still being sent is flushed before it stops."""
    with smtp_server() as running:
        yield running
    dispatch.flush()
