"""Replace the secrets a URL can carry (link tokens, invite codes) before it is logged.

A reset, verification or unsubscribe link, an organizer's invitation and a team's invite code
are credentials: whoever reads a log line holding one can use it. Logs keep the route and the
rest of the path, with ``[redacted]`` in place of each secret.
"""

from __future__ import annotations

import logging
import re

REDACTED = "[redacted]"

#: Characters that end a path segment or a query value (also inside a log line).
_END = "/?#&;\\s\"'"
#: A path segment that is a secret, after its route (``/verify/resend`` is a form, no token).
_SECRET_SEGMENT = re.compile(
    rf"(/password/reset/|/verify/(?!resend(?![^{_END}]))|/teams/join/|/unsubscribe/)[^{_END}]+"
)
#: The same inside a percent-encoded value (``/login?next=%2Fteams%2Fjoin%2FCODE``).
_ENCODED_SECRET_SEGMENT = re.compile(
    rf"(%2Fpassword%2Freset%2F|%2Fverify%2F(?!resend(?![^%{_END}]))|%2Fteams%2Fjoin%2F"
    rf"|%2Funsubscribe%2F)"
    rf"[^%{_END}]+",
    re.IGNORECASE,
)
#: Query parameters whose value is a secret.
_SECRET_PARAMETER = re.compile(
    r"([?&;](?:invitation|invite|token|code|key|secret|password)=)[^&#;\s\"']*",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """Return ``text`` (a path, a URL or a request line) with every secret replaced."""
    text = _SECRET_SEGMENT.sub(rf"\1{REDACTED}", text)
    text = _ENCODED_SECRET_SEGMENT.sub(rf"\1{REDACTED}", text)
    return _SECRET_PARAMETER.sub(rf"\1{REDACTED}", text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets in a record's message and string arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; keep it."""
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True
